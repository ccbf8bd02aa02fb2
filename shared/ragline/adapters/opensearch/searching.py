"""How one scope's store on a domain searches: the kNN and BM25 legs (one ``_msearch``, two concurrent
searches, or OpenSearch's own ``hybrid`` query fused on the node), each hit kept only at its
document's published generation, and the survivors' chunks read with the fences.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragline import errors
from ragline.adapters.opensearch import hybrid as node_fusion
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch import term_stats
from ragline.adapters.opensearch.client import translate
from ragline.adapters.opensearch.filtering import vetted
from ragline.adapters.opensearch.legs import LegHit, leg_hits, single_leg, stored_chunk
from ragline.adapters.opensearch.scoped import FENCE_RETRIES, ScopedStore, placed_read
from ragline.domain.fusion import fuse_query
from ragline.domain.models import (
    HybridQuery,
    KeywordQuery,
    ScoreBreakdown,
    SearchHit,
    SearchQuery,
    SemanticQuery,
)

OVERFETCH = 4
"""How many times ``k`` a single leg asks for when unpublished chunks crowded its first answer."""


class Searching(ScopedStore):
    """The searching part of a scope's store (see the module)."""

    @placed_read
    def search(self, query: SearchQuery) -> list[SearchHit]:
        """:meth:`_search`, each hit checked against the view once more as read (:func:`.vetted`)."""
        return vetted(self._search(query), self.view, query.filters.where)

    def _search(self, query: SearchQuery) -> list[SearchHit]:
        """Each leg's hits are kept only at their document's published generation (its fence, read
        in real time; 0 before any publish), so a version written beside the served one — in flight,
        or orphaned by a worker that died — is never seen, and never two versions at once. A hit
        *below* its fence means this view of the index predates a publish (whose chunks it refreshed
        before raising the fence): the search runs once more rather than show that document with
        nothing. A single leg that lost hits to another version and came back full asks for
        ``OVERFETCH`` times more, so such chunks do not leave fewer than ``k``."""
        self._p.before_read(self._index)
        if isinstance(query, HybridQuery) and self._p.hybrid == "query":
            return self._node_fused(query)
        single = not isinstance(query, HybridQuery)
        size = query.candidates if isinstance(query, HybridQuery) else query.k
        stale_retried = overfetched = False
        for _ in range(3):  # at most one more for a stale view, one more for a crowded leg
            legs, stale, dropped, prefetched = self._visible_legs(query, size)
            if stale and not stale_retried:
                stale_retried = True
            elif single and dropped and len(legs[0]) < query.k and not overfetched:
                overfetched, size = True, query.k * OVERFETCH
            else:
                break
        if single:
            return single_leg(
                legs[0][: query.k], "semantic" if isinstance(query, SemanticQuery) else "keyword"
            )
        assert isinstance(query, HybridQuery)
        fused = fuse_query(query, *([(h.chunk_id, h.score) for h in leg] for leg in legs))
        hits = {h.chunk_id: h for leg in legs for h in leg}
        sources = {  # read with the fences, of the generation served
            cid: src
            for cid, _ in fused
            if (src := prefetched.get(cid)) is not None and src.get("generation", 0) == hits[cid].generation
        }
        sources.update(self._read([cid for cid, _ in fused if cid not in sources], hits))
        return [
            SearchHit(chunk=stored_chunk(sources[cid]), score=bd.fused_score or 0.0, breakdown=bd)
            for cid, bd in fused
            if cid in sources  # a chunk deleted between the legs and the read is simply gone
        ]

    def _node_fused(self, query: HybridQuery) -> list[SearchHit]:
        """``query`` fused by the node, under the store's visibility rule (see :meth:`_search`):
        a hit below its fence (a view older than a publish) runs the search once more; a fused hit of an
        unpublished generation is dropped and the search runs again with that document's other generations
        refused in both legs, so ``k`` hits come back when ``k`` exist. Ranks and leg scores come from the
        legs, at published generations only."""
        knn = rq.ids_only(self._knn(query.vector, query.candidates, query))
        bm25 = rq.ids_only(self.keyword_body(query.text, query.candidates, query))
        off: set[str] = set()
        fences: dict[str, int] = {}
        stale_retried = False
        for attempt in range(FENCE_RETRIES + 1):
            exclude = node_fusion.unpublished(fences, off)
            sem_q, kw_q = node_fusion.excluding(knn, exclude), node_fusion.excluding(bm25, exclude)
            f_resp, s_resp, k_resp = self._msearch(
                [node_fusion.hybrid_search(sem_q, kw_q, query, self._p.hybrid_normalization), sem_q, kw_q]
            )
            fused = node_fusion.fused_hits(f_resp)
            legs = [leg_hits(s_resp, "semantic"), leg_hits(k_resp, "keyword")]
            fences = self._fences(
                {h.document_id for h in fused} | {h.document_id for leg in legs for h in leg}
            )
            seen = [(h.document_id, h.generation) for h in fused] + [
                (h.document_id, h.generation) for leg in legs for h in leg
            ]
            stale = any(gen < fences[doc] for doc, gen in seen)
            dropped = {h.document_id for h in fused if h.generation != fences[h.document_id]}
            if stale and not stale_retried:
                stale_retried = True
            elif dropped - off and attempt < FENCE_RETRIES:
                off |= dropped
            else:
                break
        sem, kw = ({h.chunk_id: (r, h.score) for r, h in enumerate(
            (h for h in leg if h.generation == fences[h.document_id]), start=1)} for leg in legs)  # fmt: skip
        kept = [h for h in fused if h.generation == fences[h.document_id]]
        sources = self._read(
            [h.chunk_id for h in kept],
            {h.chunk_id: LegHit(h.chunk_id, h.document_id, h.generation, h.score, None) for h in kept},
        )
        out = []
        for h in kept:
            if h.chunk_id not in sources:
                continue  # deleted between the search and the read
            s_rank, s_score = sem.get(h.chunk_id, (None, None))
            k_rank, k_score = kw.get(h.chunk_id, (None, None))
            bd = ScoreBreakdown(semantic_rank=s_rank, semantic_score=s_score, keyword_rank=k_rank,
                                keyword_score=k_score, fused_score=h.score)  # fmt: skip
            out.append(SearchHit(chunk=stored_chunk(sources[h.chunk_id]), score=h.score, breakdown=bd))
        return out

    def _visible_legs(
        self, query: SearchQuery, size: int
    ) -> tuple[list[list[LegHit]], bool, bool, dict[str, dict[str, Any]]]:
        """The query's legs (``size`` hits each) as hits of published generations only; whether any
        hit was older than its fence; whether any was dropped; a hybrid query's likely survivors'
        sources, read with the fences (any generation: the caller keeps those of visible hits)."""
        if isinstance(query, SemanticQuery):
            legs = [leg_hits(self._send(self._knn(query.vector, size, query)), "semantic")]
        elif isinstance(query, KeywordQuery):
            legs = [leg_hits(self._send(self.keyword_body(query.text, size, query)), "keyword")]
        else:
            assert isinstance(query, HybridQuery)
            knn = rq.ids_only(self._knn(query.vector, size, query))
            stats = self._p.scope_stats
            if self._p.hybrid == "msearch" and stats is not None and not self._alone(stats):
                # the scope's statistics ride with the kNN leg; the keyword leg, which needs them, follows
                with translate("keyword statistics"):
                    terms, reads = stats.reads(self.scope, query.text, self._index)
                sem, *got = self._msearch([knn, *reads])
                scored = stats.scored(terms, got)
                kw = self._send(
                    rq.ids_only(
                        rq.bm25_search(self.scope, query.text, size, query.filters, self.view, scored=scored)
                    )
                )
            elif self._p.hybrid == "msearch":
                sem, kw = self._msearch([knn, rq.ids_only(self.keyword_body(query.text, size, query))])
            else:
                bm25 = rq.ids_only(self.keyword_body(query.text, size, query))
                futures = [self._p.pool().submit(self._send, body) for body in (knn, bm25)]
                sem, kw = (f.result() for f in futures)
            legs = [leg_hits(sem, "semantic"), leg_hits(kw, "keyword")]
        likely: list[str] = []  # the survivors if every hit is published (the common case)
        if isinstance(query, HybridQuery):
            hits = {h.chunk_id: h for leg in legs for h in leg}
            guess = fuse_query(query, *([(h.chunk_id, h.score) for h in leg] for leg in legs))
            likely = [rq.doc_id(self.scope, cid, hits[cid].generation) for cid, _ in guess]
        published, sources = self._fences_and_sources({h.document_id for leg in legs for h in leg}, likely)
        stale = any(h.generation < published[h.document_id] for leg in legs for h in leg)
        visible = [[h for h in leg if h.generation == published[h.document_id]] for leg in legs]
        return visible, stale, sum(map(len, visible)) < sum(map(len, legs)), sources

    def _read(self, chunk_ids: list[str], hits: dict[str, LegHit]) -> dict[str, dict[str, Any]]:
        """The fused survivors' sources, by their versioned ``_id``; a chunk of an index written before
        versions were kept apart is found under its plain id instead."""
        if not chunk_ids:
            return {}
        out = self._mget([rq.doc_id(self.scope, cid, hits[cid].generation) for cid in chunk_ids])
        missing = [cid for cid in chunk_ids if cid not in out and hits[cid].generation]
        if missing:
            out.update(self._mget([rq.doc_id(self.scope, cid) for cid in missing]))
        return out

    def keyword_body(self, text: str, k: int, query: KeywordQuery | HybridQuery) -> dict[str, Any]:
        """The keyword leg, scored with the scope's own statistics where the index keeps them."""
        scored = None
        stats = self._p.scope_stats
        if stats is not None and self._alone(stats):
            scored = term_stats.own_query(text)
        elif stats is not None:
            with translate("keyword statistics"):
                scored = stats.query(self.scope, text, self._routing, self._index)
        return rq.bm25_search(self.scope, text, k, query.filters, self.view, scored=scored)

    def _alone(self, stats: term_stats.ScopeStatistics) -> bool:
        """The scope is the only one on its shard, and all of it is there: the shard's own statistics
        are the scope's (a scope spread over a routing partition of shards never is)."""
        if self._p.routing_partition_size > 1:
            return False
        with translate("keyword statistics"):
            return stats.alone(self.scope, self._index, self._routing)

    def _knn(self, vector: Sequence[float], k: int, query: SemanticQuery | HybridQuery) -> dict[str, Any]:
        if len(vector) != self._p.dimension:
            raise errors.EmbeddingMismatch(
                "query vector does not match the index dimension", expected=self._p.dimension, got=len(vector)
            )
        return rq.knn_search(
            self.scope, vector, k, query.filters, candidates=self._p.knn_candidates, view=self.view
        )

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        with translate("search"):
            resp: dict[str, Any] = self._p.client.search(index=self._index, body=body, routing=self._routing)
        return resp

    def _msearch(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        lines: list[dict[str, Any]] = []
        for body in bodies:
            lines += [{"index": self._index, "routing": self._routing}, body]
        with translate("search"):
            resp = self._p.client.msearch(body=lines)
        out: list[dict[str, Any]] = []
        for item in resp["responses"]:
            if "error" in item:
                raise errors.DependencyFailed("OpenSearch rejected a search leg", status=item.get("status"))
            out.append(item)
        return out
