"""A :class:`~ragline.domain.filters.ReadView` as SQL over the SQLite store's ``chunk_terms`` table.

Each served chunk row carries ``terms``: a JSON list of its attribute terms
(:func:`~ragline.domain.attributes.attribute_terms`) and its reader terms, the latter tagged ``@``
(``@*``, ``@u:ann``, ``@g:hr``; no attribute key starts with ``@``, and every attribute range and
prefix starts with ``key=``, so the two kinds never meet). Triggers keep ``chunk_terms`` (scope,
term, chunk rowid) equal to those lists, so a filter leaf is an index range scan over one scope's
terms. A search asks SQL for each leaf's rows (``SELECT chunk FROM chunk_terms WHERE scope_token=?
AND term …``) and joins them with ``AND``/``OR``/``NOT`` as masks over the scope's rows (numpy); a
read of a few rows (neighbours, a document's count) puts the whole plan in its SQL as ``EXISTS``
lookups of the row's own terms. TEXT compares with the BINARY collation, i.e. by UTF-8 bytes: the
order a :class:`~ragline.domain.filters.Range` means.

Rows written before terms existed get ``["@*"]`` when the column is added (:func:`migrate`): open to
everyone, without attributes, as their stored metadata reads.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from ragline.domain.access import EVERYONE, stored_reader_terms
from ragline.domain.attributes import attribute_terms
from ragline.domain.filters import AllOf, AnyOf, Filter, Not, Plan, Prefix, Range, ReadView, Terms, plan
from ragline.domain.models import ChunkMetadata, SearchHit

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


def admitted(view: ReadView | None, where: Filter | None) -> Plan | None:
    """The plan of what ``view`` narrowed by ``where`` admits, readers included (as a ``Terms`` leaf
    of tagged reader terms); None when it admits everything."""
    view = (view or ReadView()).narrowed(where)
    parts: list[Plan] = []
    if view.where is not None:
        parts.append(plan(view.where))
    if view.readers is not None:
        # everyone's term apart: the scan most searches share (kept per scope snapshot), the user's
        # own terms (few chunks each) another
        everyone = READER_TAG + EVERYONE
        own = tuple(sorted(READER_TAG + r for r in view.readers if r != EVERYONE))
        leaves = ([Terms((everyone,))] if EVERYONE in view.readers else []) + ([Terms(own)] if own else [])
        parts.append(AnyOf(tuple(leaves)) if len(leaves) > 1 else leaves[0] if leaves else Terms(()))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else AllOf(tuple(parts))


def leaf_condition(p: Terms | Prefix | Range) -> tuple[str, tuple[object, ...]]:
    """One leaf as a condition on ``chunk_terms.term`` and its parameters (index range scans)."""
    if isinstance(p, Terms):
        return f"term IN ({','.join('?' * len(p.terms))})", p.terms
    if isinstance(p, Prefix):
        upper = successor(p.prefix)
        return ("term >= ?", (p.prefix,)) if upper is None else ("term >= ? AND term < ?", (p.prefix, upper))
    low, high = (">=" if p.include_lower else ">"), ("<=" if p.include_upper else "<")
    return f"term {low} ? AND term {high} ?", (p.lower, p.upper)


def sql_condition(p: Plan, token: str) -> tuple[str, list[object]]:
    """``p`` as a condition on a ``chunks c`` row (for reads of a few rows: each leaf looks up the
    row's own terms)."""
    params: list[object] = []
    return _sql(p, token, params), params


def _sql(p: Plan, token: str, params: list[object]) -> str:
    if isinstance(p, AllOf):
        return "(" + " AND ".join(_sql(x, token, params) for x in p.parts) + ")"
    if isinstance(p, AnyOf):
        return "(" + " OR ".join(_sql(x, token, params) for x in p.parts) + ")"
    if isinstance(p, Not):
        return f"NOT {_sql(p.part, token, params)}"
    if isinstance(p, Terms) and not p.terms:
        return "0"
    condition, values = leaf_condition(p)
    params += [token, *values]
    return f"EXISTS (SELECT 1 FROM chunk_terms t WHERE t.chunk=c.rowid AND t.scope_token=? AND t.{condition})"


def evaluate(p: Plan, leaf: Callable[[Terms | Prefix | Range], NDArray[np.bool_]]) -> NDArray[np.bool_]:
    """``p`` over a scope's rows as a mask, ``leaf`` giving each leaf's rows (for searches: one index
    range scan per leaf, the logic in numpy over the whole scope)."""
    if isinstance(p, AllOf | AnyOf):
        masks = [evaluate(x, leaf) for x in p.parts]
        out: NDArray[np.bool_] = (np.logical_and if isinstance(p, AllOf) else np.logical_or).reduce(masks)
        return out
    if isinstance(p, Not):
        return ~evaluate(p.part, leaf)
    return leaf(p)


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


def leaf_rows(
    conn: sqlite3.Connection, token: str, rowids: NDArray[np.int64], leaf: Terms | Prefix | Range
) -> NDArray[np.bool_]:
    """Which of a scope's ``rowids`` hold a term ``leaf`` tests for: one index range scan."""
    if isinstance(leaf, Terms) and not leaf.terms:
        return np.zeros(len(rowids), dtype=bool)
    condition, values = leaf_condition(leaf)
    sql = f"SELECT chunk FROM chunk_terms WHERE scope_token=? AND {condition}"
    rows = conn.execute(sql, [token, *values]).fetchall()
    return np.isin(rowids, np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)))


def vetted(hits: list[SearchHit], view: ReadView | None, where: Filter | None) -> list[SearchHit]:
    """``hits`` whose chunk, as read, the view narrowed by ``where`` admits: the filter ran inside
    the search, and this second look at each returned chunk only matters when a row was rewritten
    between the two (a race may then drop a hit; it can never return one the user may not read)."""
    if view is None and where is None:
        return hits
    rule = (view or ReadView()).narrowed(where)
    return [h for h in hits if rule.admits(h.chunk.metadata.attributes, h.chunk.metadata.readers)]
