"""The SQLite store's schema (kept apart from the adapter's logic)."""

from __future__ import annotations

SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    scope_token TEXT NOT NULL,
    document_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    filename TEXT NOT NULL,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL,
    embedding BLOB NOT NULL,
    generation INTEGER NOT NULL DEFAULT 0,
    UNIQUE (tenant_id, namespace_id, document_id, seq)
);
CREATE TABLE IF NOT EXISTS fences (
    tenant_id TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, namespace_id, document_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS scopes (
    tenant_id TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, namespace_id)
);
-- The scope generation at which each document's chunks last changed: a reader holding a scope's
-- structures at generation g re-reads only the documents changed after g.
CREATE TABLE IF NOT EXISTS scope_changes (
    tenant_id TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, namespace_id, document_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS scope_changes_by_generation ON scope_changes (tenant_id, namespace_id, generation);
"""
