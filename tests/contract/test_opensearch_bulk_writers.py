"""One upsert's ``_bulk`` requests go out ``bulk_writers`` at once, a number that follows the primaries
the writes land on (issue 39); every chunk is written all the same."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.models import TenantScope
from tests.contract.test_opensearch_store import _provider
from tests.contract.test_opensearch_vectors_once import dense_chunks
from tests.support.bulk_faults import BulkFaults
from tests.support.vectors import DIM

pytestmark = [pytest.mark.contract, pytest.mark.opensearch]
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")


class InFlight(BulkFaults):
    """The proxy, counting the ``_bulk`` requests it holds at once (each held a little, so two sent
    together overlap here whatever the node's speed)."""

    def __init__(self, node_url: str) -> None:
        super().__init__(node_url)
        self.now = self.most = 0
        self._lock = threading.Lock()

    def handle(
        self, method: str, target: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes] | None:
        if not target.partition("?")[0].endswith("/_bulk"):
            return super().handle(method, target, body, headers)
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            time.sleep(0.2)
            return super().handle(method, target, body, headers)
        finally:
            with self._lock:
                self.now -= 1


@pytest.fixture
def proxy(opensearch_url: str) -> Iterator[InFlight]:
    p = InFlight(opensearch_url).start()
    yield p
    p.stop()


def test_bulk_writers_follow_the_primaries_written_to() -> None:
    assert rq.bulk_writers() == rq.BULK_WRITERS_PER_SHARD
    assert rq.bulk_writers(3) == 3 * rq.BULK_WRITERS_PER_SHARD
    client = build_client(Settings(opensearch_url="http://127.0.0.1:9"))
    assert (
        OpenSearchVectorStoreProvider(client, index="i", dimension=DIM, primaries=4).bulk_writers
        == 4 * rq.BULK_WRITERS_PER_SHARD
    )


@pytest.mark.parametrize("writers", [1, 3])
def test_one_upsert_keeps_bulk_writers_requests_in_flight_and_writes_every_chunk(
    opensearch_url: str, proxy: InFlight, writers: int
) -> None:
    own = _provider(opensearch_url)
    client = build_client(Settings(opensearch_url=proxy.url))
    p = OpenSearchVectorStoreProvider(client, index=own.index, dimension=DIM, bulk_writers=writers)
    try:
        chunks = dense_chunks("many", 90)
        assert p.scoped(SCOPE).upsert(chunks, generation=1) == 90
        assert proxy.most == writers
        assert p.scoped(SCOPE).publish("many", generation=1) and p.scoped(SCOPE).count("many") == 90
    finally:
        own.drop()
        own.close()
        p.close()
