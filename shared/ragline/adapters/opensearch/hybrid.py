"""OpenSearch's own ``hybrid`` query (neural-search plugin), fused on the node by a search pipeline.

Pure request builders and response readers for the ``hybrid="query"`` strategy of
:class:`~ragline.adapters.opensearch.store.OpenSearchVectorStore`. One ``_msearch`` carries three
searches on the tenant's shard: the ``hybrid`` query (kNN leg and BM25 leg, each with the scope filter
*inside* it: 2.19's ``hybrid`` has no top-level filter), fused by a *temporary* search pipeline in the
request body, and the two legs ids-only, which give each fused hit its per-leg rank and score and let
the store see every candidate's generation. 2.19's ``hybrid_score_explanation`` reports neither a leg's
rank nor, for a hit only one leg returned, which leg it was (docs/decisions.md).

Fusion follows the query: ``convex`` is 2.19's ``normalization-processor`` (``arithmetic_mean`` with
weights ``[alpha, 1 - alpha]``; a leg that did not return a hit adds 0, as in
:mod:`ragline.domain.fusion`) over ``min_max`` legs — 2.19 has no top-anchored or lower-bounded
normalisation, and ``min_max`` measured closer to it than ``l2`` (docs/benchmarks.md); ``rrf`` is the
``score-ranker-processor`` with ``rank_constant`` = the query's ``rrf_k``. ``adaptive`` (issue 43) runs
here as ``convex`` with the query's own α: the node's pipeline cuts the fused list to ``size`` by score
alone, so it cannot keep each leg's top hits; the query-form shift of α, which its weights could
carry, is not applied either, so this strategy stays the one docs/benchmarks.md measured
(docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from ragline.adapters.opensearch import requests as rq
from ragline.domain.models import HybridQuery, ScoreBreakdown, SearchHit, chunk_id

if TYPE_CHECKING:
    from ragline.adapters.opensearch.store import OpenSearchVectorStore

Normalization = Literal["min_max", "l2"]
NORMALIZATION: Normalization = "min_max"


class Fused(NamedTuple):
    """One hit of the node's fused ranking."""

    chunk_id: str
    document_id: str
    generation: int
    score: float


def pipeline(query: HybridQuery, normalization: Normalization = NORMALIZATION) -> dict[str, Any]:
    """The temporary search pipeline (``search_pipeline`` in the body) that fuses ``query``'s legs."""
    if query.fusion == "rrf":
        processor: dict[str, Any] = {
            "score-ranker-processor": {"combination": {"technique": "rrf", "rank_constant": query.rrf_k}}
        }
    else:
        processor = {
            "normalization-processor": {
                "normalization": {"technique": normalization},
                "combination": {
                    "technique": "arithmetic_mean",
                    "parameters": {"weights": [query.alpha, round(1.0 - query.alpha, 6)]},
                },
            }
        }
    return {"phase_results_processors": [processor]}


def excluding(body: dict[str, Any], exclude: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A kNN or BM25 leg (as :mod:`requests` builds it) that also refuses the ``exclude`` clauses; the
    kNN leg refuses them inside its ``filter``, so they never take one of its ``k`` places."""
    if not exclude:
        return body
    query = body["query"]
    if "knn" in query:
        (field, knn), = query["knn"].items()  # fmt: skip
        flt = {**knn["filter"]["bool"], "must_not": list(exclude)}
        query = {"knn": {field: {**knn, "filter": {"bool": flt}}}}
    else:
        query = {"bool": {**query["bool"], "must_not": list(exclude)}}
    return {**body, "query": query}


def unpublished(fences: dict[str, int], document_ids: Iterable[str]) -> list[dict[str, Any]]:
    """Clauses matching every chunk of these documents that is not at its published generation."""
    return [
        {
            "bool": {
                "filter": [{"term": {"document_id": d}}],
                "must_not": [{"term": {"generation": fences.get(d, 0)}}],
            }
        }
        for d in sorted(set(document_ids))
    ]


def hybrid_search(
    knn: dict[str, Any],
    bm25: dict[str, Any],
    query: HybridQuery,
    normalization: Normalization = NORMALIZATION,
) -> dict[str, Any]:
    """The fused top ``query.k``, ids-only: the two legs (built by :mod:`requests`, filters included)
    as the ``hybrid`` query's sub-queries, each leg's depth (``pagination_depth``) its candidates."""
    depth = max(query.candidates, query.k)
    return rq.ids_only(
        {
            "size": query.k,
            "query": {"hybrid": {"pagination_depth": depth, "queries": [knn["query"], bm25["query"]]}},
            "search_pipeline": pipeline(query, normalization),
        }
    )


def fused_hits(resp: dict[str, Any]) -> list[Fused]:
    """The fused hits of an ids-only hybrid search, best first."""
    out = []
    for h in resp["hits"]["hits"]:
        f = h["fields"]
        doc = f["document_id"][0]
        gen = int(f.get("generation", [0])[0])
        out.append(Fused(chunk_id(doc, f["sequence_number"][0]), doc, gen, float(h["_score"])))
    return out


def search(store: OpenSearchVectorStore, query: HybridQuery) -> list[SearchHit]:
    """``query`` fused by the node, under the store's visibility rule (see ``OpenSearchVectorStore.search``):
    a hit below its fence (a view older than a publish) runs the search once more; a fused hit of an
    unpublished generation is dropped and the search runs again with that document's other generations
    refused in both legs, so ``k`` hits come back when ``k`` exist. Ranks and leg scores come from the
    legs, at published generations only."""
    from ragline.adapters.opensearch.store import FENCE_RETRIES, _chunk, _leg_hits, _LegHit

    knn = rq.ids_only(store._knn(query.vector, query.candidates, query))
    bm25 = rq.ids_only(store.keyword_body(query.text, query.candidates, query))
    off: set[str] = set()
    fences: dict[str, int] = {}
    stale_retried = False
    for attempt in range(FENCE_RETRIES + 1):
        exclude = unpublished(fences, off)
        sem_q, kw_q = excluding(knn, exclude), excluding(bm25, exclude)
        f_resp, s_resp, k_resp = store._msearch(
            [hybrid_search(sem_q, kw_q, query, store._p.hybrid_normalization), sem_q, kw_q]
        )
        fused, legs = fused_hits(f_resp), [_leg_hits(s_resp, "semantic"), _leg_hits(k_resp, "keyword")]
        fences = store._fences({h.document_id for h in fused} | {h.document_id for leg in legs for h in leg})
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
    sources = store._read(
        [h.chunk_id for h in kept],
        {h.chunk_id: _LegHit(h.chunk_id, h.document_id, h.generation, h.score, None) for h in kept},
    )
    out = []
    for h in kept:
        if h.chunk_id not in sources:
            continue  # deleted between the search and the read
        s_rank, s_score = sem.get(h.chunk_id, (None, None))
        k_rank, k_score = kw.get(h.chunk_id, (None, None))
        bd = ScoreBreakdown(semantic_rank=s_rank, semantic_score=s_score, keyword_rank=k_rank,
                            keyword_score=k_score, fused_score=h.score)  # fmt: skip
        out.append(SearchHit(chunk=_chunk(sources[h.chunk_id]), score=h.score, breakdown=bd))
    return out
