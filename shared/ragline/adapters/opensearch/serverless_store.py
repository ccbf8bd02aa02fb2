"""One tenant namespace's :class:`~ragline.ports.VectorStore` on an OpenSearch Serverless collection
(see :mod:`~ragline.adapters.opensearch.serverless` for how it lives within what a collection allows)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, Literal, TypeVar

import numpy as np
from numpy.typing import NDArray

from ragline import errors
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch import serverless_requests as srq
from ragline.adapters.opensearch.client import translate
from ragline.adapters.opensearch.fences import written_attr
from ragline.adapters.opensearch.filtering import vetted
from ragline.adapters.opensearch.serverless_collection import ServerlessCollection
from ragline.adapters.opensearch.serverless_hits import Leg, chunk_of, cid, field, newest, ranked
from ragline.adapters.opensearch.serverless_visibility import Expectation, wait_until
from ragline.domain.filters import ReadView
from ragline.domain.fusion import fuse_query
from ragline.domain.models import (
    Chunk,
    HybridQuery,
    KeywordQuery,
    ScoreBreakdown,
    SearchHit,
    SearchQuery,
    SemanticQuery,
    StoreCapabilities,
    TenantScope,
    chunk_id,
    neighbor_window,
)

OVERFETCH = 4
FENCE_RETRIES = 3
_T = TypeVar("_T")


class ServerlessVectorStore:
    def __init__(
        self, provider: ServerlessCollection, scope: TenantScope, view: ReadView | None = None
    ) -> None:
        self._p = provider
        self.scope = scope
        self.view = None if view is None or view.everything else view
        """Inside every read's query (:mod:`.filtering`); None: every chunk."""

    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities()

    # -- writes -------------------------------------------------------------------------------
    def upsert(self, chunks: Sequence[Chunk], *, generation: int = 0) -> int:
        for c in chunks:
            if c.embedding is None or len(c.embedding) != self._p.dimension:
                raise errors.EmbeddingMismatch(
                    "chunk embedding does not match the index dimension",
                    chunk_id=c.id,
                    expected=self._p.dimension,
                    got=None if c.embedding is None else len(c.embedding),
                )
        by_doc: dict[str, list[Chunk]] = {}
        for c in chunks:
            by_doc.setdefault(c.document_id, []).append(c)
        for document_id, fence in self._p.fences.published(self.scope, by_doc).items():
            if fence > generation:  # before anything is written; begin_write checks again, atomically
                raise errors.Superseded(
                    "a newer version of the document was published",
                    document_id=document_id,
                    generation=generation,
                    published=fence,
                )
        written = 0
        for document_id, doc_chunks in by_doc.items():
            seqs = [c.sequence_number for c in doc_chunks]
            stamp = self._p.fences.begin_write(self.scope, document_id, generation, seqs)
            lines = srq.bulk_lines(self.scope, self._p.index, doc_chunks, generation, stamp)
            n = sum(self._p.bulk(batch) for batch in rq.bulk_requests(lines, rq.BULK_BYTES))
            mine = srq.chunk_query(self.scope, document_id, generation=generation, stamp=stamp)
            then = partial(self._drop_replaced, document_id, generation, stamp, seqs)
            self._p.expect(Expectation(mine, n, then, partial(self._superseded, document_id, generation)))
            written += n
        return written

    def _superseded(self, document_id: str, generation: int) -> bool:
        return self._p.fences.published(self.scope, [document_id])[document_id] > generation

    def _drop_replaced(self, document_id: str, generation: int, stamp: int, seqs: list[int]) -> None:
        """Once a write is searchable: the older copies of the chunks it rewrote at its generation."""
        query = srq.chunk_query(self.scope, document_id, generation=generation, stamp_below=stamp, seqs=seqs)
        self._p.delete_ids([h["_id"] for h in self._p.list_chunks(query)])

    def publish(self, document_id: str, *, generation: int) -> bool:
        """:meth:`publish_many` of one document."""
        outcome = self.publish_many({document_id: generation})[document_id]
        if isinstance(outcome, errors.RaglineError):
            raise outcome
        return outcome

    def _publish_one(self, document_id: str, generation: int) -> bool:
        """Waits until every chunk recorded for ``generation`` (by any process) is searchable, raises
        the fence (conditional write), then sweeps older generations and replaced copies."""
        self._p.settle()
        item = self._p.fences.item(self.scope, document_id)
        if int(item.get("published", {}).get("N", "0")) > generation:
            return False
        expected = {int(s) for s in item.get(written_attr(generation), {}).get("NS", [])}
        if expected:
            wait_until(  # or until a newer version is published: then the raise below refuses
                lambda: (
                    expected <= self._served_seqs(document_id, generation)
                    or self._superseded(document_id, generation)
                ),
                timeout=self._p.visibility_timeout,
                what=f"version {generation} of {document_id!r}",
            )
        stale = [a for a in item if a[:1] == "w" and a[1:].isdigit() and int(a[1:]) < generation]
        if not self._p.fences.publish(self.scope, document_id, generation, stale):
            return False
        self._sweep(document_id, generation)
        return True

    def publish_many(self, generations: Mapping[str, int]) -> dict[str, bool | errors.RaglineError]:
        """``publish`` for each document in turn: a collection has no refresh to share, and each
        document's wait for its own chunks ends as soon as the collection's refresh shows them, so the
        first wait covers the others' chunks written before it. A document whose publish fails is
        settled from its fence read back (it may have risen before the failure: a sweep's, or a write
        whose answer was lost), else the failure is its outcome; the others go on."""
        outcome: dict[str, bool | errors.RaglineError] = {}
        for doc, g in generations.items():
            try:
                outcome[doc] = self._publish_one(doc, g)
            except errors.RaglineError as exc:
                try:
                    fence = self._p.fences.published(self.scope, [doc])[doc]
                except errors.RaglineError:
                    fence = -1  # unknown: reported as failed, and the caller's retry settles it
                outcome[doc] = True if fence == g else False if fence > g else exc
        return outcome

    def _sweep(self, document_id: str, generation: int) -> None:
        """Chunks below ``generation`` and older copies at it, highest sequence number first. A chunk
        not yet searchable is missed: it stays unseen (below the fence, or an older copy) until the
        next publish of the document sweeps it."""
        hits = self._p.list_chunks(srq.chunk_query(self.scope, document_id, older_than=generation + 1))
        kept: set[int] = set()
        doomed = []
        for h in hits:
            seq, gen = field(h, "sequence_number"), field(h, "generation")
            if gen == generation and seq not in kept:
                kept.add(seq)
            else:
                doomed.append(h["_id"])
        self._p.delete_ids(doomed)

    def discard(self, document_id: str, *, generation: int) -> int:
        self._p.settle()
        self._p.fences.forget_written(self.scope, document_id, generation)
        return self._delete(srq.chunk_query(self.scope, document_id, generation=generation))

    def delete_document(self, document_id: str, *, older_than: int | None = None) -> int:
        self._p.settle()
        return self._delete(srq.chunk_query(self.scope, document_id, older_than=older_than))

    def _delete(self, query: dict[str, Any]) -> int:
        return self._p.delete_ids([h["_id"] for h in self._p.list_chunks(query)])

    # -- reads --------------------------------------------------------------------------------
    def vectors(self, document_id: str) -> dict[str, NDArray[np.float32]]:
        self._p.settle()
        hits = self._p.list_chunks(srq.chunk_query(self.scope, document_id), source=["text", rq.VECTOR_FIELD])
        return {
            h["_source"]["text"]: np.asarray(h["_source"][rq.VECTOR_FIELD], dtype=np.float32) for h in hits
        }

    def count(self, document_id: str | None = None) -> int:
        self._p.settle()
        if document_id is None:
            return self._p.count(srq.chunk_query(self.scope, view=self.view))
        return self._at_served(document_id, lambda g: len(self._served_seqs(document_id, g, self.view)))

    def _served_seqs(self, document_id: str, generation: int, view: ReadView | None = None) -> set[int]:
        query = srq.chunk_query(self.scope, document_id, generation=generation, view=view)
        hits = self._p.list_chunks(query)
        return {field(h, "sequence_number") for h in hits}

    def neighbors(
        self, document_id: str, sequence_number: int, *, before: int = 5, after: int = 5
    ) -> list[Chunk]:
        window = neighbor_window(sequence_number, before, after)
        if window is None:
            return []
        self._p.settle()

        def read(generation: int) -> list[Chunk]:
            body = rq.neighbors_search(
                self.scope, document_id, sequence_number, *window, generation=generation, view=self.view
            )
            body["size"] = min(2 * body["size"], rq.MAX_RESULT_WINDOW)  # room for a replaced copy
            body["sort"] = [{"sequence_number": "asc"}, {"stamp": "desc"}]
            hits = newest({}, self._p.search(body))
            return [chunk_of(h["_source"]) for h in hits]

        return self._at_served(document_id, read)

    def _at_served(self, document_id: str, read: Callable[[int], _T]) -> _T:
        """``read`` at the published generation, the fence read before and after (a publish between
        them makes it read again)."""
        served = self._p.fences.published(self.scope, [document_id])[document_id]
        for _ in range(FENCE_RETRIES):
            result = read(served)
            now = self._p.fences.published(self.scope, [document_id])[document_id]
            if now == served:
                return result
            served = now
        return read(served)

    def search(self, query: SearchQuery) -> list[SearchHit]:
        """:meth:`_search`, each hit checked against the view once more as read (:func:`.vetted`)."""
        return vetted(self._search(query), self.view, query.filters.where)

    def _search(self, query: SearchQuery) -> list[SearchHit]:
        """Each leg keeps only hits at their document's fence, the newest copy of each chunk."""
        self._p.settle()
        if isinstance(query, HybridQuery):
            size = query.candidates
            bodies = [
                self._knn(query, size),
                self._bm25(query, size),
            ]
            sem, kw = self._visible(self._p.msearch(bodies))
            fused = fuse_query(query, ranked(sem, "semantic"), ranked(kw, "keyword"))
            sources = {cid(h): h["_source"] for h in sem + kw}
            return [
                SearchHit(chunk=chunk_of(sources[c]), score=bd.fused_score or 0.0, breakdown=bd)
                for c, bd in fused
            ]
        leg: Literal["semantic", "keyword"] = "semantic" if isinstance(query, SemanticQuery) else "keyword"
        size = query.k
        for attempt in range(2):
            body = self._knn(query, size) if isinstance(query, SemanticQuery) else self._bm25(query, size)
            raw = self._p.search(body)
            (hits,) = self._visible([raw])
            if len(hits) >= query.k or len(raw) < size or attempt:
                break
            size = query.k * OVERFETCH  # unpublished or replaced chunks crowded the first answer
        out = []
        for rank, (_, score) in enumerate(ranked(hits[: query.k], leg), start=1):
            bd = (ScoreBreakdown(semantic_rank=rank, semantic_score=score) if leg == "semantic"
                  else ScoreBreakdown(keyword_rank=rank, keyword_score=score))  # fmt: skip
            out.append(SearchHit(chunk=chunk_of(hits[rank - 1]["_source"]), score=score, breakdown=bd))
        return out

    def _visible(self, legs: list[Leg]) -> list[Leg]:
        """The legs' hits at their document's fence, each chunk once, its newest copy: where a chunk
        was written twice at the served generation (rare: a retried write at the fence), the stamps
        of every searchable copy are looked up, not only those of the copies the leg found."""
        docs = {h["_source"]["document_id"] for leg in legs for h in leg}
        read = self._p.fences.read(self.scope, docs)
        fences = {d: fence for d, (fence, _) in read.items()}
        legs = [newest(fences, leg) for leg in legs]
        latest: dict[str, int] = {}
        for d, (fence, rewritten) in read.items():
            if fence != rewritten:
                continue
            seqs = {
                h["_source"]["sequence_number"]
                for leg in legs
                for h in leg
                if h["_source"]["document_id"] == d
            }
            for h in self._p.list_chunks(srq.chunk_query(self.scope, d, generation=fence, seqs=sorted(seqs))):
                key = chunk_id(d, field(h, "sequence_number"))
                latest[key] = max(latest.get(key, 0), field(h, "stamp"))
        return [[h for h in leg if h["_source"].get("stamp", 0) >= latest.get(cid(h), 0)] for leg in legs]

    def _knn(self, query: SemanticQuery | HybridQuery, size: int) -> dict[str, Any]:
        if len(query.vector) != self._p.dimension:
            raise errors.EmbeddingMismatch(
                "query vector does not match the index dimension",
                expected=self._p.dimension,
                got=len(query.vector),
            )
        return rq.knn_search(
            self.scope, query.vector, size, query.filters, candidates=self._p.knn_candidates, view=self.view
        )

    def _bm25(self, query: KeywordQuery | HybridQuery, size: int) -> dict[str, Any]:
        """The keyword leg, scored with the scope's own statistics where the index keeps them."""
        scored = None
        if self._p.scope_stats is not None:
            with translate("keyword statistics"):
                scored = self._p.scope_stats.query(self.scope, query.text, None)
        return rq.bm25_search(self.scope, query.text, size, query.filters, self.view, scored=scored)
