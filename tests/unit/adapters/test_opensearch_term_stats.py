"""Per-scope BM25 request builders (:mod:`ragline.adapters.opensearch.term_stats`), as plain dicts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch import term_stats as ts
from ragline.domain.models import MetadataFilter, TenantScope

pytestmark = pytest.mark.unit
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")


def test_stats_request_counts_the_scope_only_its_lengths_and_each_terms_documents() -> None:
    body = ts.stats_body(SCOPE, ["bee", "honey"])
    assert body["size"] == 0 and body["track_total_hits"] is True
    assert body["query"]["bool"]["filter"] == [
        {"term": {"tenant_id": "acme"}},
        {"term": {"namespace_id": "docs"}},
        {"range": {"text.tokens": {"gte": 1}}},
    ]
    assert body["aggs"]["length"] == {"sum": {"field": "text.tokens"}}
    assert body["aggs"]["df"]["filters"]["filters"] == {
        "0": {"term": {"text": "bee"}},
        "1": {"term": {"text": "honey"}},
    }


def test_parse_stats_reads_count_length_and_frequencies() -> None:
    resp = {
        "hits": {"total": {"value": 4, "relation": "eq"}},
        "aggregations": {
            "length": {"value": 30.0},
            "df": {"buckets": {"0": {"doc_count": 3}, "1": {"doc_count": 0}}},
        },
    }
    stats = ts.parse_stats(resp, ["bee", "wasp"])
    assert (stats.docs, stats.length, stats.df) == (4, 30, {"bee": 3, "wasp": 0})
    assert stats.avgdl == 7.5


def test_weight_is_lucenes_float32_idf_times_k1_plus_one() -> None:
    stats = ts.ScopeStats(docs=10, length=100, df={"bee": 3})
    idf = np.float32(math.log(1 + (10 - 3 + 0.5) / (3 + 0.5)))
    assert stats.weight("bee") == float(np.float32(np.float32(2.2) * idf))


def test_keyword_query_has_one_clause_per_held_term_repeats_weighing_more() -> None:
    stats = ts.ScopeStats(docs=10, length=95, df={"bee": 3, "honey": 1, "wasp": 0})
    q = ts.keyword_query(["bee", "honey", "bee", "wasp"], stats)
    clauses = q["bool"]["should"]
    assert [c["function_score"]["query"]["term"]["text"]["value"] for c in clauses] == ["bee", "honey"]
    avgdl = float(np.float32(9.5))
    assert all(c["function_score"]["query"]["term"]["text"]["boost"] == avgdl for c in clauses)
    weights = [c["function_score"]["functions"][0]["weight"] for c in clauses]
    assert weights == [2 * stats.weight("bee"), stats.weight("honey")]


def test_a_query_the_scope_holds_no_term_of_matches_nothing() -> None:
    assert ts.keyword_query(["wasp"], ts.ScopeStats(docs=3, length=9, df={"wasp": 0})) == {"match_none": {}}


def test_bm25_search_takes_the_scoped_clause_in_place_of_match() -> None:
    scored = {"bool": {"should": [{"term": {"text": "bee"}}]}}
    body = rq.bm25_search(SCOPE, "bees", 5, MetadataFilter(), scored=scored)
    assert body["query"]["bool"]["must"] == [scored]
    plain = rq.bm25_search(SCOPE, "bees", 5, MetadataFilter())
    assert plain["query"]["bool"]["must"] == [{"match": {"text": {"query": "bees"}}}]


def test_the_mapping_scores_text_by_scope_and_keeps_its_length() -> None:
    body = rq.index_body(384)
    assert ts.supported(body["mappings"])
    assert body["settings"]["similarity"][ts.SIMILARITY]["type"] == "scripted"
    old = {"properties": {"text": {"type": "text", "analyzer": "ragline_text"}}}
    assert not ts.supported(old)


def test_without_gives_lucenes_bm25_and_leaves_the_body_alone() -> None:
    body = rq.index_body(384)
    plain = ts.without(body)
    assert "similarity" not in plain["settings"] and not ts.supported(plain["mappings"])
    assert plain["mappings"]["properties"]["text"] == {"type": "text", "analyzer": "ragline_text"}
    assert ts.supported(body["mappings"])
