"""When the OpenSearch store refreshes (``on_read``): writes defer, the next read or a publish pays."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.store import BULK_BYTES, OpenSearchVectorStoreProvider
from ragline.adapters.opensearch.visibility import Refresh
from ragline.domain.models import KeywordQuery, TenantScope
from tests.contract.vector_store_contract import make_chunks
from tests.support.placement_registry import InMemoryDocuments
from tests.support.vectors import DIM

pytestmark = pytest.mark.unit
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")


class Indices:
    def __init__(self, calls: list[str]) -> None:
        self.calls = calls

    def exists(self, index: str) -> bool:
        return True

    def exists_alias(self, name: str) -> bool:
        return False  # the chunk index is a concrete one (the pool's generation 0)

    def get_mapping(self, index: str) -> dict[str, object]:
        """An existing index that already has the filter fields."""
        return {index: {"mappings": {"properties": {"attribute_terms": {}, "readers": {}}}}}

    def refresh(self, index: str) -> None:
        self.calls.append("refresh")


class FakeClient(InMemoryDocuments):
    """Answers like a node holding no fences and no chunks; records the requests that matter here."""

    def __init__(self, deleted: int = 0, refused: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.refused = {rq.fence_id(SCOPE, d) for d in refused}
        self.indices = Indices(self.calls)
        self.deleted = deleted
        self.bulk_refresh: list[str] = []
        self.swept: dict[str, Any] = {}

    def bulk(self, *, body: bytes, refresh: str, filter_path: str) -> dict[str, Any]:
        self.bulk_refresh.append(refresh)
        if b'{"delete"' in body:  # a sweep's deletes: one line each
            self.calls.append("delete")
            return {"items": [{"delete": {"status": 200}} for _ in range(body.count(b"\n"))]}
        if b'-fences"' in body:  # a publish's fences: 409 for the refused documents
            self.calls.append("fence")
            ids = [json.loads(line)["index"]["_id"] for line in body.splitlines()[::2]]
            return {"items": [{"index": {"status": 409 if i in self.refused else 200}} for i in ids]}
        self.calls.append("bulk")
        return {"items": [{"index": {"status": 201}} for _ in range(body.count(b"\n") // 2)]}

    def search(self, *, index: str, body: dict[str, Any], routing: str) -> dict[str, Any]:
        if body.get("version"):  # a sweep finding what it deletes: ``deleted`` older chunks, one page
            self.calls.append("sweep")
            self.swept = body["query"]
            page = min(self.deleted, body["size"])
            self.deleted -= page
            return {"hits": {"hits": [{"_id": f"c{i}", "_version": 1} for i in range(page)]}}
        self.calls.append("search")
        return {"hits": {"hits": []}}


def provider(client: FakeClient, refresh: Refresh = "on_read") -> OpenSearchVectorStoreProvider:
    # a fresh index name per test: the record of unrefreshed indexes is process-wide
    index = f"chunks-{uuid.uuid4().hex[:8]}"
    # no growth rounds: this client answers only the requests of reads and writes
    return OpenSearchVectorStoreProvider(
        client, index=index, dimension=DIM, refresh=refresh, growth_interval=None
    )  # type: ignore[arg-type]


def test_writes_do_not_refresh_and_the_next_read_refreshes_once() -> None:
    client = FakeClient()
    store = provider(client).scoped(SCOPE)

    store.upsert(make_chunks("d", ["one", "two"]))
    store.upsert(make_chunks("e", ["three"]))
    store.search(KeywordQuery(text="one"))
    store.search(KeywordQuery(text="two"))

    assert client.bulk_refresh == ["false", "false"]
    assert client.calls == ["bulk", "bulk", "refresh", "search", "search"]


def test_a_reader_that_never_wrote_never_refreshes() -> None:
    client = FakeClient()
    store = provider(client).scoped(SCOPE)
    store.search(KeywordQuery(text="one"))
    assert client.calls == ["search"]


def test_another_provider_over_the_same_index_sees_this_process_writes() -> None:
    client = FakeClient()
    writer = provider(client)
    reader = OpenSearchVectorStoreProvider(client, index=writer.index, dimension=DIM)  # type: ignore[arg-type]
    writer.scoped(SCOPE).upsert(make_chunks("d", ["one"]))
    reader.scoped(SCOPE).search(KeywordQuery(text="one"))
    assert client.calls == ["bulk", "refresh", "search"]


def test_publish_refreshes_before_it_raises_the_fence_and_again_only_if_its_sweep_deleted() -> None:
    """The version's chunks are searchable before the fence (which readers read in real time) serves it."""
    quiet, sweeping = FakeClient(deleted=0), FakeClient(deleted=2)
    for client in (quiet, sweeping):
        store = provider(client).scoped(SCOPE)
        store.upsert(make_chunks("d", ["one"]), generation=2)
        assert store.publish("d", generation=2)
        store.search(KeywordQuery(text="one"))  # nothing left to refresh
    assert quiet.calls == ["bulk", "refresh", "fence", "sweep", "search"]
    assert sweeping.calls == ["bulk", "refresh", "fence", "sweep", "delete", "refresh", "search"]


def test_refresh_true_still_refreshes_every_write_request() -> None:
    client = FakeClient()
    store = provider(client, refresh="true").scoped(SCOPE)
    store.upsert(make_chunks("d", ["one"]))
    store.search(KeywordQuery(text="one"))
    assert client.bulk_refresh == ["true"] and "refresh" not in client.calls


def test_a_sweep_larger_than_one_search_page_deletes_every_page() -> None:
    client = FakeClient(deleted=rq.MAX_RESULT_WINDOW + 500)
    store = provider(client).scoped(SCOPE)
    assert store.delete_document("d") == rq.MAX_RESULT_WINDOW + 500
    page = rq.delete_lines(store._p.index, "acme", [(f"c{i}", 1) for i in range(rq.MAX_RESULT_WINDOW)])
    pages = len(list(rq.bulk_requests(page, BULK_BYTES)))
    assert client.calls == ["sweep", *["delete"] * pages, "refresh", "sweep", "delete", "refresh"]


def test_publish_many_refreshes_once_raises_every_fence_in_one_request_and_sweeps_once() -> None:
    """An ingest batch pays for visibility once: not a refresh, a fence write and a sweep per document."""
    client = FakeClient(deleted=3, refused=("b",))
    store = provider(client).scoped(SCOPE)
    for doc in ("a", "b", "c"):
        store.upsert(make_chunks(doc, ["one"]), generation=2)
    assert store.publish_many({"a": 2, "b": 2, "c": 2}) == {"a": True, "b": False, "c": True}
    assert client.calls == ["bulk", "bulk", "bulk", "refresh", "fence", "sweep", "delete", "refresh"]
    # the sweep takes the accepted documents' older generations, not the refused one's
    swept = [c["bool"]["filter"] for c in client.swept["bool"]["should"]]
    assert swept == [[{"term": {"document_id": d}}, {"range": {"generation": {"lt": 2}}}] for d in "ac"]


def test_an_upsert_is_cut_into_bulk_requests_by_bytes_not_by_chunk_count() -> None:
    """1,200 short chunks (~1 KB each) fit one request; the same count of chunks with 6 KB texts do not."""
    short, long_ = FakeClient(), FakeClient()
    provider(short).scoped(SCOPE).upsert(make_chunks("d", [f"chunk {i}" for i in range(1200)]))
    provider(long_).scoped(SCOPE).upsert(make_chunks("d", [f"chunk {i} " + "x" * 6000 for i in range(1200)]))
    assert short.calls == ["bulk"]
    assert long_.calls == ["bulk"] * 2
