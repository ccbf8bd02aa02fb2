"""A data node killed (``kill -9``) on the 3-node cluster while chunks are written and searched.

Promises (docs/deploy.md, "Replicas and node loss"): no acknowledged write is lost; searches keep
answering, right, while the cluster is yellow (the client turns to another node, the node to another
copy); a write is never acknowledged from a lone copy of its shard (it waits for a second one, then
fails retryably); the replica on a surviving node is promoted; the node restarts, rejoins, and the
cluster is green again."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from ragline import errors
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.models import KeywordQuery, TenantScope
from tests.cluster.conftest import Cluster
from tests.contract.vector_store_contract import make_chunks
from tests.support.bulk_faults import BulkFaults
from tests.support.vectors import DIM

pytestmark = [pytest.mark.integration, pytest.mark.opensearch]

SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
SEEDED = 20
"""Documents written before the fault, one searchable word each (``seed<n>``)."""


@dataclass
class Traffic:
    """What the writer and the searcher saw, shared with the test."""

    stop: threading.Event = field(default_factory=threading.Event)
    acknowledged: list[str] = field(default_factory=list)
    """Chunk ids of every upsert that returned."""
    refused: int = 0
    searches: list[tuple[float, str]] = field(default_factory=list)
    """(when, "" or what went wrong) per search."""


def _writer(p: OpenSearchVectorStoreProvider, traffic: Traffic) -> None:
    store, n = p.scoped(SCOPE), 0
    while not traffic.stop.is_set():
        chunks = make_chunks(f"w{n}", [f"written {n} part {i}" for i in range(10)])
        try:
            store.upsert(chunks)
        except errors.RaglineError:
            traffic.refused += 1
            time.sleep(0.2)
        else:
            traffic.acknowledged += [c.id for c in chunks]
        n += 1


def _searcher(p: OpenSearchVectorStoreProvider, traffic: Traffic) -> None:
    store, n = p.scoped(SCOPE), 0
    while not traffic.stop.is_set():
        doc = f"s{n % SEEDED}"
        try:
            hits = store.search(KeywordQuery(text=f"seed{n % SEEDED}", k=3))
            wrong = "" if [h.chunk.document_id for h in hits[:1]] == [doc] else f"{doc}: {hits[:1]}"
        except errors.RaglineError as exc:
            wrong = repr(exc)
        traffic.searches.append((time.monotonic(), wrong))
        n += 1
        time.sleep(0.05)


def _copies(cluster: Cluster, index: str) -> list[dict[str, str]]:
    """The index's shard copies (shard, prirep, state, node), as a surviving node sees them."""
    rows: list[dict[str, str]] = cluster.get(f"/_cat/shards/{index}?format=json&h=shard,prirep,state,node")
    return rows


def _found(p: OpenSearchVectorStoreProvider, chunk_ids: list[str]) -> set[str]:
    """The chunks among ``chunk_ids`` stored now (a real-time read of each)."""
    ids = [rq.doc_id(SCOPE, c) for c in chunk_ids]
    docs = p.client.mget(body=rq.mget_body(SCOPE, p.index, ids))["docs"]
    return {c for c, d in zip(chunk_ids, docs, strict=True) if d.get("found")}


def _until(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.2)


def test_a_node_killed_during_writes_and_searches_loses_no_acknowledged_write(cluster: Cluster) -> None:
    began = time.monotonic()
    p = OpenSearchVectorStoreProvider(
        build_client(Settings(opensearch_url=cluster.url)),
        index=f"test-{uuid.uuid4().hex[:12]}",
        dimension=DIM,
        replicas=1,
        write_wait=2.0,
    )
    threads: list[threading.Thread] = []
    traffic = Traffic()
    try:
        # Given an index with one replica, green, seeded with searchable documents
        store = p.scoped(SCOPE)
        p.ensure_index()
        cluster.wait("wait_for_status=green")
        for n in range(SEEDED):
            store.upsert(make_chunks(f"s{n}", [f"seed{n} planted before the fault"]))
        p.refresh_now()
        # and the node holding the primary of the tenant's shard
        primary = next(c for c in _copies(cluster, p.index) if c["prirep"] == "p")
        victim = int(primary["node"].rsplit("-", 1)[1])
        replica_node = next((c["node"] for c in _copies(cluster, p.index) if c["prirep"] == "r"), None)
        # When chunks are written and searched all along
        threads = [threading.Thread(target=t, args=(p, traffic), daemon=True) for t in (_writer, _searcher)]
        for t in threads:
            t.start()
        _until(lambda: len(traffic.acknowledged) >= 100, "writes before the fault")
        # and that node's JVM is killed
        cluster.kill(victim)
        killed_at = time.monotonic()
        acknowledged_before = list(traffic.acknowledged)
        cluster.wait("wait_for_nodes=2")
        # Then every chunk acknowledged before the kill is there, read from the surviving copy
        assert _found(p, acknowledged_before) == set(acknowledged_before)
        # and the replica on a surviving node is promoted: the shard's one copy is its primary
        _until(
            lambda: (
                [(c["prirep"], c["state"], c["node"]) for c in _copies(cluster, p.index) if c["node"]]
                == [("p", "STARTED", replica_node)]
            ),
            "the replica promoted",
        )
        # and a write is not acknowledged from that lone copy: it waits for a second one, then fails retryably
        with pytest.raises(errors.DependencyUnavailable):
            store.upsert(make_chunks("probe", ["written to a lone copy"]))
        time.sleep(3)  # searches go on meanwhile, the cluster yellow
        assert cluster.get("/_cluster/health")["status"] == "yellow"
        # When the node starts again
        cluster.start(victim)
        # Then it rejoins, the replica is rebuilt on it, and the cluster is green again
        cluster.wait("wait_for_status=green&wait_for_nodes=3")
        green_at = time.monotonic()
        written = len(traffic.acknowledged)
        _until(lambda: len(traffic.acknowledged) > written, "writes after the node's return", 30)
    finally:
        traffic.stop.set()
        for t in threads:
            t.join(60)
    try:
        # and every acknowledged chunk is stored, on both copies of its shard
        assert _found(p, traffic.acknowledged) == set(traffic.acknowledged)
        assert {c["state"] for c in _copies(cluster, p.index)} == {"STARTED"}
        # and every search answered, right, the yellow spell included
        failed = [w for _, w in traffic.searches if w]
        assert not failed, failed[:5]
        during = [at for at, _ in traffic.searches if killed_at <= at <= green_at]
        assert len(during) >= 10, f"only {len(during)} searches while a node was down"
        print(
            f"node loss: {len(traffic.acknowledged)} chunks acknowledged, {traffic.refused} writes refused, "
            f"{len(traffic.searches)} searches ({len(during)} while yellow), "
            f"down {green_at - killed_at:.1f} s, test {time.monotonic() - began:.1f} s"
        )
    finally:
        p.drop()
        p.close()


def test_an_index_left_without_a_replica_refuses_writes_until_its_replicas_are_raised(
    cluster: Cluster,
) -> None:
    """An index made on one node (0 replicas) written by a deployment that now has a replica: each
    write fails retryably rather than landing on its lone copy, and succeeds once the operator raises
    the index's replicas (docs/deploy.md's ``PUT``)."""
    index = f"test-{uuid.uuid4().hex[:12]}"
    client = build_client(Settings(opensearch_url=cluster.url))
    before = OpenSearchVectorStoreProvider(client, index=index, dimension=DIM)
    after = OpenSearchVectorStoreProvider(client, index=index, dimension=DIM, replicas=1, write_wait=1.0)
    try:
        before.scoped(SCOPE).upsert(make_chunks("a", ["written on one node"]))
        with pytest.raises(errors.DependencyUnavailable):
            after.scoped(SCOPE).upsert(make_chunks("b", ["written after growing to three"]))
        for name in (index, rq.fences_index(index)):
            client.indices.put_settings(index=name, body={"index": {"number_of_replicas": 1}})
        cluster.wait("wait_for_status=green")
        assert after.scoped(SCOPE).upsert(make_chunks("b", ["written after growing to three"])) == 1
    finally:
        before.drop()
        before.close()


def test_a_chunk_acknowledged_by_one_copy_only_is_a_retryable_failure(cluster: Cluster) -> None:
    """``wait_for_active_shards`` is checked before a write: a replica failing during it leaves the
    chunk (or fence) on the primary alone, acknowledged with ``_shards.successful`` 1. The upsert (the
    publish) then fails retryably, and its retry writes it whole."""
    proxy = BulkFaults(cluster.urls[0]).start()
    p = OpenSearchVectorStoreProvider(
        build_client(Settings(opensearch_url=proxy.url)),
        index=f"test-{uuid.uuid4().hex[:12]}",
        dimension=DIM,
        replicas=1,
    )
    chunks = make_chunks("a", ["one", "two", "three"])
    try:
        proxy.lone.add(rq.doc_id(SCOPE, "a#1"))
        with pytest.raises(errors.DependencyUnavailable):
            p.scoped(SCOPE).upsert(chunks)
        proxy.heal()
        assert p.scoped(SCOPE).upsert(chunks) == 3
        # and so is a publish whose fence one copy alone took; retried, it is published
        proxy.lone.add(rq.fence_id(SCOPE, "a"))
        assert isinstance(p.scoped(SCOPE).publish_many({"a": 1})["a"], errors.DependencyUnavailable)
        proxy.heal()
        assert p.scoped(SCOPE).publish("a", generation=1)
    finally:
        p.drop()
        p.close()
        proxy.stop()
