"""The SQLite store's reads of a few rows straight from SQL: counts, a document's neighbours and
vectors, and the chunks a search ranked.

Searches rank over a scope's in-memory snapshot (:mod:`.store_ranking`); these reads go to the
table itself, so what they return is the rows as they are now. A view's filter, where one applies,
is part of the SQL (:func:`~.store_filters.sql_condition`). Each function runs under the caller's
lock (the provider's) and opens no transaction; those returning rows return them as fetched, so the
caller turns them into chunks (:func:`~.store_rows.chunk_from_row`) after it let the lock go.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ragline.adapters.embedded.store_filters import sql_condition
from ragline.adapters.embedded.store_rows import COLUMNS, OF_DOCUMENT, ScopeKey
from ragline.domain.filters import Plan

Row = tuple[Any, ...]
"""A row as fetched: :data:`~.store_rows.COLUMNS`, or ``(text, embedding)`` of a document's vectors."""


def count_rows(
    conn: sqlite3.Connection, key: ScopeKey, token: str, document_id: str | None, narrowed: Plan | None
) -> int:
    """A document's served chunks (those ``narrowed`` admits, if given); without a document, the
    scope's every stored chunk, staged versions too (a view's count of a whole scope is the
    store's, over its snapshot)."""
    args: list[object] = [*key]
    if narrowed is not None:
        cond, params = sql_condition(narrowed, token)
        sql = f"SELECT count(*) FROM chunks c WHERE {OF_DOCUMENT} AND {cond}"
        return int(conn.execute(sql, [*args, document_id, *params]).fetchone()[0])
    if document_id is not None:
        sql = f"SELECT count(*) FROM chunks WHERE {OF_DOCUMENT}"
        return int(conn.execute(sql, [*args, document_id]).fetchone()[0])
    served = conn.execute("SELECT count(*) FROM chunks WHERE tenant_id=? AND namespace_id=?", args)
    staged = conn.execute("SELECT count(*) FROM staged_chunks WHERE tenant_id=? AND namespace_id=?", args)
    return int(served.fetchone()[0]) + int(staged.fetchone()[0])


def neighbor_rows(
    conn: sqlite3.Connection,
    key: ScopeKey,
    token: str,
    narrowed: Plan | None,
    document_id: str,
    first: int,
    last: int,
) -> list[Row]:
    """The document's served rows numbered ``first`` to ``last`` that ``narrowed`` admits, in order."""
    cond, params = ("1", []) if narrowed is None else sql_condition(narrowed, token)
    return conn.execute(
        f"SELECT {COLUMNS} FROM chunks c WHERE c.tenant_id=? AND c.namespace_id=?"
        f" AND c.document_id=? AND c.seq BETWEEN ? AND ? AND {cond} ORDER BY c.seq",
        (*key, document_id, first, last, *params),
    ).fetchall()


def document_vectors(conn: sqlite3.Connection, key: ScopeKey, document_id: str) -> list[Row]:
    """``(text, embedding bytes)`` of the document's served and staged rows alike: a retry of a
    version reuses what its crashed attempt embedded."""
    of_document = (*key, document_id)
    return conn.execute(
        f"SELECT text, embedding FROM chunks WHERE {OF_DOCUMENT}"
        f" UNION ALL SELECT text, embedding FROM staged_chunks WHERE {OF_DOCUMENT}",
        (*of_document, *of_document),
    ).fetchall()


def rows_by_rowid(conn: sqlite3.Connection, key: ScopeKey, rowids: list[int]) -> list[Row]:
    """The scope's served rows of these rowids (those gone since are absent)."""
    return conn.execute(
        # `+` keeps SQLite on rowid lookups: left to itself it scans the scope's whole
        # (tenant, namespace) index range, ~50 ms per search at 100k chunks.
        f"SELECT {COLUMNS} FROM chunks c WHERE c.rowid IN ({','.join('?' * len(rowids))})"
        " AND +c.tenant_id=? AND +c.namespace_id=?",
        [*rowids, *key],
    ).fetchall()
