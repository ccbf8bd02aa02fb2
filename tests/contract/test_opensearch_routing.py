"""Tenant routing on a pooled index of several primaries: every request the store sends to the chunk
index names the tenant's route, and each search, count and sweep touches only the tenant's shards."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.models import KeywordQuery, TenantScope
from tests.contract.vector_store_contract import hybrid as hybrid_query
from tests.contract.vector_store_contract import make_chunks, semantic
from tests.support.vectors import DIM

pytestmark = [pytest.mark.contract, pytest.mark.opensearch]

ACME = TenantScope(tenant_id="acme", namespace_id="docs")
GLOBEX = TenantScope(tenant_id="globex", namespace_id="docs")


class Wire:
    """Every request the provider's client sends (method, path, params, body) and its answer."""

    def __init__(self, provider: OpenSearchVectorStoreProvider) -> None:
        self.sent: list[tuple[str, str, dict[str, Any], Any, Any]] = []
        transport = provider.client.transport
        real = transport.perform_request

        def spy(method: str, url: str, headers: Any = None, params: Any = None, body: Any = None) -> Any:
            answer = real(method, url, headers=headers, params=params, body=body)
            self.sent.append((method, url, dict(params or {}), body, answer))
            return answer

        transport.perform_request = spy  # type: ignore[method-assign]

    def chunk_requests(self, index: str) -> list[tuple[str, str, dict[str, Any], Any, Any]]:
        return [r for r in self.sent if r[1].startswith(f"/{index}/")]


def _lines(body: Any) -> list[dict[str, Any]]:
    if isinstance(body, list):
        return body
    text = body.decode() if isinstance(body, bytes) else body
    if isinstance(text, str):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [body]


def check_routed(wire: Wire, index: str, shards_per_tenant: int) -> int:
    """Every search, count and deletion of the chunk index carried the tenant's routing and touched
    ``shards_per_tenant`` shards; every chunk-index action of a ``_bulk``, ``_mget`` or ``_msearch``
    carried one. Returns how many requests were checked."""
    checked = 0
    for _method, url, params, body, answer in wire.sent:
        endpoint = url.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        if url.startswith(f"/{index}/") and endpoint in ("_search", "_count", "_delete_by_query"):
            routing = params.get("routing")
            routing = routing.decode() if isinstance(routing, bytes) else routing
            assert routing in (ACME.tenant_id, GLOBEX.tenant_id), url
            if "_shards" in answer:
                assert answer["_shards"]["total"] == shards_per_tenant, (url, answer["_shards"])
            checked += 1
        elif endpoint == "_msearch":
            heads = _lines(body)[0::2]
            assert all(h["index"] == index and h["routing"] for h in heads), heads
            for item in answer["responses"]:
                assert item["_shards"]["total"] == shards_per_tenant
            checked += 1
        elif endpoint == "_mget":
            docs = [d for d in _lines(body)[0]["docs"] if d["_index"] == index]
            assert all(d.get("routing") for d in docs), docs
            checked += 1
        elif endpoint == "_bulk":
            for line in _lines(body):
                action = next(iter(line.values())) if len(line) == 1 else {}
                if isinstance(action, dict) and action.get("_index") == index:
                    assert action.get("routing"), line
            checked += 1
    return checked


@pytest.fixture(params=[(3, 1), (4, 2)], ids=["3-shards", "4-shards-partition-2"])
def sharded(opensearch_url: str, request: pytest.FixtureRequest) -> Iterator[OpenSearchVectorStoreProvider]:
    shards, partition = request.param
    p = OpenSearchVectorStoreProvider(
        build_client(Settings(opensearch_url=opensearch_url)),
        index=f"test-{uuid.uuid4().hex[:12]}",
        dimension=DIM,
        shards=shards,
        routing_partition_size=partition,
        hybrid="msearch",
    )
    yield p
    p.drop()
    p.close()


def test_every_path_of_a_tenant_touches_only_its_shards(sharded: OpenSearchVectorStoreProvider) -> None:
    """Given two tenants on a pooled index of several primaries, writes, publishes, every kind of
    search, counts, neighbours, vectors, deletions and a purge each name the tenant's route, and each
    search touches one shard (or the partition's); nothing fans out to every shard."""
    p = sharded
    p.ensure_index()
    pool = p.placements.pool()
    assert pool is not None
    settings = p.client.indices.get_settings(index=pool)[pool]["settings"]["index"]
    assert int(settings["number_of_shards"]) == p.shards
    wire = Wire(p)
    for scope in (ACME, GLOBEX):
        store = p.scoped(scope)
        texts = [f"{scope.tenant_id} bees pollinate flowers {i}" for i in range(40)]
        store.upsert(make_chunks("d", texts), generation=1)
        assert store.publish("d", generation=1)
        store.upsert(make_chunks("e", ["queen colony"]), generation=1)
        assert store.publish("e", generation=1)
    acme = p.scoped(ACME)
    assert len(acme.search(KeywordQuery(text="bees", k=5))) == 5
    assert len(acme.search(semantic("bees pollinate", k=5))) == 5
    assert len(acme.search(hybrid_query("bees pollinate", k=5))) == 5
    assert acme.count() == 41 and acme.count("d") == 40
    assert [c.sequence_number for c in acme.neighbors("d", 10, before=1, after=1)] == [9, 10, 11]
    assert len(acme.vectors("e")) == 1
    assert acme.delete_document("e") == 1 and acme.count() == 40
    acme.upsert(make_chunks("d", ["only one"]), generation=2)
    assert acme.publish("d", generation=2) and acme.count() == 1  # the sweep of 40 older chunks
    assert p.purge_tenant(GLOBEX.tenant_id) == 41
    assert p.scoped(GLOBEX).count() == 0 and acme.count() == 1
    assert check_routed(wire, pool, p.routing_partition_size) >= 20


def test_a_partition_spreads_a_tenant_over_its_shards_only(sharded: OpenSearchVectorStoreProvider) -> None:
    """The chunks of one tenant sit on ``routing_partition_size`` shards of the index: one shard when
    it is 1 (a small tenant's search reads one shard), more when a partition spreads it."""
    p = sharded
    store = p.scoped(ACME)
    store.upsert(make_chunks("d", [f"chunk {i}" for i in range(60)]))
    p.refresh_now()
    shards = p.client.cat.shards(index=p.placements.pool(), format="json", h="shard,prirep,docs")
    holding = {s["shard"] for s in shards if s["prirep"] == "p" and int(s["docs"] or 0) > 0}
    assert len(holding) == p.routing_partition_size
    assert (
        rq.index_body(DIM, shards=4, routing_partition_size=2)["settings"]["index"]["routing_partition_size"]
        == 2
    )


def test_a_partition_as_wide_as_the_index_is_refused(opensearch_url: str) -> None:
    """OpenSearch allows a routing partition only below the number of shards: refused at once."""
    from ragline import errors

    with pytest.raises(errors.ConfigurationError):
        OpenSearchVectorStoreProvider(
            build_client(Settings(opensearch_url=opensearch_url)),
            index="never-made",
            dimension=DIM,
            shards=2,
            routing_partition_size=2,
        )
