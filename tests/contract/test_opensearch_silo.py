"""The silo tier on a real node: a tenant named by the setting, or one past the automatic threshold,
is moved by the same move to an index of its own; the pool's other tenants stay where they are."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from ragline.adapters.opensearch import placement as pl
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider
from ragline.config import Settings
from ragline.domain.models import KeywordQuery, SemanticQuery, TenantScope
from tests.contract.vector_store_contract import make_chunks
from tests.support.vectors import DIM

pytestmark = [pytest.mark.contract, pytest.mark.opensearch]


@pytest.fixture
def provider(opensearch_url: str, request: pytest.FixtureRequest) -> Iterator[OpenSearchVectorStoreProvider]:
    settings = Settings(
        opensearch_url=opensearch_url,
        opensearch_index_prefix=f"test-{uuid.uuid4().hex[:8]}",
        opensearch_shards=2,
        opensearch_growth_interval=0,
        opensearch_placement_ttl=0.2,
        opensearch_silo_chunks=20,
        opensearch_silo_tenants=["bigco"],
    )
    p = OpenSearchVectorStoreProvider.from_settings(settings, dimension=DIM, model_id="m")
    assert p.growth.silo_chunks == 20 and p.growth.silo_tenants == {"bigco"}
    yield p
    p.drop()
    p.close()


def _publish(p: OpenSearchVectorStoreProvider, tenant: str, doc: str, n: int) -> None:
    store = p.scoped(TenantScope(tenant_id=tenant, namespace_id="docs"))
    store.upsert(make_chunks(doc, [f"{tenant} bees {doc} {i}" for i in range(n)]), generation=1)
    assert store.publish(doc, generation=1)


def _in(p: OpenSearchVectorStoreProvider, index: str, tenant: str) -> int:
    body = {"query": {"term": {"tenant_id": tenant}}}
    return int(p.client.count(index=index, body=body, routing=tenant)["count"])


def test_a_tenant_named_by_the_setting_and_one_past_the_threshold_get_indexes_of_their_own(
    provider: OpenSearchVectorStoreProvider,
) -> None:
    p = provider
    g1 = pl.generation_index(p.index, 1)
    made: list[tuple[str, bool]] = []
    create = p.create_chunk_index

    def recorded(name: str, *, shards: int | None = None, silo: bool = False) -> None:
        made.append((name, silo))
        create(name, shards=shards, silo=silo)

    p.create_chunk_index = recorded  # type: ignore[method-assign]
    # Given a small tenant, a tenant named by the setting and one that grows
    _publish(p, "small", "s", 5)
    _publish(p, "bigco", "b", 3)
    _publish(p, "grower", "a", 10)
    # Then the named one lives in its own index at once (its first write's growth round moved it)
    assert p.placements.read("bigco").index == pl.silo_index(p.index, "bigco")
    assert p.placements.read("grower").index == g1 and p.placements.read("small").index == g1
    # and one under the threshold (20 chunks) stays in the pool, whatever the node has refreshed
    _publish(p, "grower", "b", 9)
    assert p.placements.read("grower").index == g1
    # When the growing tenant passes it, a growth round moves it too: the round after this write or
    # the next (a round counts what the node shows: the 19 published chunks, and the 6 new ones once
    # the node's own refresh, every second, has shown them — a race a test must not bet on)
    _publish(p, "grower", "c", 6)
    _publish(p, "grower", "d", 1)
    silo = pl.silo_index(p.index, "grower")
    assert p.placements.read("grower").index == silo
    assert p.placements.read("small").index == g1
    # and each index of its own was made as a silo (on faiss: a graph on every segment)
    assert (silo, True) in made and (pl.silo_index(p.index, "bigco"), True) in made
    # and every tenant reads all its chunks, from where it lives
    for tenant, n in (("small", 5), ("bigco", 3), ("grower", 26)):
        store = p.scoped(TenantScope(tenant_id=tenant, namespace_id="docs"))
        assert store.count() == n
        assert len(store.search(KeywordQuery(text="bees", k=50))) == n
    assert _in(p, silo, "grower") == 26 and set(p.placements.indexes()) >= {g1, silo}
    # and the copies left in the pool are deleted after the grace
    time.sleep(p.growth.grace)
    p.growth.reap()
    assert _in(p, g1, "grower") == 0 and _in(p, g1, "bigco") == 0 and _in(p, g1, "small") == 5
    assert p.purge_tenant("grower") == 26


def test_a_moved_tenant_is_scored_with_its_own_statistics_where_it_lives_now(
    provider: OpenSearchVectorStoreProvider, opensearch_url: str
) -> None:
    """After a move the alias covers several indexes and the pool still holds the old copy until the
    grace ends: a keyword search reads the statistics of the index the tenant lives in, once — its
    scores equal the same chunks alone in an index of their own (red when the statistics go to the
    alias: ``_analyze`` refuses an alias of several indexes, and a search over it counts both copies)."""
    p = provider
    # Given a tenant past the threshold in the pool, written with growth paused (a round after the
    # first write could otherwise see its 21 chunks or not, as the node's own refresh falls)
    interval, p.growth_interval = p.growth_interval, None
    _publish(p, "small", "s", 5)
    _publish(p, "grower", "a", 21)
    _publish(p, "grower", "b", 1)
    assert p.placements.read("grower").index == pl.generation_index(p.index, 1)
    # When a round runs, it moves the tenant to an index of its own
    p.growth_interval = interval
    assert p.grow("grower") is not None
    assert p.placements.read("grower").index == pl.silo_index(p.index, "grower")
    assert _in(p, pl.generation_index(p.index, 1), "grower") == 22  # the old copy, until the grace ends
    alone = OpenSearchVectorStoreProvider.from_settings(
        Settings(opensearch_url=opensearch_url, opensearch_index_prefix=f"test-{uuid.uuid4().hex[:8]}"),
        dimension=DIM,
        model_id="m",
    )
    try:
        _publish(alone, "grower", "a", 21)
        _publish(alone, "grower", "b", 1)
        scope = TenantScope(tenant_id="grower", namespace_id="docs")
        for text in ("bees", "grower b", "a 7"):
            want = [(h.chunk.id, h.score) for h in alone.scoped(scope).search(KeywordQuery(text=text, k=30))]
            got = [(h.chunk.id, h.score) for h in p.scoped(scope).search(KeywordQuery(text=text, k=30))]
            assert [c for c, _ in got] == [c for c, _ in want], text
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-5), text
        # and the copy carries the vectors, which the index keeps only in the graph (derived source)
        assert p.growth.reap(now=time.time() + 3600) == 22  # the pool's copy gone: the silo's alone
        moved, own = p.scoped(scope).vectors("a"), alone.scoped(scope).vectors("a")
        assert len(moved) == 21
        assert {t: v.tolist() for t, v in moved.items()} == {t: v.tolist() for t, v in own.items()}
        semantic = SemanticQuery(text="q", vector=tuple(next(iter(own.values())).tolist()), k=3)
        assert [h.chunk.id for h in p.scoped(scope).search(semantic)] == [
            h.chunk.id for h in alone.scoped(scope).search(semantic)
        ]
    finally:
        alone.drop()
        alone.close()
