"""Per-scope BM25 request builders (:mod:`ragline.adapters.opensearch.term_stats`), as plain dicts."""

from __future__ import annotations

import math
from typing import Any

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


def test_split_reads_keep_the_scope_part_identical_for_every_query_so_the_request_cache_serves_it() -> None:
    first, second = ts.split_bodies(SCOPE, ["bee", "honey"]), ts.split_bodies(SCOPE, ["wasp"])
    assert first[0] == second[0]  # the same bytes for every query of the scope: one cache entry
    assert first[0]["aggs"] == {"length": {"sum": {"field": "text.tokens"}}}
    assert first[0]["query"] == ts.stats_body(SCOPE, [])["query"]
    assert first[1]["size"] == 0
    assert first[1]["query"]["bool"]["filter"] == ts.scope_clauses(SCOPE)
    assert first[1]["aggs"]["df"] == ts.stats_body(SCOPE, ["bee", "honey"])["aggs"]["df"]
    assert ts.split_bodies(SCOPE, []) == [first[0]]  # nothing to count without terms


def test_split_answers_read_as_the_one_request_does() -> None:
    scope = {"hits": {"total": {"value": 4, "relation": "eq"}}, "aggregations": {"length": {"value": 30.0}}}
    df = {"hits": {"total": {"value": 4}}, "aggregations": {"df": {"buckets": {"0": {"doc_count": 3}}}}}
    assert ts.parse_split([scope, df], ["bee"]) == ts.ScopeStats(docs=4, length=30, df={"bee": 3})
    clause = ts.ScopeStatistics.scored(["bee", "bee"], [scope, df])
    assert clause == ts.keyword_query(["bee", "bee"], ts.ScopeStats(docs=4, length=30, df={"bee": 3}))
    assert ts.ScopeStatistics.scored([], []) == {"match_none": {}}


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


def _mapping(similarity: str) -> dict[str, Any]:
    return {"properties": {"text": {"similarity": similarity, "fields": {"tokens": {"type": "token_count"}}}}}


def test_an_index_of_the_older_similarity_is_scored_by_scope_but_never_with_its_own_statistics() -> None:
    legacy, now = _mapping(ts.LEGACY_SIMILARITY), _mapping(ts.SIMILARITY)
    assert ts.supported(legacy) and ts.supported(now)
    assert not ts.own_statistics(legacy) and ts.own_statistics(now)

    class Client:
        counted = 0

        class indices:  # the client's namespace
            @staticmethod
            def get_mapping(index: str) -> dict[str, Any]:
                return {index: {"mappings": legacy if index == "old" else now}}

        def count(self, index: str, body: dict[str, Any], routing: str = "") -> dict[str, int]:
            Client.counted += 1
            return {"count": 0}

    stats = ts.ScopeStatistics(Client(), "alias")  # type: ignore[arg-type]
    assert not stats.alone(SCOPE, "old") and Client.counted == 0  # its script has no own-statistics mode
    assert stats.alone(SCOPE, "new") and Client.counted == 1
    assert stats.alone(SCOPE, "new") and Client.counted == 1  # kept for ttl
    stats.wrote("new")
    assert stats.alone(SCOPE, "new") and Client.counted == 2  # forgotten after this process's write


def test_own_statistics_is_a_boost_no_scope_average_length_can_take() -> None:
    assert 2000 * ts.OWN_STATISTICS < ts.MODE_LIMIT < 1 <= ts.ScopeStats(docs=3, length=3, df={}).avgdl
    assert ts.own_query("bees") == {"match": {"text": {"query": "bees", "boost": ts.OWN_STATISTICS}}}
