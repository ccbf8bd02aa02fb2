"""OpenSearch's own ``hybrid`` query (neural-search plugin), fused on the node by a search pipeline.

Pure request builders and response readers for the ``hybrid="query"`` strategy of
:class:`~ragline.adapters.opensearch.store.OpenSearchVectorStore`, whose search with them is
:meth:`~ragline.adapters.opensearch.searching.Searching._node_fused`. One ``_msearch`` carries three
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
from typing import Any, Literal, NamedTuple

from ragline.adapters.opensearch import requests as rq
from ragline.domain.models import HybridQuery, chunk_id

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
