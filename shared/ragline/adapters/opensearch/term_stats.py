"""Tenant-true BM25 in a pooled index: each scope's own term statistics, applied at query time.

Lucene scores BM25 with the *shard's* statistics — document count, each term's document frequency,
the average length — which in a pooled index are every tenant's: one tenant uploading a library
moves another's keyword ranking. The embedded store keeps statistics per scope
(:mod:`ragline.adapters.embedded.bm25`); here the same is done on the node:

1. the query is analysed by the index's own analyzer (``_analyze``, cached per text);
2. one size-0 search under the scope's filter counts the scope's chunks, sums their analysed
   lengths (the ``text.tokens`` ``token_count`` sub-field, written at index time) and counts each
   query term's documents (a ``filters`` aggregation of ``term`` queries);
3. the keyword query scores each distinct term as its own clause: the ``text`` field's *scripted*
   similarity (:data:`SCRIPT`) computes BM25's term-frequency part with the scope's average length,
   which the clause passes as its boost, and a ``function_score`` weight multiplies in the scope's
   idf × (k1 + 1) — OpenSearch's default BM25 (Lucene's legacy form) exactly, float32 as Lucene
   rounds it, so a scope's scores equal those of the same chunks alone in an index of their own.

Statistics cover every chunk of the scope (tenant + namespace), whatever a query's filters, as an
index of the scope's own would; deleted chunks drop out at once (Lucene's own counts keep them
until a merge). An index created before this mapping has neither the similarity nor the length
field: :func:`supported` says so and the store falls back to a plain ``match`` (shard statistics).
"""

from __future__ import annotations

import copy
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragline.domain.models import TenantScope

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

SIMILARITY = "ragline_scope_bm25"
ANALYZER = "ragline_text"
LENGTH_FIELD = "text.tokens"
K1, B = 1.2, 0.75
"""OpenSearch's BM25 defaults."""
SCRIPT = f"double f = doc.freq; return f / (f + {K1} * ({1 - B} + {B} * doc.length / query.boost));"
"""BM25's term-frequency part with the average length taken from the clause's boost (``doc.length``
is the norm Lucene stores, decoded as its own BM25 decodes it). Only the clauses
:func:`keyword_query` builds give the field a meaningful boost."""
ANALYSED_TEXTS = 4096
"""Query texts whose terms are kept per provider (the analyzer never changes for an index)."""


def similarity_settings() -> dict[str, Any]:
    """The index setting that declares :data:`SIMILARITY`."""
    return {SIMILARITY: {"type": "scripted", "script": {"source": SCRIPT}}}


def text_mapping() -> dict[str, Any]:
    """``text`` scored by :data:`SIMILARITY`, with its analysed length (tokens the analyzer emits,
    stop words not counted: Lucene's field length) as the ``tokens`` sub-field."""
    return {
        "type": "text",
        "analyzer": ANALYZER,
        "similarity": SIMILARITY,
        "fields": {
            "tokens": {"type": "token_count", "analyzer": ANALYZER, "enable_position_increments": False}
        },
    }


def without(body: dict[str, Any]) -> dict[str, Any]:
    """An index ``body`` without per-scope scoring: Lucene's BM25 on ``text`` (shard statistics),
    for a service that refuses the scripted similarity."""
    out = copy.deepcopy(body)
    out["settings"].pop("similarity", None)
    out["mappings"]["properties"]["text"] = {"type": "text", "analyzer": ANALYZER}
    return out


def supported(mapping: dict[str, Any]) -> bool:
    """Whether an index's mapping (a ``GET <index>/_mapping`` answer's ``mappings``) scores ``text``
    by scope: an older index has neither the similarity nor the length sub-field."""
    text = mapping.get("properties", {}).get("text", {})
    return text.get("similarity") == SIMILARITY and "tokens" in text.get("fields", {})


@dataclass(frozen=True, slots=True)
class ScopeStats:
    """A scope's ``docs`` (chunks with at least one term), their summed ``length`` and each query
    term's document frequency."""

    docs: int
    length: int
    df: dict[str, int]

    @property
    def avgdl(self) -> float:
        """Lucene's ``(float) (sumTotalTermFreq / (double) docCount)``."""
        return float(np.float32(self.length / self.docs)) if self.docs else 1.0

    def weight(self, term: str) -> float:
        """Lucene's float32 ``idf`` times its legacy BM25's ``(k1 + 1)`` boost."""
        n = self.df.get(term, 0)
        idf = np.float32(math.log(1 + (self.docs - n + 0.5) / (n + 0.5)))
        return float(np.float32(np.float32(1 + K1) * idf))


def scope_clauses(scope: TenantScope) -> list[dict[str, Any]]:
    return [{"term": {"tenant_id": scope.tenant_id}}, {"term": {"namespace_id": scope.namespace_id}}]


def stats_body(scope: TenantScope, terms: Sequence[str]) -> dict[str, Any]:
    """One size-0 search: the scope's chunk count (hits), summed length and each term's frequency."""
    return {
        "size": 0,
        "track_total_hits": True,
        "query": {"bool": {"filter": [*scope_clauses(scope), {"range": {LENGTH_FIELD: {"gte": 1}}}]}},
        "aggs": {
            "length": {"sum": {"field": LENGTH_FIELD}},
            "df": {"filters": {"filters": {str(i): {"term": {"text": t}} for i, t in enumerate(terms)}}},
        },
    }


def parse_stats(resp: dict[str, Any], terms: Sequence[str]) -> ScopeStats:
    aggs = resp["aggregations"]
    buckets = aggs["df"]["buckets"] if terms else {}
    return ScopeStats(
        docs=int(resp["hits"]["total"]["value"]),
        length=int(aggs["length"]["value"]),
        df={t: int(buckets[str(i)]["doc_count"]) for i, t in enumerate(terms)},
    )


def keyword_query(terms: Sequence[str], stats: ScopeStats) -> dict[str, Any]:
    """The scope's BM25 over ``terms`` (the analysed query, repeats counting as Lucene's ``match``
    counts them): one clause per distinct term the scope holds, any of them matching."""
    avgdl = stats.avgdl
    clauses = [
        {
            "function_score": {
                "query": {"term": {"text": {"value": t, "boost": avgdl}}},
                "functions": [{"weight": n * stats.weight(t)}],
                "boost_mode": "multiply",
            }
        }
        for t, n in Counter(terms).items()
        if stats.df.get(t)
    ]
    return {"bool": {"should": clauses}} if clauses else {"match_none": {}}


class ScopeStatistics:
    """Per-scope keyword queries (the analyzer's terms cached per query text: every chunk index of a
    model has the same analyzer). ``index`` is where statistics are read unless a query names the
    concrete index its scope lives in — always, under an alias over several indexes (a pool's
    generations and silos): ``_analyze`` refuses an alias of several indexes, and a scope's statistics
    are those of the index it is served from, never summed with a copy a move left behind."""

    def __init__(self, client: OpenSearch, index: str) -> None:
        self.client = client
        self.index = index
        self._terms: OrderedDict[str, list[str]] = OrderedDict()
        self._lock = threading.Lock()

    def terms(self, text: str, index: str | None = None) -> list[str]:
        """``text`` as the index's analyzer cuts it (what a ``match`` query would search)."""
        with self._lock:
            if text in self._terms:
                self._terms.move_to_end(text)
                return self._terms[text]
        # GET, not the client's POST: AOSS documents only ``GET <index>/_analyze`` (aoss:ReadDocument)
        resp = self.client.transport.perform_request(
            "GET", f"/{index or self.index}/_analyze", body={"analyzer": ANALYZER, "text": text}
        )
        terms = [t["token"] for t in resp.get("tokens", [])]
        with self._lock:
            self._terms[text] = terms
            while len(self._terms) > ANALYSED_TEXTS:
                self._terms.popitem(last=False)
        return terms

    def query(
        self, scope: TenantScope, text: str, routing: str | None, index: str | None = None
    ) -> dict[str, Any]:
        """The keyword clause for ``text`` scored with ``scope``'s statistics in ``index`` (two
        requests at most: the analysis, once per text, and the statistics)."""
        index = index or self.index
        terms = self.terms(text, index)
        if not terms:
            return {"match_none": {}}
        distinct = list(dict.fromkeys(terms))
        params = {"routing": routing} if routing else {}
        resp = self.client.search(index=index, body=stats_body(scope, distinct), **params)
        return keyword_query(terms, parse_stats(resp, distinct))
