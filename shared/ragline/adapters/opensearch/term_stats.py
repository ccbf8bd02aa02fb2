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

A scope **alone in its index** (a silo tenant's one namespace, a single-tenant deployment) is an
index of its own already: its statistics are the shard's. Its keyword leg is a ``match`` whose boost,
:data:`OWN_STATISTICS`, tells the similarity to take the shard's own counts — Lucene's BM25 — so
neither the analysis nor the statistics search is needed and the leg rides in one ``_msearch`` with
the kNN leg (:meth:`ScopeStatistics.alone`, :func:`own_query`). Whether a scope is alone is read at
most every ``ttl`` seconds and forgotten when this process writes to the index: another process's
first write of a new scope there is seen within ``ttl``. An index made with the older similarity
(:data:`LEGACY_SIMILARITY`) always reads the scope's statistics.

Statistics cover every chunk of the scope (tenant + namespace), whatever a query's filters, as an
index of the scope's own would; deleted chunks drop out at once (Lucene's own counts keep them
until a merge). An index created before this mapping has neither the similarity nor the length
field: :func:`supported` says so and the store falls back to a plain ``match`` (shard statistics).
"""

from __future__ import annotations

import copy
import math
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragline.domain.models import TenantScope

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

SIMILARITY = "ragline_bm25"
"""The similarity of ``text`` in the indexes Ragline creates: :data:`WEIGHT_SCRIPT` and :data:`SCRIPT`."""
LEGACY_SIMILARITY = "ragline_scope_bm25"
"""The similarity of indexes made before :data:`OWN_STATISTICS` (scope statistics only)."""
ANALYZER = "ragline_text"
LENGTH_FIELD = "text.tokens"
K1, B = 1.2, 0.75
"""OpenSearch's BM25 defaults."""
OWN_STATISTICS = 1e-4
"""A clause boost below :data:`MODE_LIMIT` asks :data:`SIMILARITY` for Lucene's BM25 with the shard's
own statistics — what :func:`own_query` sends for a scope alone in its index. Lucene merges a query's
repeated terms into one clause boosted by their count, so the similarity sees a multiple of it
(at most 2,000 × for a 4,000-character query) and takes the count back from it."""
MODE_LIMIT = 0.75
"""Boosts below this are :data:`OWN_STATISTICS` modes; a scope's average length, the boost of
:func:`keyword_query`'s clauses, is never below 1 (every counted chunk has a token)."""
WEIGHT_SCRIPT = (
    f"if (query.boost < {MODE_LIMIT}) {{ double n = Math.round(query.boost / {OWN_STATISTICS});"
    f" float idf = (float) Math.log(1 + (field.docCount - term.docFreq + 0.5) / (term.docFreq + 0.5));"
    f" return (float) ((float) (n * {1 + K1}f) * idf); }} return 1.0;"
)
"""Once per term: in the own-statistics mode, Lucene's float weight — the term's count × (k1 + 1) ×
idf from the shard's counts; otherwise 1 (the clause's ``function_score`` weight carries the scope's)."""
SCRIPT = (
    f"double f = doc.freq; double avgdl = query.boost < {MODE_LIMIT} ? (float) (field.sumTotalTermFreq"
    f" / (double) field.docCount) : query.boost;"
    f" return weight * f / (f + {K1} * ({1 - B} + {B} * doc.length / avgdl));"
)
"""BM25's term-frequency part with the average length taken from the clause's boost, or (own
statistics) from the shard as Lucene rounds it (``doc.length`` is the norm Lucene stores, decoded as
its own BM25 decodes it), times :data:`WEIGHT_SCRIPT`'s weight. Only the clauses :func:`keyword_query`
and :func:`own_query` build give the field a meaningful boost."""
LEGACY_SCRIPT = f"double f = doc.freq; return f / (f + {K1} * ({1 - B} + {B} * doc.length / query.boost));"
ANALYSED_TEXTS = 4096
"""Query texts whose terms are kept per provider (the analyzer never changes for an index)."""
ALONE_SCOPES = 4096
"""Scopes whose :meth:`ScopeStatistics.alone` answer a provider keeps."""


def similarity_settings() -> dict[str, Any]:
    """The index setting that declares :data:`SIMILARITY`."""
    return {
        SIMILARITY: {
            "type": "scripted",
            "weight_script": {"source": WEIGHT_SCRIPT},
            "script": {"source": SCRIPT},
        }
    }


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
    return text.get("similarity") in (SIMILARITY, LEGACY_SIMILARITY) and "tokens" in text.get("fields", {})


def own_statistics(mapping: dict[str, Any]) -> bool:
    """Whether an index's ``text`` can also be scored with the shard's own statistics
    (:data:`OWN_STATISTICS`): not an index of :data:`LEGACY_SIMILARITY`."""
    return bool(mapping.get("properties", {}).get("text", {}).get("similarity") == SIMILARITY)


def own_query(text: str) -> dict[str, Any]:
    """Lucene's BM25 of ``text`` with the shard's own statistics (a ``match``: analysed on the node,
    repeated terms counting as a plain ``match`` counts them) — a scope alone in its index."""
    return {"match": {"text": {"query": text, "boost": OWN_STATISTICS}}}


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


def split_bodies(scope: TenantScope, terms: Sequence[str]) -> list[dict[str, Any]]:
    """:func:`stats_body` as two searches for one ``_msearch``: the scope's count and summed length —
    the same body for every query of the scope, so the node's request cache answers it until the
    shard next refreshes — and the terms' frequencies (none without terms)."""
    whole = stats_body(scope, terms)
    df = whole["aggs"].pop("df")
    if not terms:
        return [whole]
    return [whole, {"size": 0, "query": {"bool": {"filter": scope_clauses(scope)}}, "aggs": {"df": df}}]


def parse_split(resps: Sequence[dict[str, Any]], terms: Sequence[str]) -> ScopeStats:
    """The statistics read by :func:`split_bodies`' searches (their answers, in order)."""
    return ScopeStats(
        docs=int(resps[0]["hits"]["total"]["value"]),
        length=int(resps[0]["aggregations"]["length"]["value"]),
        df={
            t: int(resps[1]["aggregations"]["df"]["buckets"][str(i)]["doc_count"])
            for i, t in enumerate(terms)
        },
    )


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

    def __init__(self, client: OpenSearch, index: str, *, ttl: float = 30.0) -> None:
        self.client = client
        self.index = index
        self.ttl = ttl
        """Seconds an :meth:`alone` answer is kept."""
        self._terms: OrderedDict[str, list[str]] = OrderedDict()
        self._alone: OrderedDict[tuple[str, str, str], tuple[float, bool]] = OrderedDict()
        self._owns: dict[str, bool] = {}
        self._lock = threading.Lock()

    def alone(self, scope: TenantScope, index: str, routing: str | None = None) -> bool:
        """Whether ``scope``'s chunks are the only ones on its shard of ``index`` (``routing``: the
        shard the scope is routed to, which must hold all of its chunks; Lucene's statistics are a
        shard's) — its keyword leg then needs no statistics: see the module. Read at most every
        :attr:`ttl` seconds."""
        key = (index, scope.tenant_id, scope.namespace_id)
        now = time.monotonic()
        with self._lock:
            hit = self._alone.get(key)
            if hit is not None and now < hit[0]:
                return hit[1]
        alone = self._own(index)
        if alone:
            others = {"query": {"bool": {"must_not": [{"bool": {"filter": scope_clauses(scope)}}]}}}
            params = {"routing": routing} if routing else {}
            alone = int(self.client.count(index=index, body=others, **params)["count"]) == 0
        with self._lock:
            self._alone[key] = (now + self.ttl, alone)
            self._alone.move_to_end(key)
            while len(self._alone) > ALONE_SCOPES:
                self._alone.popitem(last=False)
        return alone

    def _own(self, index: str) -> bool:
        """Whether ``index`` scores with :data:`OWN_STATISTICS` (its mapping, read once)."""
        with self._lock:
            known = self._owns.get(index)
        if known is None:
            mappings = self.client.indices.get_mapping(index=index)
            known = all(own_statistics(m["mappings"]) for m in mappings.values())
            with self._lock:
                self._owns[index] = known
        return known

    def wrote(self, index: str) -> None:
        """This process wrote to ``index``: perhaps another scope's first chunks, so no scope there is
        taken as alone until read again."""
        with self._lock:
            for key in [k for k in self._alone if k[0] == index]:
                del self._alone[key]

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

    def reads(
        self, scope: TenantScope, text: str, index: str | None = None
    ) -> tuple[list[str], list[dict[str, Any]]]:
        """``text``'s terms and the searches (:func:`split_bodies`) that read ``scope``'s statistics
        for them in ``index``, for a caller that sends them beside another search (the kNN leg) and
        builds the keyword clause with :meth:`scored` (nothing to read when ``text`` has no terms)."""
        terms = self.terms(text, index or self.index)
        return terms, split_bodies(scope, list(dict.fromkeys(terms))) if terms else []

    @staticmethod
    def scored(terms: Sequence[str], resps: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The keyword clause of :meth:`reads`' terms from its searches' answers."""
        if not terms:
            return {"match_none": {}}
        return keyword_query(terms, parse_split(resps, list(dict.fromkeys(terms))))

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
