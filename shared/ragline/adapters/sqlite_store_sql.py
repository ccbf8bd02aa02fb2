"""Schema and query text of the SQLite store (kept apart from the adapter's logic)."""

from __future__ import annotations

import re

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
CREATE TABLE IF NOT EXISTS scopes (
    tenant_id TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, namespace_id)
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    scope_token, text, content='chunks', content_rowid='rowid', tokenize='porter unicode61'
);
INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('rank', 'bm25(0.0, 1.0)');
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, scope_token, text) VALUES (new.rowid, new.scope_token, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, scope_token, text)
    VALUES ('delete', old.rowid, old.scope_token, old.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_au AFTER UPDATE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, scope_token, text)
    VALUES ('delete', old.rowid, old.scope_token, old.text);
    INSERT INTO chunks_fts(rowid, scope_token, text) VALUES (new.rowid, new.scope_token, new.text);
END;
"""

# Lucene's English stop set (what OpenSearch's `english` analyzer drops), so both stores match alike.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)
_WORD = re.compile(r"\w+", re.UNICODE)


def fts_query(text: str) -> str:
    """A free-text query as an FTS5 OR of quoted terms (FTS5's default is AND, which is not BM25)."""
    terms = dict.fromkeys(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS)
    return " OR ".join(f'"{t}"' for t in terms)
