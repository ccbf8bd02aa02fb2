"""Embedded :class:`~ragline.ports.VectorStore`: one SQLite file; exact cosine and BM25 in numpy.

Every scope (tenant, namespace) shares the file; SQLite is the durable store, and each scope's search
structures live in memory, built from that scope's rows only, so scoping is enforced here, not by
callers:

- semantic search runs over a contiguous float32 matrix holding only this scope's vectors, so a query
  is one matrix-vector product;
- keyword search runs over a BM25 inverted index of only this scope's chunks
  (:mod:`ragline.adapters.embedded.bm25`), so no other scope's text can match or shift its statistics.

Both follow the scope's ``generation``, bumped in the same transaction as every write (also by other
processes), which also logs the documents it touched (``scope_log``): when the generation has
moved, only those documents' rows are read and folded in (:mod:`ragline.adapters.embedded.scope_index`),
and the scope is read whole only the first time or when the record cannot vouch for every write
since. (The ``scope_token`` column is kept for files written by older versions.)
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragline import errors
from ragline.adapters.embedded.bm25 import Bm25Index
from ragline.adapters.embedded.scope_index import ScopeIndex, read_scope, read_texts
from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite, translate
from ragline.adapters.embedded.store_filters import (
    admitted,
    chunk_terms,
    evaluate,
    leaf_rows,
    migrate,
    sql_condition,
    vetted,
)
from ragline.adapters.embedded.store_schema import SCHEMA
from ragline.domain.filters import Prefix, Range, ReadView, Terms
from ragline.domain.fusion import fuse_query
from ragline.domain.models import (
    Chunk,
    ChunkMetadata,
    HybridQuery,
    KeywordQuery,
    MetadataFilter,
    ScoreBreakdown,
    SearchHit,
    SearchQuery,
    SemanticQuery,
    StoreCapabilities,
    TenantScope,
    neighbor_window,
)

_COLUMNS = "c.rowid, c.document_id, c.seq, c.text, c.metadata"
_OF_DOCUMENT = "tenant_id=? AND namespace_id=? AND document_id=?"
_WRITE_SERVED = (
    "INSERT INTO chunks (tenant_id, namespace_id, scope_token, document_id, seq, filename,"
    " text, metadata, embedding, terms, generation) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
    " ON CONFLICT(tenant_id, namespace_id, document_id, seq) DO UPDATE SET"
    " filename=excluded.filename, text=excluded.text, metadata=excluded.metadata,"
    " embedding=excluded.embedding, terms=excluded.terms, generation=excluded.generation"
    " WHERE excluded.generation >= chunks.generation"
)
"""A write at the served generation: in place (direct changes only are counted, not FTS triggers)."""
_WRITE_STAGED = (
    "INSERT INTO staged_chunks (tenant_id, namespace_id, document_id, seq, filename, text, metadata,"
    " embedding, terms, generation) VALUES (?,?,?,?,?,?,?,?,?,?)"
    " ON CONFLICT(tenant_id, namespace_id, document_id, generation, seq) DO UPDATE SET"
    " filename=excluded.filename, text=excluded.text, metadata=excluded.metadata,"
    " embedding=excluded.embedding, terms=excluded.terms"
)
"""A newer version's rows, kept apart from the served ones until its publish."""
_PUBLISH_STAGED = (
    "INSERT INTO chunks (tenant_id, namespace_id, scope_token, document_id, seq, filename, text, metadata,"
    " embedding, terms, generation) SELECT tenant_id, namespace_id, ?, document_id, seq, filename, text,"
    " metadata, embedding, terms, generation FROM staged_chunks"
    " WHERE tenant_id=? AND namespace_id=? AND document_id=? AND generation=? ORDER BY seq"
)
"""A version's staged rows become its served rows (after the document's older rows are deleted)."""
LOG_PRUNE_EVERY = 256
MASKS_KEPT = 64
"""Filter leaves' row masks one scope snapshot keeps (then forgets them all and starts again)."""


def scope_token(scope: TenantScope) -> str:
    """A single FTS token naming the scope (ids may hold ``-``/``.``, which FTS would split)."""
    digest = hashlib.sha256(f"{scope.tenant_id}\0{scope.namespace_id}".encode()).hexdigest()
    return f"s{digest[:24]}"


@maps_sqlite_errors
class SqliteVectorStoreProvider:
    """Owns the connection and the per-scope vector matrices; hands out scope-bound stores."""

    def __init__(self, path: Path | str, *, dimension: int) -> None:
        self.path = Path(path)
        self.dimension = dimension
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._matrices: dict[TenantScope, ScopeIndex] = {}

    def connection(self) -> sqlite3.Connection:
        with self._lock:
            if self._conn is None:
                conn = open_sqlite(self.path, SCHEMA)
                try:
                    migrate(conn)
                except BaseException:
                    conn.close()
                    raise
                self._conn = conn
            return self._conn

    def scoped(self, scope: TenantScope, view: ReadView | None = None) -> SqliteVectorStore:
        return SqliteVectorStore(self, scope, view)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._matrices.clear()

    def purge_tenant(self, tenant_id: str) -> int:
        with self._lock:
            conn = self.connection()
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
            for scope in [s for s in self._matrices if s.tenant_id == tenant_id]:
                del self._matrices[scope]
            return cur.rowcount + staged

    def matrix(self, scope: TenantScope) -> ScopeIndex:
        """This scope's structures, brought up to its current generation (see the module docstring)."""
        with self._lock:
            cached = self._matrices.get(scope)
            current = read_scope(
                self.connection(), (scope.tenant_id, scope.namespace_id), cached, self.dimension
            )
            self._matrices[scope] = current
            return current

    def vectors(self, m: ScopeIndex) -> NDArray[np.float32]:
        """The scope's vectors as one matrix, made on the first semantic query after a write."""
        with self._lock:
            return m.vectors.matrix()

    def bm25(self, scope: TenantScope, m: ScopeIndex) -> Bm25Index:
        """The scope's BM25 index, built whole on the first keyword query; writes after that update it."""
        with self._lock:
            if m.bm25 is None:
                m.bm25 = Bm25Index.build(
                    read_texts(self.connection(), (scope.tenant_id, scope.namespace_id), m)
                )
            return m.bm25


@maps_sqlite_errors
class SqliteVectorStore:
    """A scope-bound view of the SQLite store (see the module docstring for how scoping holds)."""

    def __init__(
        self, provider: SqliteVectorStoreProvider, scope: TenantScope, view: ReadView | None = None
    ) -> None:
        self._p = provider
        self.scope = scope
        self.view = None if view is None or view.everything else view
        """What every read is narrowed to, in SQL (:mod:`.store_filters`); None: every chunk."""
        self._token = scope_token(scope)

    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities()

    # -- writes -------------------------------------------------------------------------------
    def upsert(self, chunks: Sequence[Chunk], *, generation: int = 0) -> int:
        """A document at its published generation is written in place; a newer version is staged
        (``staged_chunks``) until its publish, so no reader ever sees a chunk of it before then."""
        rows = [(c.document_id, self._row(c)) for c in chunks]
        if not rows:
            return 0
        with self._p._lock:
            conn = self._p.connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                # the fences are read and the rows written in one transaction
                fences = {d: self._fence(conn, d) for d in {d for d, _ in rows}}
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
                    written += conn.executemany(_WRITE_SERVED, served).rowcount
                    self._bump(conn, {d for d, _ in rows if fences[d] == generation})
                if staged:
                    written += conn.executemany(_WRITE_STAGED, staged).rowcount
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return written

    def _row(self, c: Chunk) -> tuple[object, ...]:
        if c.embedding is None or len(c.embedding) != self._p.dimension:
            raise errors.EmbeddingMismatch(
                "chunk embedding does not match the store's dimension",
                chunk_id=c.id,
                expected=self._p.dimension,
                got=None if c.embedding is None else len(c.embedding),
            )
        vec = np.asarray(c.embedding, dtype=np.float32)
        return (
            self.scope.tenant_id,
            self.scope.namespace_id,
            self._token,
            c.document_id,
            c.sequence_number,
            c.metadata.filename,
            c.text,
            c.metadata.model_dump_json(),
            vec.tobytes(),
            chunk_terms(c.metadata),
        )

    def _fence(self, conn: sqlite3.Connection, document_id: str) -> int:
        row = conn.execute(
            "SELECT generation FROM fences WHERE tenant_id=? AND namespace_id=? AND document_id=?",
            (self.scope.tenant_id, self.scope.namespace_id, document_id),
        ).fetchone()
        return int(row[0]) if row else 0

    def publish(self, document_id: str, *, generation: int) -> bool:
        """One transaction: the fence rises to ``generation`` and the document's served rows become
        exactly the version staged at it (none: a delete); staged rows up to it (a crashed or
        overtaken writer's orphans) go. Publishing the served generation again only sweeps."""
        outcome = self.publish_many({document_id: generation})[document_id]
        if isinstance(outcome, errors.RaglineError):
            raise outcome
        return outcome

    def publish_many(self, generations: Mapping[str, int]) -> dict[str, bool | errors.RaglineError]:
        """:meth:`publish` for every document, in one transaction (one scope generation for all).
        Each document's publish is a savepoint of its own: a statement of one that fails undoes that
        document's alone (its outcome is the error), the others commit; a failure of the transaction
        itself (its commit, or an error after which SQLite rolled it back) undoes every one, and
        raises."""
        if not generations:
            return {}
        outcome: dict[str, bool | errors.RaglineError] = {}
        with self._p._lock:
            conn = self._p.connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                changed = set()
                for d, g in generations.items():
                    conn.execute("SAVEPOINT publish_one")
                    try:
                        moved = self._publish_in(conn, d, g)
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
                    self._bump(conn, changed)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return outcome

    def _publish_in(self, conn: sqlite3.Connection, document_id: str, generation: int) -> bool | None:
        """One document's publish inside the caller's transaction: ``None`` when refused, else whether
        its served rows changed."""
        key = (self.scope.tenant_id, self.scope.namespace_id, document_id)
        fence = self._fence(conn, document_id)
        if fence > generation:
            return None
        conn.execute(
            "INSERT INTO fences VALUES (?,?,?,?) ON CONFLICT(tenant_id, namespace_id, document_id)"
            " DO UPDATE SET generation=excluded.generation",
            (*key, generation),
        )
        changed = conn.execute(
            f"DELETE FROM chunks WHERE {_OF_DOCUMENT} AND generation < ?",
            (*key, generation if fence == generation else 2**62),
        ).rowcount
        if fence < generation:
            changed += conn.execute(_PUBLISH_STAGED, (self._token, *key, generation)).rowcount
        conn.execute(
            f"DELETE FROM staged_chunks WHERE {_OF_DOCUMENT} AND generation <= ?", (*key, generation)
        )
        return bool(changed)

    def discard(self, document_id: str, *, generation: int) -> int:
        return self._delete(document_id, "generation = ?", generation)

    def vectors(self, document_id: str) -> dict[str, NDArray[np.float32]]:
        """Served and staged rows alike: a retry of a version reuses what its crashed attempt embedded."""
        key = (self.scope.tenant_id, self.scope.namespace_id, document_id)
        with self._p._lock:
            rows = (
                self._p.connection()
                .execute(
                    f"SELECT text, embedding FROM chunks WHERE {_OF_DOCUMENT}"
                    f" UNION ALL SELECT text, embedding FROM staged_chunks WHERE {_OF_DOCUMENT}",
                    (*key, *key),
                )
                .fetchall()
            )
        return {str(t): np.frombuffer(e, dtype=np.float32) for t, e in rows}

    def delete_document(self, document_id: str, *, older_than: int | None = None) -> int:
        return self._delete(document_id, "generation < ?", 2**62 if older_than is None else older_than)

    def _delete(self, document_id: str, condition: str, generation: int) -> int:
        """Served and staged rows of the document matching ``condition`` on their generation."""
        key = (self.scope.tenant_id, self.scope.namespace_id, document_id)
        with self._p._lock:
            conn = self._p.connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                served = conn.execute(
                    f"DELETE FROM chunks WHERE {_OF_DOCUMENT} AND {condition}", (*key, generation)
                ).rowcount
                staged = conn.execute(
                    f"DELETE FROM staged_chunks WHERE {_OF_DOCUMENT} AND {condition}", (*key, generation)
                ).rowcount
                if served:
                    self._bump(conn, {document_id})
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            return served + staged

    def _bump(self, conn: sqlite3.Connection, document_ids: set[str]) -> None:
        """Move the scope's generation and log which documents moved it (same transaction).

        Appending keeps a write to one b-tree insert; every :data:`LOG_PRUNE_EVERY` generations the
        entries a later one for the same document supersedes are deleted (readers need only each
        document's latest), so the log stays about one row per document.
        """
        key = (self.scope.tenant_id, self.scope.namespace_id)
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

    # -- reads --------------------------------------------------------------------------------
    def count(self, document_id: str | None = None) -> int:
        """A document's served chunks; the scope's every stored chunk (staged versions too). With a
        view, only the served chunks it admits, of the document or of the scope."""
        args: list[object] = [self.scope.tenant_id, self.scope.namespace_id]
        narrowed = admitted(self.view, None)
        if narrowed is not None and document_id is None:  # the admitted rows, as a search finds them
            m = self._p.matrix(self.scope)
            return int(evaluate(narrowed, lambda leaf: self._leaf_rows(m, leaf)).sum())
        with self._p._lock:
            conn = self._p.connection()
            if narrowed is not None:
                cond, params = sql_condition(narrowed, self._token)
                sql = f"SELECT count(*) FROM chunks c WHERE {_OF_DOCUMENT} AND {cond}"
                return int(conn.execute(sql, [*args, document_id, *params]).fetchone()[0])
            if document_id is not None:
                sql = f"SELECT count(*) FROM chunks WHERE {_OF_DOCUMENT}"
                return int(conn.execute(sql, [*args, document_id]).fetchone()[0])
            served = conn.execute("SELECT count(*) FROM chunks WHERE tenant_id=? AND namespace_id=?", args)
            staged = conn.execute(
                "SELECT count(*) FROM staged_chunks WHERE tenant_id=? AND namespace_id=?", args
            )
            return int(served.fetchone()[0]) + int(staged.fetchone()[0])

    def neighbors(
        self, document_id: str, sequence_number: int, *, before: int = 5, after: int = 5
    ) -> list[Chunk]:
        window = neighbor_window(sequence_number, before, after)
        if window is None:
            return []
        before, after = window
        narrowed = admitted(self.view, None)
        cond, params = ("1", []) if narrowed is None else sql_condition(narrowed, self._token)
        with self._p._lock:
            rows = (
                self._p.connection()
                .execute(
                    f"SELECT {_COLUMNS} FROM chunks c WHERE c.tenant_id=? AND c.namespace_id=?"
                    f" AND c.document_id=? AND c.seq BETWEEN ? AND ? AND {cond} ORDER BY c.seq",
                    (
                        self.scope.tenant_id,
                        self.scope.namespace_id,
                        document_id,
                        sequence_number - before,
                        sequence_number + after,
                        *params,
                    ),
                )
                .fetchall()
            )
        return [_chunk(r) for r in rows]

    def search(self, query: SearchQuery) -> list[SearchHit]:
        """Legs rank bare (chunk id, score) pairs over the admitted rows only; only the hits returned
        are read and built, and checked against the view once more as read (:func:`vetted`)."""
        return vetted(self._search(query), self.view, query.filters.where)

    def _search(self, query: SearchQuery) -> list[SearchHit]:
        rowid_of: dict[str, int] = {}
        if isinstance(query, SemanticQuery):
            ranked = self._semantic(query.vector, query.k, query.filters, rowid_of)
            return self._hits(
                [
                    (cid, ScoreBreakdown(semantic_rank=r, semantic_score=s))
                    for r, (cid, s) in enumerate(ranked, 1)
                ],
                rowid_of,
                "semantic_score",
            )
        if isinstance(query, KeywordQuery):
            ranked = self._keyword(query.text, query.k, query.filters, rowid_of)
            return self._hits(
                [
                    (cid, ScoreBreakdown(keyword_rank=r, keyword_score=s))
                    for r, (cid, s) in enumerate(ranked, 1)
                ],
                rowid_of,
                "keyword_score",
            )
        assert isinstance(query, HybridQuery)
        semantic = self._semantic(query.vector, query.candidates, query.filters, rowid_of)
        keyword = self._keyword(query.text, query.candidates, query.filters, rowid_of)
        return self._hits(fuse_query(query, semantic, keyword), rowid_of, "fused_score")

    def _semantic(
        self, vector: Sequence[float], k: int, filters: MetadataFilter, rowid_of: dict[str, int]
    ) -> list[tuple[str, float]]:
        m = self._p.matrix(self.scope)
        q = np.asarray(vector, dtype=np.float32)
        if q.shape != (self._p.dimension,):
            raise errors.EmbeddingMismatch(
                "query vector does not match the store's dimension", expected=self._p.dimension, got=q.size
            )
        if not len(m.rowids):
            return []
        scores = self._p.vectors(m) @ (q / (np.linalg.norm(q) or 1.0))
        mask = self._mask(m, filters)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        k = min(k, int(np.isfinite(scores).sum()))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((m.rowids[top], -scores[top]))]
        out = []
        for i in top.tolist():
            rowid_of[m.chunk_ids[i]] = int(m.rowids[i])
            out.append((m.chunk_ids[i], float(scores[i])))
        return out

    def _keyword(
        self, text: str, k: int, filters: MetadataFilter, rowid_of: dict[str, int]
    ) -> list[tuple[str, float]]:
        m = self._p.matrix(self.scope)
        if not len(m.rowids):
            return []
        scores = self._p.bm25(self.scope, m).scores(text)
        mask = self._mask(m, filters)
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        matching = np.flatnonzero(scores > 0)
        k = min(k, len(matching))
        if k <= 0:
            return []
        top = matching[np.argpartition(-scores[matching], k - 1)[:k]]
        top = top[np.lexsort((m.rowids[top], -scores[top]))]
        out = []
        for i in top.tolist():
            rowid_of[m.chunk_ids[i]] = int(m.rowids[i])
            out.append((m.chunk_ids[i], float(scores[i])))
        return out

    def _mask(self, m: ScopeIndex, filters: MetadataFilter) -> NDArray[np.bool_] | None:
        """Which of ``m``'s rows the query may return (None: all): its document and filename
        filters, and the rows the view narrowed by its ``where`` admits, found in SQL (read after
        ``m``: a row changed since is judged as it is now)."""
        mask = _filter_mask(m, filters)
        narrowed = admitted(self.view, filters.where)
        if narrowed is None:
            return mask
        hit = evaluate(narrowed, lambda leaf: self._leaf_rows(m, leaf))
        return hit if mask is None else mask & hit

    def _leaf_rows(self, m: ScopeIndex, leaf: Terms | Prefix | Range) -> NDArray[np.bool_]:
        """Which of ``m``'s rows hold a term ``leaf`` tests for: one index range scan, kept on the
        snapshot (a user's ``@*``, a popular filter's leaves are read once per scope generation)."""
        with self._p._lock:
            mask = m.masks.get(leaf)  # leaves are frozen dataclasses: equal leaves, one entry
            if mask is None:
                if len(m.masks) >= MASKS_KEPT:
                    m.masks.clear()
                mask = m.masks[leaf] = leaf_rows(self._p.connection(), self._token, m.rowids, leaf)
            return mask

    def _hits(
        self, ranked: list[tuple[str, ScoreBreakdown]], rowid_of: dict[str, int], score_field: str
    ) -> list[SearchHit]:
        if not ranked:
            return []
        chunks = self._by_rowid([rowid_of[cid] for cid, _ in ranked])
        # A chunk ranked a moment ago may be gone when read (its document replaced or deleted in
        # between): it is left out, as a search a moment later would not have found it.
        return [
            SearchHit(chunk=chunk, score=float(getattr(bd, score_field)), breakdown=bd)
            for cid, bd in ranked
            if (chunk := chunks.get(rowid_of[cid])) is not None
        ]

    def _by_rowid(self, rowids: list[int]) -> dict[int, Chunk]:
        with self._p._lock:
            rows = (
                self._p.connection()
                .execute(
                    # `+` keeps SQLite on rowid lookups: left to itself it scans the scope's whole
                    # (tenant, namespace) index range, ~50 ms per search at 100k chunks.
                    f"SELECT {_COLUMNS} FROM chunks c WHERE c.rowid IN ({','.join('?' * len(rowids))})"
                    " AND +c.tenant_id=? AND +c.namespace_id=?",
                    [*rowids, self.scope.tenant_id, self.scope.namespace_id],
                )
                .fetchall()
            )
        return {int(r[0]): _chunk(r) for r in rows}


def _filter_mask(m: ScopeIndex, filters: MetadataFilter) -> NDArray[np.bool_] | None:
    mask: NDArray[np.bool_] | None = None
    for values, column in ((filters.document_ids, m.document_ids), (filters.filenames, m.filenames)):
        if values:
            hit = np.isin(column, np.array(values, dtype=object))
            mask = hit if mask is None else mask & hit
    return mask


def _chunk(r: tuple[Any, ...]) -> Chunk:
    return Chunk(
        document_id=str(r[1]),
        sequence_number=int(r[2]),
        text=str(r[3]),
        metadata=ChunkMetadata.model_validate(json.loads(str(r[4]))),
    )
