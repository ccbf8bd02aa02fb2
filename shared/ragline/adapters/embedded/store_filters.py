"""A :class:`~ragline.domain.filters.ReadView` as SQL over the SQLite store's ``chunk_terms`` table.

Each served chunk row carries ``terms``: a JSON list of its attribute terms
(:func:`~ragline.domain.attributes.attribute_terms`) and its reader terms, the latter tagged ``@``
(``@*``, ``@u:ann``, ``@g:hr``; no attribute key starts with ``@``, and every attribute range and
prefix starts with ``key=``, so the two kinds never meet). Triggers keep ``chunk_terms`` (scope,
term, chunk rowid) equal to those lists, so a filter leaf is an index range scan over one scope's
terms: a filter's plan (:func:`~ragline.domain.filters.plan`) becomes ``rowid IN (…)`` conditions
joined by ``AND``/``OR``/``NOT``. TEXT compares with the BINARY collation, i.e. by UTF-8 bytes: the
order a :class:`~ragline.domain.filters.Range` means.

Rows written before terms existed get ``["@*"]`` when the column is added (:func:`migrate`): open to
everyone, without attributes, as their stored metadata reads.
"""

from __future__ import annotations

import json
import sqlite3

from ragline.domain.access import stored_reader_terms
from ragline.domain.attributes import attribute_terms
from ragline.domain.filters import AllOf, AnyOf, Filter, Not, Plan, Prefix, Range, ReadView, Terms, plan
from ragline.domain.models import ChunkMetadata

READER_TAG = "@"
EVERYONE_TERMS = '["@*"]'

TRIGGERS = """
CREATE TRIGGER IF NOT EXISTS chunk_terms_insert AFTER INSERT ON chunks BEGIN
    INSERT OR IGNORE INTO chunk_terms (scope_token, term, chunk)
    SELECT new.scope_token, value, new.rowid FROM json_each(new.terms);
END;
CREATE TRIGGER IF NOT EXISTS chunk_terms_update AFTER UPDATE OF terms, scope_token ON chunks BEGIN
    DELETE FROM chunk_terms WHERE chunk = old.rowid;
    INSERT OR IGNORE INTO chunk_terms (scope_token, term, chunk)
    SELECT new.scope_token, value, new.rowid FROM json_each(new.terms);
END;
CREATE TRIGGER IF NOT EXISTS chunk_terms_delete AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_terms WHERE chunk = old.rowid;
END;
"""


def migrate(conn: sqlite3.Connection) -> None:
    """Give a file written before filters its ``terms`` columns and their index (once, atomically;
    idempotent), then the triggers."""
    if not _has_terms(conn):
        conn.execute("BEGIN IMMEDIATE")
        try:
            if not _has_terms(conn):  # another process may have migrated meanwhile
                for table in ("chunks", "staged_chunks"):
                    conn.execute(
                        f"ALTER TABLE {table} ADD COLUMN terms TEXT NOT NULL DEFAULT '{EVERYONE_TERMS}'"
                    )
                conn.execute(
                    "INSERT OR IGNORE INTO chunk_terms (scope_token, term, chunk)"
                    " SELECT c.scope_token, j.value, c.rowid FROM chunks c, json_each(c.terms) j"
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    conn.executescript(TRIGGERS)


def _has_terms(conn: sqlite3.Connection) -> bool:
    return any(row[1] == "terms" for row in conn.execute("PRAGMA table_info(chunks)"))


def chunk_terms(metadata: ChunkMetadata) -> str:
    """The ``terms`` a chunk row carries (JSON)."""
    readers = [READER_TAG + r for r in stored_reader_terms(metadata.readers)]
    return json.dumps([*attribute_terms(metadata.attributes), *readers], ensure_ascii=False)


def admitted(view: ReadView | None, where: Filter | None, token: str) -> tuple[str, list[object]] | None:
    """A condition on ``c.rowid`` (a ``chunks c`` row) and its parameters, holding for exactly the
    chunks ``view`` narrowed by ``where`` admits; None when it admits everything."""
    view = (view or ReadView()).narrowed(where)
    parts: list[str] = []
    params: list[object] = []
    if view.where is not None:
        parts.append(_compile(plan(view.where), token, params))
    if view.readers is not None:
        readers = tuple(sorted(READER_TAG + r for r in view.readers))
        parts.append(_compile(Terms(readers), token, params))
    if not parts:
        return None
    return " AND ".join(parts), params


def _leaf(condition: str, token: str, params: list[object], values: list[object]) -> str:
    params += [token, *values]
    return f"c.rowid IN (SELECT chunk FROM chunk_terms WHERE scope_token=? AND {condition})"


def _compile(p: Plan, token: str, params: list[object]) -> str:
    if isinstance(p, AllOf):
        return "(" + " AND ".join(_compile(x, token, params) for x in p.parts) + ")"
    if isinstance(p, AnyOf):
        return "(" + " OR ".join(_compile(x, token, params) for x in p.parts) + ")"
    if isinstance(p, Not):
        return f"NOT {_compile(p.part, token, params)}"
    if isinstance(p, Terms):
        if not p.terms:
            return "0"
        return _leaf(f"term IN ({','.join('?' * len(p.terms))})", token, params, list(p.terms))
    if isinstance(p, Prefix):
        upper = successor(p.prefix)
        if upper is None:
            return _leaf("term >= ?", token, params, [p.prefix])
        return _leaf("term >= ? AND term < ?", token, params, [p.prefix, upper])
    assert isinstance(p, Range)
    low, high = (">=" if p.include_lower else ">"), ("<=" if p.include_upper else "<")
    return _leaf(f"term {low} ? AND term {high} ?", token, params, [p.lower, p.upper])


def successor(prefix: str) -> str | None:
    """The least string above every string starting with ``prefix`` (code-point order, which is
    UTF-8 byte order): its last character that can grow, grown, the rest dropped; None if none can."""
    chars = list(prefix)
    while chars:
        last = ord(chars.pop())
        if last < 0x10FFFF:
            nxt = last + 1
            if 0xD800 <= nxt <= 0xDFFF:  # surrogates are no characters of a stored string
                nxt = 0xE000
            return "".join(chars) + chr(nxt)
    return None
