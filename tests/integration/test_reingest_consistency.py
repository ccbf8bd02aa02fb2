"""A reader running beside a re-ingest sees one whole version of the document, never two mixed.

Given a document indexed as version 1 (12 chunks), when version 2 (7 chunks) is ingested while a
reader keeps reading the document, then every read is version 1 whole or version 2 whole — no
chunk missing, doubled or from the other version — and once the ingest ends, exactly version 2.
A worker that dies between its write and its publish leaves version 1 served whole and its own
chunks unseen, until the retry publishes. On OpenSearch the index refreshes every few milliseconds by itself,
so readers also see the states in the middle of a write or a sweep.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ragline.adapters.embedded.documents import SqliteDocumentRegistry
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider
from ragline.domain.api import DocumentView
from ragline.domain.models import KeywordQuery, TenantScope
from ragline.ports import VectorStoreProvider
from ragline.services.ingest import IngestService, IngestSettings
from ragline.services.namespaces import new_namespace
from tests.support.fakes import BowEmbedder
from tests.support.ingest_world import Workers

pytestmark = pytest.mark.integration
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")


def version(tag: str, n: int) -> bytes:
    return "\n\n".join(
        f"# Part {i}\n\nVersion {tag} paragraph {i} says something long enough." for i in range(n)
    ).encode()


def test_reader_never_sees_missing_or_doubled_chunks(
    both_stores: tuple[str, VectorStoreProvider], tmp_path: Path
) -> None:
    _, stores = both_stores
    registry = SqliteTenantRegistry(tmp_path / "t.sqlite")
    registry.create_namespace(new_namespace("acme", "docs"))
    service = IngestService(
        registry=registry,
        documents=SqliteDocumentRegistry(tmp_path / "d.sqlite"),
        stores=stores,
        embedder=BowEmbedder(),
        tokenizer=BowEmbedder(),
        settings=IngestSettings(chunk_tokens=12, chunk_overlap_tokens=0),
    )
    first = service.ingest(SCOPE, filename="guide.md", data=version("one", 12))
    assert first.chunks >= 12
    if isinstance(stores, OpenSearchVectorStoreProvider):
        # The node's own refreshes (every second by default) can land in the middle of a sweep; make
        # them land there often, so an unordered sweep shows the reader its gaps.
        stores.client.indices.put_settings(index=stores.index, body={"index": {"refresh_interval": "2ms"}})
    store = stores.scoped(SCOPE)
    seen: list[list[tuple[int, str]]] = []
    stop = threading.Event()
    reads = threading.Semaphore(0)

    def read() -> None:
        while not stop.is_set():
            chunks = store.neighbors("guide.md", 0, before=0, after=1000)
            seen.append([(c.sequence_number, c.text) for c in chunks])
            reads.release()

    chunks_of = {"one": first.chunks}
    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(9):  # alternate long and short versions to exercise both directions (ends on "two")
            tag, n = ("two", 7) if i % 2 == 0 else ("three", 15)
            chunks_of[tag] = service.ingest(SCOPE, filename="guide.md", data=version(tag, n)).chunks
            # The reader must get turns however the scheduler favours the writer: wait for two reads.
            assert reads.acquire(timeout=30) and reads.acquire(timeout=30)
    finally:
        stop.set()
        reader.join()

    assert len(seen) >= 18
    for snapshot in seen:
        seqs = [s for s, _ in snapshot]
        assert snapshot, "a reader saw the document with no chunks"
        assert len(seqs) == len(set(seqs)), "a reader saw a sequence number twice"
        assert seqs == list(range(len(seqs))), "a reader saw a gap in the sequence"
        tags = {t for _, text in snapshot for t in ("one", "two", "three") if f"Version {t} " in text}
        assert len(tags) == 1, f"a reader saw versions {sorted(tags)} mixed"
        assert len(snapshot) == chunks_of[tags.pop()], "a reader saw part of a version"
    after = [c.text for c in store.neighbors("guide.md", 0, before=0, after=1000)]
    assert after and all("Version two " in t for t in after)
    assert store.count("guide.md") == len(after)


def test_worker_dead_between_write_and_publish_leaves_the_old_version_whole_and_its_own_unseen(
    both_stores: tuple[str, VectorStoreProvider], tmp_path: Path
) -> None:
    _, stores = both_stores
    registry = SqliteTenantRegistry(tmp_path / "t.sqlite")
    registry.create_namespace(new_namespace("acme", "docs"))
    workers = Workers()
    documents = SqliteDocumentRegistry(tmp_path / "d.sqlite")
    service = IngestService(
        registry=registry,
        documents=documents,
        stores=workers.stores(stores),
        embedder=BowEmbedder(),
        tokenizer=BowEmbedder(),
        settings=IngestSettings(chunk_tokens=12, chunk_overlap_tokens=0),
    )
    store = stores.scoped(SCOPE)
    v1 = service.ingest(SCOPE, filename="guide.md", data=version("one", 12))

    def served() -> list[str]:
        return [c.text for c in store.neighbors("guide.md", 0, before=0, after=1000)]

    old = served()
    assert len(old) == v1.chunks
    # Given a worker re-indexing a shorter version 2, parked after its write, before its publish
    worker = workers.start(lambda _: service.ingest(SCOPE, filename="guide.md", data=version("two", 5)), "v2")
    while worker.at != "publish":
        workers.step(worker)
    # Then readers get version 1 whole: its chunks all there, none of version 2
    assert served() == old
    assert store.count("guide.md") == len(old)
    assert store.search(KeywordQuery(text="version two paragraph", k=50)) == [] or all(
        "Version one " in h.chunk.text for h in store.search(KeywordQuery(text="version two paragraph", k=50))
    )
    # When it dies there, nothing changes for readers, and the record says what they are served
    workers.step(worker, crash=True)
    assert worker.outcome == "crashed" and served() == old
    view = DocumentView.of(documents.get("acme", "docs", "guide.md"))  # type: ignore[arg-type]
    assert (view.status, view.serving, view.chunk_count) == ("processing", "previous_version", len(old))
    # and the retry (a new claim) publishes version 2 whole and sweeps what the dead worker wrote
    v2 = service.ingest(SCOPE, filename="guide.md", data=version("two", 5))
    now = served()
    assert len(now) == v2.chunks and all("Version two " in t for t in now)
    assert store.vectors("guide.md").keys() == set(now)
    assert DocumentView.of(documents.get("acme", "docs", "guide.md")).serving == "this_version"  # type: ignore[arg-type]
