"""The ``hybrid`` query strategy's request builders and response reader, as plain dicts (no cluster)."""

from __future__ import annotations

import pytest

from ragline.adapters.opensearch import hybrid as hq
from ragline.adapters.opensearch import requests as rq
from ragline.domain.models import HybridQuery, MetadataFilter, TenantScope

pytestmark = pytest.mark.unit
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
SCOPE_CLAUSES = [{"term": {"tenant_id": "acme"}}, {"term": {"namespace_id": "docs"}}]


def _legs(k: int = 100) -> tuple[dict[str, object], dict[str, object]]:
    return rq.knn_search(SCOPE, [0.1, 0.2], k, MetadataFilter(), candidates=100), rq.bm25_search(
        SCOPE, "solar panels", k, MetadataFilter()
    )


def test_convex_fusion_is_a_normalization_processor_with_the_query_alpha_as_weights() -> None:
    q = HybridQuery(text="t", vector=(0.1,), fusion="convex", alpha=0.3)
    assert hq.pipeline(q) == {
        "phase_results_processors": [
            {
                "normalization-processor": {
                    "normalization": {"technique": "min_max"},
                    "combination": {"technique": "arithmetic_mean", "parameters": {"weights": [0.3, 0.7]}},
                }
            }
        ]
    }
    assert hq.pipeline(q, "l2")["phase_results_processors"][0]["normalization-processor"][
        "normalization"
    ] == {"technique": "l2"}


def test_rrf_fusion_is_the_score_ranker_with_the_query_rank_constant() -> None:
    q = HybridQuery(text="t", vector=(0.1,), fusion="rrf", rrf_k=17)
    assert hq.pipeline(q) == {
        "phase_results_processors": [
            {"score-ranker-processor": {"combination": {"technique": "rrf", "rank_constant": 17}}}
        ]
    }


def test_hybrid_search_carries_both_filtered_legs_the_pipeline_and_asks_ids_only() -> None:
    q = HybridQuery(text="solar panels", vector=(0.1, 0.2), k=10, candidates=100)
    knn, bm25 = _legs()
    body = hq.hybrid_search(knn, bm25, q)
    hybrid = body["query"]["hybrid"]
    assert body["size"] == 10 and hybrid["pagination_depth"] == 100
    sem, kw = hybrid["queries"]
    assert sem["knn"]["embedding"]["filter"]["bool"]["filter"] == SCOPE_CLAUSES  # inside the kNN clause
    assert kw["bool"]["filter"] == SCOPE_CLAUSES and kw["bool"]["must"] == [
        {"match": {"text": {"query": "solar panels"}}}
    ]
    assert body["search_pipeline"] == hq.pipeline(q)
    assert body["_source"] is False and body["docvalue_fields"] == rq.ID_FIELDS


def test_a_k_above_the_candidates_deepens_each_leg() -> None:
    q = HybridQuery(text="t", vector=(0.1, 0.2), k=200, candidates=100)
    assert hq.hybrid_search(*_legs(), q)["query"]["hybrid"]["pagination_depth"] == 200


def test_unpublished_generations_are_refused_inside_the_knn_filter_and_the_bm25_bool() -> None:
    knn, bm25 = _legs()
    clauses = hq.unpublished({"d1": 3}, ["d2", "d1", "d1"])
    assert clauses == [
        {"bool": {"filter": [{"term": {"document_id": "d1"}}], "must_not": [{"term": {"generation": 3}}]}},
        {"bool": {"filter": [{"term": {"document_id": "d2"}}], "must_not": [{"term": {"generation": 0}}]}},
    ]
    k = hq.excluding(knn, clauses)["query"]["knn"]["embedding"]
    assert k["filter"]["bool"] == {"filter": SCOPE_CLAUSES, "must_not": clauses}
    assert k["k"] == knn["query"]["knn"]["embedding"]["k"]
    assert hq.excluding(bm25, clauses)["query"]["bool"]["must_not"] == clauses
    assert hq.excluding(knn, []) is knn
    assert "must_not" not in knn["query"]["knn"]["embedding"]["filter"]["bool"]  # the input is not mutated


def test_fused_hits_read_the_doc_values_and_the_fused_score() -> None:
    resp = {
        "hits": {
            "hits": [
                {"_score": 0.9, "fields": {"document_id": ["d1"], "sequence_number": [4], "generation": [2]}},
                {"_score": 0.1, "fields": {"document_id": ["d2"], "sequence_number": [0]}},
            ]
        }
    }
    assert hq.fused_hits(resp) == [hq.Fused("d1#4", "d1", 2, 0.9), hq.Fused("d2#0", "d2", 0, 0.1)]


def test_the_strategy_is_a_setting_and_msearch_by_default() -> None:
    from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider
    from ragline.config import Settings

    def build(**kw: object) -> OpenSearchVectorStoreProvider:
        settings = Settings(opensearch_url="http://127.0.0.1:9", **kw)  # type: ignore[arg-type]
        return OpenSearchVectorStoreProvider.from_settings(settings, dimension=4, model_id="m")

    assert build().hybrid == "msearch"
    assert build(opensearch_hybrid="query").hybrid == "query"
