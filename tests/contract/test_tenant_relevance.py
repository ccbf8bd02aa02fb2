"""Tenant-true keyword ranking on a real node: a scope pooled with neighbours of other term statistics
ranks and scores exactly as the same scope alone in an index of its own (issue 39, item 2)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch import term_stats
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.models import KeywordQuery, SearchHit, TenantScope
from tests.contract.vector_store_contract import hybrid, make_chunks
from tests.support.vectors import DIM

pytestmark = [pytest.mark.contract, pytest.mark.opensearch]

TENANT = TenantScope(tenant_id="acme", namespace_id="docs")
OWN = [
    "bees pollinate clover and apple blossoms in spring",
    "a hive of bees keeps its queen warm through winter",
    "clover honey is light and the bees make it from white clover",
    "apple orchards rent hives so that bees pollinate the blossoms",
    "winter bees live longer than summer bees in the hive",
    "the queen lays eggs and workers feed the larvae honey",
    "short note on bees",
    "wasps are not bees although both sting and both visit blossoms in late summer afternoons",
]
QUERIES = [
    "bees",
    "clover honey",
    "queen bees winter",
    "apple blossoms pollinate",
    "summer wasps sting",
    "winter bees and summer bees",  # a repeated term: Lucene merges its clauses into one, boosted
    "honey honey honey clover",
]


def neighbours() -> list[tuple[TenantScope, list[str]]]:
    """Other tenants (and the tenant's other namespace) whose texts skew every statistic: 'bees'
    everywhere, long chunks, 'clover' rare, words the tenant never uses."""
    lib = [
        f"bees and bees again in chapter {i} of a long treatise on insects of the meadow" for i in range(40)
    ]
    lib += [f"the orchard ledger for year {i} lists apple prices and nothing else at all" for i in range(30)]
    return [
        (TenantScope(tenant_id="library", namespace_id="docs"), lib),
        (TenantScope(tenant_id="acme", namespace_id="other"), ["clover clover clover"] * 12),
        (TenantScope(tenant_id="tiny", namespace_id="docs"), ["queen"]),
    ]


@pytest.fixture
def providers(
    opensearch_url: str,
) -> Iterator[tuple[OpenSearchVectorStoreProvider, OpenSearchVectorStoreProvider]]:
    """The tenant alone in its own index, and the same chunks pooled with neighbours."""
    made = [
        OpenSearchVectorStoreProvider(
            build_client(Settings(opensearch_url=opensearch_url)),
            index=f"test-{uuid.uuid4().hex[:12]}",
            dimension=DIM,
        )
        for _ in range(2)
    ]
    alone, pooled = made
    for p in made:
        p.scoped(TENANT).upsert(make_chunks("own", OWN))
    for i, (scope, texts) in enumerate(neighbours()):
        pooled.scoped(scope).upsert(make_chunks(f"n{i}", texts))
    yield alone, pooled
    for p in made:
        p.drop()
        p.close()


def _same(got: list[tuple[str, float]], want: list[tuple[str, float]], text: str) -> None:
    """The same chunks in the same order, with the same scores (to 1e-5)."""
    assert [c for c, _ in got] == [c for c, _ in want], text
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-5), text


@pytest.fixture
def lucene(opensearch_url: str) -> Iterator[OpenSearchVectorStoreProvider]:
    """The tenant's chunks alone in an index of Lucene's own BM25 (the plain mapping): the reference."""
    client = build_client(Settings(opensearch_url=opensearch_url))
    plain = f"test-{uuid.uuid4().hex[:12]}"
    client.indices.create(index=plain, body=term_stats.without(rq.index_body(DIM)))
    old = OpenSearchVectorStoreProvider(client, index=plain, dimension=DIM)
    old.scoped(TENANT).upsert(make_chunks("own", OWN))
    assert old.scoped(TENANT)._p.scope_stats is None  # an index without the mapping: plain BM25
    yield old
    old.drop()
    old.close()


def _ranked(hits: list[SearchHit]) -> list[tuple[str, float]]:
    return [(h.chunk.id, h.score) for h in hits]


def test_pooled_keyword_ranking_and_scores_equal_alone(
    providers: tuple[OpenSearchVectorStoreProvider, OpenSearchVectorStoreProvider],
) -> None:
    alone, pooled = providers
    for text in QUERIES:
        want = _ranked(alone.scoped(TENANT).search(KeywordQuery(text=text, k=8)))
        got = _ranked(pooled.scoped(TENANT).search(KeywordQuery(text=text, k=8)))
        _same(got, want, text)


def test_pooled_hybrid_ranking_equals_alone(
    providers: tuple[OpenSearchVectorStoreProvider, OpenSearchVectorStoreProvider],
) -> None:
    alone, pooled = providers
    for text in QUERIES:
        want = alone.scoped(TENANT).search(hybrid(text, k=8))
        got = pooled.scoped(TENANT).search(hybrid(text, k=8))
        assert [(h.chunk.id, h.breakdown.keyword_rank) for h in got] == [
            (h.chunk.id, h.breakdown.keyword_rank) for h in want
        ], text


def test_scores_equal_lucene_bm25_alone(lucene: OpenSearchVectorStoreProvider) -> None:
    """The scope's scores are the node's own BM25 over the scope alone (a plain ``match`` in a
    one-tenant index of Lucene's similarity), not merely self-consistent."""
    old = lucene
    p = OpenSearchVectorStoreProvider(old.client, index=f"test-{uuid.uuid4().hex[:12]}", dimension=DIM)
    try:
        p.scoped(TENANT).upsert(make_chunks("own", OWN))
        # a neighbour with none of the query's terms: the scope is not alone (its statistics are read
        # and applied by the scripted similarity), and Lucene's own would still equal its statistics
        p.scoped(TenantScope(tenant_id="other", namespace_id="docs")).upsert(make_chunks("x", ["zzz"]))
        p.refresh_now()
        stats = p.scoped(TENANT)._p.scope_stats
        assert stats is not None and not stats.alone(TENANT, p.scoped(TENANT)._index)
        for text in QUERIES:
            want = _ranked(old.scoped(TENANT).search(KeywordQuery(text=text, k=8)))
            got = _ranked(p.scoped(TENANT).search(KeywordQuery(text=text, k=8)))
            _same(got, want, text)
    finally:
        p.drop()
        p.close()


class Spy:
    """The bodies of the searches a client sends (``search`` and ``_msearch``) that read statistics."""

    def __init__(self, provider: OpenSearchVectorStoreProvider, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads: list[dict[str, Any]] = []
        client = provider.client
        search, msearch = client.search, client.msearch

        def spied_search(*args: Any, **kwargs: Any) -> Any:
            self._seen([kwargs.get("body") or {}])
            return search(*args, **kwargs)

        def spied_msearch(*args: Any, **kwargs: Any) -> Any:
            self._seen(kwargs.get("body") or [])
            return msearch(*args, **kwargs)

        monkeypatch.setattr(client, "search", spied_search)
        monkeypatch.setattr(client, "msearch", spied_msearch)

    def _seen(self, bodies: list[dict[str, Any]]) -> None:
        self.reads += [b for b in bodies if "aggs" in b]


def test_a_scope_alone_in_its_index_is_ranked_by_lucene_without_reading_statistics_until_a_neighbour_comes(
    lucene: OpenSearchVectorStoreProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = lucene
    p = OpenSearchVectorStoreProvider(old.client, index=f"test-{uuid.uuid4().hex[:12]}", dimension=DIM)
    try:
        p.scoped(TENANT).upsert(make_chunks("own", OWN))
        spy = Spy(p, monkeypatch)
        # Given the scope alone in its index: Lucene's scores, no statistics read
        alone = {}
        for text in QUERIES:
            want = _ranked(old.scoped(TENANT).search(KeywordQuery(text=text, k=8)))
            alone[text] = _ranked(p.scoped(TENANT).search(KeywordQuery(text=text, k=8)))
            assert [c for c, _ in alone[text]] == [c for c, _ in want], text
            assert [s for _, s in alone[text]] == pytest.approx([s for _, s in want], rel=1e-5), text
            p.scoped(TENANT).search(hybrid(text, k=8))
        assert spy.reads == []
        # When this process writes a neighbour that skews every statistic, the very next searches read
        # the scope's own statistics, and rank and score as before
        for i, (scope, texts) in enumerate(neighbours()):
            p.scoped(scope).upsert(make_chunks(f"n{i}", texts))
        for text in QUERIES:
            got = _ranked(p.scoped(TENANT).search(KeywordQuery(text=text, k=8)))
            _same(got, alone[text], text)
        assert spy.reads, "the pooled scope's statistics were not read"
    finally:
        p.drop()
        p.close()


def test_an_index_of_the_older_similarity_alone_still_reads_its_scopes_statistics(
    lucene: OpenSearchVectorStoreProvider,
) -> None:
    """An index made before the similarity had the shard-statistics mode (its script reads the
    average length from every clause's boost) is never sent the shortcut's plain ``match``: the scope
    alone there still scores as Lucene's BM25 alone."""
    old, client = lucene, lucene.client
    legacy = f"test-{uuid.uuid4().hex[:12]}"
    body = rq.index_body(DIM)
    body["settings"]["similarity"] = {
        term_stats.LEGACY_SIMILARITY: {"type": "scripted", "script": {"source": term_stats.LEGACY_SCRIPT}}
    }
    body["mappings"]["properties"]["text"]["similarity"] = term_stats.LEGACY_SIMILARITY
    client.indices.create(index=legacy, body=body)
    before = OpenSearchVectorStoreProvider(client, index=legacy, dimension=DIM)
    try:
        before.scoped(TENANT).upsert(make_chunks("own", OWN))
        stats = before.scoped(TENANT)._p.scope_stats
        assert stats is not None and not stats.alone(TENANT, legacy, TENANT.tenant_id)
        for text in QUERIES:
            want = _ranked(old.scoped(TENANT).search(KeywordQuery(text=text, k=8)))
            got = _ranked(before.scoped(TENANT).search(KeywordQuery(text=text, k=8)))
            _same(got, want, text)
    finally:
        before.drop()  # the legacy index under the alias's name, its fences and its registry
        before.close()
