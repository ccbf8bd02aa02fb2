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
    terms TEXT NOT NULL DEFAULT '["@*"]',
    UNIQUE (tenant_id, namespace_id, document_id, seq)
);
-- A version written above its document's published generation waits here, invisible to every
-- read, until its publish moves it into ``chunks`` (one transaction) or a discard or sweep drops it.
CREATE TABLE IF NOT EXISTS staged_chunks (
    tenant_id TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    filename TEXT NOT NULL,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL,
    embedding BLOB NOT NULL,
    terms TEXT NOT NULL DEFAULT '["@*"]',
    PRIMARY KEY (tenant_id, namespace_id, document_id, generation, seq)
);
-- Each served chunk's attribute and reader terms (its ``terms`` JSON list, kept equal by triggers:
-- see store_filters.py), so a filter is index range scans over one scope's terms.
CREATE TABLE IF NOT EXISTS chunk_terms (
    scope_token TEXT NOT NULL,
    term TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    PRIMARY KEY (scope_token, term, chunk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS chunk_terms_by_chunk ON chunk_terms (chunk);
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
-- Which documents each generation of a scope changed, appended by the write that made it: a reader
-- holding a scope's structures at generation g re-reads only the documents logged after g. Entries
-- a later one for the same document supersedes are pruned now and then (see the store's _bump).
CREATE TABLE IF NOT EXISTS scope_log (
    tenant_id TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    document_id TEXT NOT NULL,
    PRIMARY KEY (tenant_id, namespace_id, generation, document_id)
) WITHOUT ROWID;
"""
