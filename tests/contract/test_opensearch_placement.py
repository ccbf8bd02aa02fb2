"""The placement registry on a real node: the model's name is an alias over its chunk indexes, each
tenant is pinned where it first wrote, and a reader whose cached placement is stale still reads the
tenant where it lives now."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from ragline import errors
from ragline.adapters.opensearch import placement as pl
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.models import KeywordQuery, TenantScope
from tests.contract.vector_store_contract import hybrid, make_chunks
from tests.support.vectors import DIM

pytestmark = [pytest.mark.contract, pytest.mark.opensearch]

ACME = TenantScope(tenant_id="acme", namespace_id="docs")
GLOBEX = TenantScope(tenant_id="globex", namespace_id="docs")


def _provider(url: str, index: str, **kw: object) -> OpenSearchVectorStoreProvider:
    client = build_client(Settings(opensearch_url=url))
    return OpenSearchVectorStoreProvider(client, index=index, dimension=DIM, shards=2, **kw)  # type: ignore[arg-type]


@pytest.fixture
def index_name() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def writer(opensearch_url: str, index_name: str) -> Iterator[OpenSearchVectorStoreProvider]:
    p = _provider(opensearch_url, index_name)
    yield p
    p.drop()
    p.close()


def _publish(p: OpenSearchVectorStoreProvider, scope: TenantScope, doc: str, texts: list[str]) -> None:
    store = p.scoped(scope)
    store.upsert(make_chunks(doc, texts), generation=1)
    assert store.publish(doc, generation=1)


def test_the_name_is_an_alias_and_each_tenant_stays_where_it_first_wrote(
    writer: OpenSearchVectorStoreProvider,
) -> None:
    """Given the pool's first generation behind the model's alias, when a larger generation becomes
    the pool, a tenant that wrote before keeps reading (and writing) its chunks where they are, and a
    new tenant is placed in the new generation."""
    _publish(writer, ACME, "a", ["bees pollinate flowers"])
    g1 = pl.generation_index(writer.index, 1)
    assert writer.client.indices.get_alias(name=writer.index).keys() == {g1}
    assert writer.placements.read("acme") == pl.Place(g1, writer.placements.read("acme").version)
    # When a second generation becomes the pool
    g2 = pl.generation_index(writer.index, 2)
    writer.create_chunk_index(g2)
    writer.placements.add_index(g2, pool=True)
    assert writer.placements.indexes() == [g1, g2]
    # Then acme stays in g1, globex (first write now) goes to g2
    _publish(writer, GLOBEX, "g", ["queen colony"])
    assert writer.placements.read("acme").index == g1 and writer.placements.read("globex").index == g2
    assert writer.client.count(index=g2, routing="globex")["count"] == 1
    assert [h.chunk.text for h in writer.scoped(ACME).search(KeywordQuery(text="bees"))] == [
        "bees pollinate flowers"
    ]
    assert writer.scoped(GLOBEX).count() == 1
    # and a purge reaches every generation of the model
    assert writer.purge_tenant("acme") == 1 and writer.scoped(ACME).count() == 0


def test_a_reader_with_a_stale_placement_reads_where_the_tenant_lives_now(
    opensearch_url: str, writer: OpenSearchVectorStoreProvider
) -> None:
    """Given a reader that cached acme's placement for an hour, when acme's chunks are copied to an
    index of their own, its placement flipped and the old copy deleted at once (no grace at all), the
    reader's searches, neighbours and counts still find every chunk: the placement read beside the
    fences (or after a count) shows the change, and the read runs again there."""
    _publish(writer, ACME, "a", ["bees pollinate flowers", "queen colony hums"])
    reader = _provider(opensearch_url, writer.index, placement_ttl=3600.0)
    try:
        g1 = pl.generation_index(writer.index, 1)
        assert reader.scoped(ACME).count() == 2  # cached: g1
        silo = pl.silo_index(writer.index, "acme")
        writer.create_chunk_index(silo)
        writer.placements.add_index(silo)
        writer.client.reindex(
            body={
                "source": {"index": g1, "query": {"term": {"tenant_id": "acme"}}},
                "dest": {"index": silo, "version_type": "external", "routing": "=acme"},
            },
            refresh=True,
        )
        place = writer.placements.for_write("acme")
        writer.placements.write("acme", place, index=silo, moving=None)
        writer.client.delete_by_query(
            index=g1,
            body={"query": {"term": {"tenant_id": "acme"}}},
            routing="acme",
            refresh=True,
            _source_excludes=rq.SOURCE_EXCLUDES,  # derived source: hits keep their _routing only so
        )
        store = reader.scoped(ACME)
        assert store._place.index == g1  # still the stale placement
        assert len(store.search(hybrid("bees queen", k=5))) == 2
        assert len(reader.scoped(ACME).search(KeywordQuery(text="bees"))) == 1
        assert [c.text for c in reader.scoped(ACME).neighbors("a", 0)] == [
            "bees pollinate flowers",
            "queen colony hums",
        ]
        stale = _provider(opensearch_url, writer.index, placement_ttl=3600.0)
        stale.placements.remember("acme", pl.Place(g1, place.version))
        assert stale.scoped(ACME).count() == 2
        stale.close()
    finally:
        reader.close()


def test_a_write_waits_out_a_move_and_undoes_one_abandoned_past_its_lease(
    writer: OpenSearchVectorStoreProvider,
) -> None:
    """A tenant being moved: its writes wait (here: past their wait, a retryable Throttled); a move
    older than the lease (its mover died) is undone by the next write, which then goes ahead where
    the tenant lives."""
    from ragline import errors

    _publish(writer, ACME, "a", ["bees"])
    place = writer.placements.for_write("acme")
    g1 = place.index
    moving = writer.placements.write("acme", place, index=g1, moving=pl.silo_index(writer.index, "acme"))
    with pytest.raises(errors.Throttled):
        writer.placements.for_write("acme", wait=0.3)
    # When the move is older than the lease
    doc = writer.client.get(index=writer.placements.registry, id=pl.tenant_doc_id("acme"))
    writer.client.index(
        index=writer.placements.registry,
        id=pl.tenant_doc_id("acme"),
        body={**doc["_source"], "since": moving.since - pl.MOVE_LEASE - 1},
        refresh=True,
    )
    # Then a write undoes it and goes ahead in g1
    _publish(writer, ACME, "b", ["more bees"])
    now = writer.placements.read("acme")
    assert now.index == g1 and now.moving is None
    assert writer.scoped(ACME).count() == 2


def test_a_new_tenants_first_writes_at_once_all_land(
    opensearch_url: str, writer: OpenSearchVectorStoreProvider
) -> None:
    """Several ingestion workers write their documents of a tenant never seen before at the same
    moment: each makes the tenant's placement document, one wins and the others take its answer (red
    when the 409 of a losing ``create`` escapes as a refusal: concurrent first uploads failed)."""
    scope = TenantScope(tenant_id="newco", namespace_id="docs")
    writer.ensure_index()  # the indexes exist (another tenant's uploads made them); the tenant is new
    writers = [_provider(opensearch_url, writer.index) for _ in range(6)]
    start = threading.Barrier(len(writers), timeout=60)

    def first_write(i: int) -> int:
        store = writers[i].scoped(scope)
        start.wait()
        return store.upsert(make_chunks(f"d{i}", [f"bees {i}"]), generation=1)

    try:
        with ThreadPoolExecutor(len(writers)) as pool:
            assert list(pool.map(first_write, range(len(writers)))) == [1] * len(writers)
    finally:
        for w in writers:
            w.close()
    assert writer.scoped(scope).count() == len(writers)
    assert writer.placements.read("newco").index == pl.generation_index(writer.index, 1)


def test_a_stale_placement_change_is_a_conflict(writer: OpenSearchVectorStoreProvider) -> None:
    """Compare-and-set on the tenant's placement: a change from a place another writer changed since is
    :class:`~ragline.errors.Conflict` (which callers expect and retry), not a refusal."""
    _publish(writer, ACME, "a", ["bees"])
    place = writer.placements.for_write("acme")
    writer.placements.write("acme", place, index=place.index, moving=None)
    with pytest.raises(errors.Conflict):
        writer.placements.write("acme", place, index=place.index, moving="elsewhere")


def test_an_index_made_before_generations_past_every_threshold_keeps_its_writes_and_says_it_cannot_grow(
    opensearch_url: str, index_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    client = build_client(Settings(opensearch_url=opensearch_url))
    client.indices.create(index=index_name, body=rq.index_body(DIM))  # the legacy index: the alias's name
    p = OpenSearchVectorStoreProvider(
        client, index=index_name, dimension=DIM, max_shard_chunks=4, silo_chunks=2, growth_interval=0
    )
    try:
        with caplog.at_level("WARNING", logger="ragline.adapters.opensearch.growth"):
            for d in range(3):  # 9 chunks: past the shard threshold, the tenant past the silo threshold
                _publish(p, ACME, f"d{d}", [f"bees {d} part {i}" for i in range(3)])
        assert p.placements.indexes() == [index_name]  # no generation, no silo: nothing could join it
        made = set(client.indices.get(index=f"{index_name}*"))
        assert made == {index_name, rq.fences_index(index_name), pl.registry_index(index_name)}
        assert p.scoped(ACME).count() == 9
        assert [h.chunk.text for h in p.scoped(ACME).search(KeywordQuery(text="bees 2 part 1", k=1))] == [
            "bees 2 part 1"
        ]
        said = [r for r in caplog.records if "cannot grow" in r.getMessage()]
        assert len(said) == 1  # once per process, not per write
    finally:
        p.drop()
        p.close()
