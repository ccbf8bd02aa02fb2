"""The SQLite store's writes and when they become visible: fences, staged versions, publishes, deletes.

A document's ``fences`` row holds its published generation. A write at that generation goes to
``chunks`` in place (served at once); a write of a newer version goes to ``staged_chunks``, where no
reader looks, until :func:`publish_documents` raises the fence and swaps the document's served rows
for the staged ones in one transaction; a write of an older one is refused (``Superseded``). Every
transaction that changes served rows also bumps the scope's generation and logs the documents it
touched (:func:`bump_scope`), which is how every process's in-memory search structures learn what to
re-read (:mod:`.scope_index`).

Each function takes the connection and runs under the caller's lock (the provider's); those that
open a transaction (``BEGIN IMMEDIATE``) commit it or roll it back before they return.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from ragline import errors
from ragline.adapters.embedded.sqlite import translate
from ragline.adapters.embedded.store_rows import OF_DOCUMENT, ScopeKey

WRITE_SERVED = (
    "INSERT INTO chunks (tenant_id, namespace_id, scope_token, document_id, seq, filename,"
    " text, metadata, embedding, terms, generation) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
    " ON CONFLICT(tenant_id, namespace_id, document_id, seq) DO UPDATE SET"
    " filename=excluded.filename, text=excluded.text, metadata=excluded.metadata,"
    " embedding=excluded.embedding, terms=excluded.terms, generation=excluded.generation"
    " WHERE excluded.generation >= chunks.generation"
)
"""A write at the served generation: in place (direct changes only are counted, not FTS triggers)."""
WRITE_STAGED = (
    "INSERT INTO staged_chunks (tenant_id, namespace_id, document_id, seq, filename, text, metadata,"
    " embedding, terms, generation) VALUES (?,?,?,?,?,?,?,?,?,?)"
    " ON CONFLICT(tenant_id, namespace_id, document_id, generation, seq) DO UPDATE SET"
    " filename=excluded.filename, text=excluded.text, metadata=excluded.metadata,"
    " embedding=excluded.embedding, terms=excluded.terms"
)
"""A newer version's rows, kept apart from the served ones until its publish."""
PUBLISH_STAGED = (
    "INSERT INTO chunks (tenant_id, namespace_id, scope_token, document_id, seq, filename, text, metadata,"
    " embedding, terms, generation) SELECT tenant_id, namespace_id, ?, document_id, seq, filename, text,"
    " metadata, embedding, terms, generation FROM staged_chunks"
    " WHERE tenant_id=? AND namespace_id=? AND document_id=? AND generation=? ORDER BY seq"
)
"""A version's staged rows become its served rows (after the document's older rows are deleted)."""
LOG_PRUNE_EVERY = 256
"""Scope generations between two prunes of the scope's log (:func:`bump_scope`)."""
EVERY_GENERATION = 2**62
"""Above any generation a document is written at: ``generation < EVERY_GENERATION`` is every row."""


def write_chunks(
    conn: sqlite3.Connection, key: ScopeKey, rows: list[tuple[str, tuple[object, ...]]], generation: int
) -> int:
    """``(document_id, row)`` pairs (:func:`~.store_rows.chunk_row`) written at ``generation``, in
    one transaction: served in place where it is the document's published generation, staged where
    it is newer; any document already published past it refuses the whole write (``Superseded``)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        # the fences are read and the rows written in one transaction
        fences = {d: read_fence(conn, key, d) for d in {d for d, _ in rows}}
        for document_id, fence in fences.items():
            if fence > generation:
                raise errors.Superseded(
                    "a newer version of the document was published", document_id=document_id,
                    generation=generation, published=fence,
                )  # fmt: skip
        served = [(*r, generation) for d, r in rows if fences[d] == generation]
        staged = [(*r[:2], *r[3:], generation) for d, r in rows if fences[d] < generation]
        written = 0
        if served:
            written += conn.executemany(WRITE_SERVED, served).rowcount
            bump_scope(conn, key, {d for d, _ in rows if fences[d] == generation})
        if staged:
            written += conn.executemany(WRITE_STAGED, staged).rowcount
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return written


def read_fence(conn: sqlite3.Connection, key: ScopeKey, document_id: str) -> int:
    """The document's published generation (0: never published)."""
    row = conn.execute(
        "SELECT generation FROM fences WHERE tenant_id=? AND namespace_id=? AND document_id=?",
        (*key, document_id),
    ).fetchone()
    return int(row[0]) if row else 0


def publish_documents(
    conn: sqlite3.Connection, key: ScopeKey, token: str, generations: Mapping[str, int]
) -> dict[str, bool | errors.RaglineError]:
    """Every document's :func:`publish_document`, in one transaction (one scope generation for all).

    Each document's publish is a savepoint of its own: a statement of one that fails undoes that
    document's alone (its outcome is the error), the others commit; a failure of the transaction
    itself (its commit, or an error after which SQLite rolled it back) undoes every one, and raises.
    """
    outcome: dict[str, bool | errors.RaglineError] = {}
    conn.execute("BEGIN IMMEDIATE")
    try:
        changed = set()
        for d, g in generations.items():
            conn.execute("SAVEPOINT publish_one")
            try:
                moved = publish_document(conn, key, token, d, g)
            except sqlite3.Error as exc:
                if not conn.in_transaction:  # SQLite undid it all itself (disk full, I/O)
                    raise
                conn.execute("ROLLBACK TO publish_one")
                failed = outcome[d] = translate(exc)
                failed.__cause__ = exc  # SQLite's own text, for the logs
                moved = None
            else:
                outcome[d] = moved is not None
            conn.execute("RELEASE publish_one")
            if moved:
                changed.add(d)
        if changed:
            bump_scope(conn, key, changed)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return outcome


def publish_document(
    conn: sqlite3.Connection, key: ScopeKey, token: str, document_id: str, generation: int
) -> bool | None:
    """One document's publish inside the caller's transaction: ``None`` when refused (published past
    ``generation`` already), else whether its served rows changed.

    The fence rises to ``generation`` and the served rows become exactly the version staged at it
    (none: a delete); staged rows up to it (a crashed or overtaken writer's orphans) go. Publishing
    the served generation again only sweeps.
    """
    of_document = (*key, document_id)
    fence = read_fence(conn, key, document_id)
    if fence > generation:
        return None
    conn.execute(
        "INSERT INTO fences VALUES (?,?,?,?) ON CONFLICT(tenant_id, namespace_id, document_id)"
        " DO UPDATE SET generation=excluded.generation",
        (*of_document, generation),
    )
    changed = conn.execute(
        f"DELETE FROM chunks WHERE {OF_DOCUMENT} AND generation < ?",
        (*of_document, generation if fence == generation else EVERY_GENERATION),
    ).rowcount
    if fence < generation:
        changed += conn.execute(PUBLISH_STAGED, (token, *of_document, generation)).rowcount
    conn.execute(
        f"DELETE FROM staged_chunks WHERE {OF_DOCUMENT} AND generation <= ?", (*of_document, generation)
    )
    return bool(changed)


def delete_rows(
    conn: sqlite3.Connection, key: ScopeKey, document_id: str, condition: str, generation: int
) -> int:
    """Served and staged rows of the document matching ``condition`` on their generation (one
    ``?``, bound to ``generation``), in one transaction."""
    of_document = (*key, document_id)
    conn.execute("BEGIN IMMEDIATE")
    try:
        served = conn.execute(
            f"DELETE FROM chunks WHERE {OF_DOCUMENT} AND {condition}", (*of_document, generation)
        ).rowcount
        staged = conn.execute(
            f"DELETE FROM staged_chunks WHERE {OF_DOCUMENT} AND {condition}", (*of_document, generation)
        ).rowcount
        if served:
            bump_scope(conn, key, {document_id})
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return served + staged


def purge_tenant_rows(conn: sqlite3.Connection, tenant_id: str) -> int:
    """Every row of every scope of the tenant, in one transaction: the chunks served and staged (their
    number is returned), and the fences and scope counters that only served them."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        cur = conn.execute("DELETE FROM chunks WHERE tenant_id=?", (tenant_id,))
        staged = conn.execute("DELETE FROM staged_chunks WHERE tenant_id=?", (tenant_id,)).rowcount
        conn.execute("DELETE FROM fences WHERE tenant_id=?", (tenant_id,))
        # The scopes' cache counters go too: a deleted tenant's scopes are never written again.
        conn.execute("DELETE FROM scopes WHERE tenant_id=?", (tenant_id,))
        conn.execute("DELETE FROM scope_log WHERE tenant_id=?", (tenant_id,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return cur.rowcount + staged


def bump_scope(conn: sqlite3.Connection, key: ScopeKey, document_ids: set[str]) -> None:
    """Move the scope's generation and log which documents moved it (same transaction).

    Appending keeps a write to one b-tree insert; every :data:`LOG_PRUNE_EVERY` generations the
    entries a later one for the same document supersedes are deleted (readers need only each
    document's latest), so the log stays about one row per document.
    """
    conn.execute(
        "INSERT INTO scopes (tenant_id, namespace_id, generation) VALUES (?,?,1)"
        " ON CONFLICT(tenant_id, namespace_id) DO UPDATE SET generation=generation+1",
        key,
    )
    (generation,) = conn.execute(
        "SELECT generation FROM scopes WHERE tenant_id=? AND namespace_id=?", key
    ).fetchone()
    conn.executemany(
        "INSERT INTO scope_log (tenant_id, namespace_id, generation, document_id) VALUES (?,?,?,?)",
        [(*key, generation, document_id) for document_id in sorted(document_ids)],
    )
    if generation % LOG_PRUNE_EVERY == 0:
        conn.execute(
            "DELETE FROM scope_log WHERE tenant_id=? AND namespace_id=?"
            " AND (document_id, generation) NOT IN (SELECT document_id, max(generation) FROM scope_log"
            " WHERE tenant_id=? AND namespace_id=? GROUP BY document_id)",
            (*key, *key),
        )
