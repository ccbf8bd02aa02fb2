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

This module holds the provider (the connection and the per-scope structures) and the scope-bound
store, which answers the port by delegating by concern: rows and their SQL layout
(:mod:`.store_rows`), writes and their visibility (:mod:`.store_writes`), reads of a few rows
(:mod:`.store_reads`), top-k over a snapshot (:mod:`.store_ranking`), filters (:mod:`.store_filters`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ragline import errors
from ragline.adapters.embedded.bm25 import Bm25Index
from ragline.adapters.embedded.scope_index import ScopeIndex, read_scope, read_texts
from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite
from ragline.adapters.embedded.store_filters import admitted, evaluate, leaf_rows, migrate, vetted
from ragline.adapters.embedded.store_ranking import filter_mask, top_keyword, top_semantic, unit_query
from ragline.adapters.embedded.store_reads import (
    count_rows,
    document_vectors,
    neighbor_rows,
    rows_by_rowid,
)
from ragline.adapters.embedded.store_rows import chunk_from_row, chunk_row, scope_token
from ragline.adapters.embedded.store_schema import SCHEMA
from ragline.adapters.embedded.store_writes import (
    EVERY_GENERATION,
    LOG_PRUNE_EVERY,
    delete_rows,
    publish_documents,
    purge_tenant_rows,
    write_chunks,
)
from ragline.domain.filters import Prefix, Range, ReadView, Terms
from ragline.domain.fusion import fuse_query
from ragline.domain.models import (
    Chunk,
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

__all__ = [  # the store, and what its tests and older callers import from here
    "LOG_PRUNE_EVERY",
    "MASKS_KEPT",
    "SqliteVectorStore",
    "SqliteVectorStoreProvider",
    "scope_token",
]

MASKS_KEPT = 64
"""Filter leaves' row masks one scope snapshot keeps (then forgets them all and starts again)."""


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
            purged = purge_tenant_rows(self.connection(), tenant_id)
            for scope in [s for s in self._matrices if s.tenant_id == tenant_id]:
                del self._matrices[scope]
            return purged

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
        self._key = (scope.tenant_id, scope.namespace_id)

    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities()

    # -- writes (store_writes) ----------------------------------------------------------------
    def upsert(self, chunks: Sequence[Chunk], *, generation: int = 0) -> int:
        """A document at its published generation is written in place; a newer version is staged
        (``staged_chunks``) until its publish, so no reader ever sees a chunk of it before then."""
        rows = [(c.document_id, chunk_row(self.scope, self._token, c, self._p.dimension)) for c in chunks]
        if not rows:
            return 0
        with self._p._lock:
            return write_chunks(self._p.connection(), self._key, rows, generation)

    def publish(self, document_id: str, *, generation: int) -> bool:
        """One transaction: the fence rises to ``generation`` and the document's served rows become
        exactly the version staged at it (none: a delete); staged rows up to it (a crashed or
        overtaken writer's orphans) go. Publishing the served generation again only sweeps."""
        outcome = self.publish_many({document_id: generation})[document_id]
        if isinstance(outcome, errors.RaglineError):
            raise outcome
        return outcome

    def publish_many(self, generations: Mapping[str, int]) -> dict[str, bool | errors.RaglineError]:
        """:meth:`publish` for every document, in one transaction (one scope generation for all);
        one document's failed statement is its outcome alone (:func:`.store_writes.publish_documents`)."""
        if not generations:
            return {}
        with self._p._lock:
            return publish_documents(self._p.connection(), self._key, self._token, generations)

    def discard(self, document_id: str, *, generation: int) -> int:
        return self._delete(document_id, "generation = ?", generation)

    def delete_document(self, document_id: str, *, older_than: int | None = None) -> int:
        return self._delete(
            document_id, "generation < ?", EVERY_GENERATION if older_than is None else older_than
        )

    def _delete(self, document_id: str, condition: str, generation: int) -> int:
        """Served and staged rows of the document matching ``condition`` on their generation."""
        with self._p._lock:
            return delete_rows(self._p.connection(), self._key, document_id, condition, generation)

    # -- reads (store_reads) ------------------------------------------------------------------
    def vectors(self, document_id: str) -> dict[str, NDArray[np.float32]]:
        """Served and staged rows alike: a retry of a version reuses what its crashed attempt embedded."""
        with self._p._lock:
            rows = document_vectors(self._p.connection(), self._key, document_id)
        return {str(t): np.frombuffer(e, dtype=np.float32) for t, e in rows}

    def count(self, document_id: str | None = None) -> int:
        """A document's served chunks; the scope's every stored chunk (staged versions too). With a
        view, only the served chunks it admits, of the document or of the scope."""
        narrowed = admitted(self.view, None)
        if narrowed is not None and document_id is None:  # the admitted rows, as a search finds them
            m = self._p.matrix(self.scope)
            return int(evaluate(narrowed, lambda leaf: self._leaf_rows(m, leaf)).sum())
        with self._p._lock:
            return count_rows(self._p.connection(), self._key, self._token, document_id, narrowed)

    def neighbors(
        self, document_id: str, sequence_number: int, *, before: int = 5, after: int = 5
    ) -> list[Chunk]:
        window = neighbor_window(sequence_number, before, after)
        if window is None:
            return []
        before, after = window
        narrowed = admitted(self.view, None)
        first, last = sequence_number - before, sequence_number + after
        with self._p._lock:
            conn = self._p.connection()
            rows = neighbor_rows(conn, self._key, self._token, narrowed, document_id, first, last)
        return [chunk_from_row(r) for r in rows]

    # -- search (store_ranking) ---------------------------------------------------------------
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
        q = unit_query(vector, self._p.dimension)
        if not len(m.rowids):
            return []
        scores = self._p.vectors(m) @ q
        return top_semantic(m, scores, self._mask(m, filters), k, rowid_of)

    def _keyword(
        self, text: str, k: int, filters: MetadataFilter, rowid_of: dict[str, int]
    ) -> list[tuple[str, float]]:
        m = self._p.matrix(self.scope)
        if not len(m.rowids):
            return []
        scores = self._p.bm25(self.scope, m).scores(text)
        return top_keyword(m, scores, self._mask(m, filters), k, rowid_of)

    def _mask(self, m: ScopeIndex, filters: MetadataFilter) -> NDArray[np.bool_] | None:
        """Which of ``m``'s rows the query may return (None: all): its document and filename
        filters, and the rows the view narrowed by its ``where`` admits, found in SQL (read after
        ``m``: a row changed since is judged as it is now)."""
        mask = filter_mask(m, filters)
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
            rows = rows_by_rowid(self._p.connection(), self._key, rowids)
        return {int(r[0]): chunk_from_row(r) for r in rows}
