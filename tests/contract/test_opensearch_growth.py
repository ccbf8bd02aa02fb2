"""Automated growth on a real node: a pooled shard crosses its size threshold mid-ingest, a larger
generation becomes the pool and the writing tenant is moved there, while readers read continuously and
another writer of the same tenant keeps writing: no read sees a document with chunks missing (a gap)
or with chunks of two versions (a mix), and no acknowledged write is lost."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from ragline.adapters.opensearch import placement as pl
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.models import KeywordQuery, TenantScope
from tests.contract.vector_store_contract import make_chunks
from tests.support.vectors import DIM

pytestmark = [pytest.mark.contract, pytest.mark.opensearch]

ACME = TenantScope(tenant_id="acme", namespace_id="docs")
GLOBEX = TenantScope(tenant_id="globex", namespace_id="docs")
CHUNKS = 6
TTLS = (0.2, 0.5, 3600.0)
"""The readers' placement caches: two expire during the move, one never (it finds out by reading)."""


def _provider(url: str, index: str, **kw: object) -> OpenSearchVectorStoreProvider:
    client = build_client(Settings(opensearch_url=url))
    return OpenSearchVectorStoreProvider(client, index=index, dimension=DIM, **kw)  # type: ignore[arg-type]


def _texts(doc: str, generation: int) -> list[str]:
    return [f"bees {doc} version {generation} part {i}" for i in range(CHUNKS)]


class Served:
    """The versions published so far: each document's texts at each generation it was published at."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.versions: dict[str, dict[int, list[str]]] = {}

    def publish(self, p: OpenSearchVectorStoreProvider, doc: str, generation: int) -> None:
        store = p.scoped(ACME)
        store.upsert(make_chunks(doc, _texts(doc, generation)), generation=generation)
        assert store.publish(doc, generation=generation)
        with self.lock:
            self.versions.setdefault(doc, {})[generation] = _texts(doc, generation)

    def snapshot(self) -> dict[str, list[list[str]]]:
        """The documents published so far, each with the versions a read may show: any one written
        for it, whole (its next version may be published while the read runs)."""
        with self.lock:
            return {d: [_texts(d, g) for g in (1, 2)] for d in self.versions}


def _read_all(p: OpenSearchVectorStoreProvider, served: Served, failures: list[str]) -> None:
    """One round: every published document whole, in one version, by neighbours, count and search."""
    published = served.snapshot()
    store = p.scoped(ACME)
    for doc, versions in published.items():
        got = [c.text for c in store.neighbors(doc, 0, before=0, after=CHUNKS)]
        if got not in versions:
            failures.append(f"neighbors {doc}: {got}")
        if (n := store.count(doc)) != CHUNKS:
            failures.append(f"count {doc}: {n}")
    hits = store.search(KeywordQuery(text="bees", k=1000))  # every chunk of acme
    by_doc: dict[str, set[str]] = {}
    for h in hits:
        by_doc.setdefault(h.chunk.document_id, set()).add(h.chunk.text)
    for doc, versions in published.items():
        texts = by_doc.get(doc, set())
        if not any(texts == set(v) for v in versions):
            failures.append(f"search {doc}: {sorted(texts)}")
    if len(hits) != len({h.chunk.id for h in hits}):
        failures.append("search: a chunk twice")


def test_a_shard_crossing_its_threshold_mid_ingest_moves_the_tenant_with_no_gap_and_no_mix(  # noqa: PLR0915
    opensearch_url: str,
) -> None:
    index = f"test-{uuid.uuid4().hex[:12]}"
    writer = _provider(opensearch_url, index, growth_interval=0, placement_ttl=0.5)
    concurrent = _provider(opensearch_url, index, growth_interval=3600, placement_ttl=0.5)
    readers = [_provider(opensearch_url, index, placement_ttl=t, growth_interval=3600) for t in TTLS]
    served, failures = Served(), []
    stop = threading.Event()
    rounds = [0] * len(readers)
    try:
        # Given acme's and globex's documents in the pool's first generation (one shard), and a
        # threshold just above its chunks (acme alone stays far below it)
        for d in range(4):
            served.publish(writer, f"d{d}", 1)
        writer.scoped(GLOBEX).upsert(make_chunks("g", [f"globex bees {i}" for i in range(150)]))
        g1 = pl.generation_index(index, 1)
        writer.refresh_now()
        writer.growth.max_shard_chunks = max(writer.growth.shard_chunks(g1).values()) + 1
        for r in readers:
            _read_all(r, served, failures)  # every reader has acme's placement (g1) cached

        def read(i: int) -> None:
            while not stop.is_set():
                _read_all(readers[i], served, failures)
                rounds[i] += 1

        ingesting = threading.Event()
        ingesting.set()

        def write_concurrently() -> None:  # acme's other writer, all through the move
            d = 0
            while ingesting.is_set() and d < 60:
                served.publish(concurrent, f"c{d}", 1)
                d += 1

        threads = [threading.Thread(target=read, args=(i,)) for i in range(len(readers))]
        threads.append(threading.Thread(target=write_concurrently))
        for t in threads:
            t.start()
        # When ingestion continues (the first write crosses the threshold: growth moves acme)
        for d in range(4, 10):
            served.publish(writer, f"d{d}", 1)
            if d == 6:
                served.publish(writer, "d0", 2)  # a new version of a moved document
        ingesting.clear()
        threads[-1].join(timeout=120)
        before_reap = list(rounds)
        time.sleep(0.5)
        # and the old copy is reaped after its grace (by now, or by a growth round of the writer)
        time.sleep(writer.growth.grace)
        writer.growth.reap()
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join(timeout=120)
        assert failures == []
        assert writer.placements.retired() == []
        # Then acme lives in a larger second generation, globex stayed, and no read saw a gap or a mix
        g2 = pl.generation_index(index, 2)
        assert writer.placements.pool() == g2
        assert writer.placements.read("acme").index == g2 and writer.placements.read("globex").index == g1
        shards = writer.client.indices.get_settings(index=g2)[g2]["settings"]["index"]["number_of_shards"]
        assert int(shards) == 2
        assert min(before_reap) > 0 and min(rounds) > min(before_reap)
        _read_all(readers[2], served, failures)
        assert failures == [] and len(served.snapshot()) > 12  # every acknowledged write, once
        acme_in_g1 = {"query": {"term": {"tenant_id": "acme"}}}
        assert writer.client.count(index=g1, body=acme_in_g1, routing="acme")["count"] == 0  # reaped
        assert writer.scoped(GLOBEX).count() == 150
    finally:
        stop.set()
        for p in [*readers, concurrent]:
            p.close()
        writer.drop()
        writer.close()
