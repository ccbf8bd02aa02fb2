"""The VectorStore contract on the local 3-node cluster: every index with one replica, the client
given every node, each write waiting for two active copies."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.ports import VectorStore, VectorStoreProvider
from tests.cluster.conftest import Cluster
from tests.contract import test_opensearch_store as single_node
from tests.contract.vector_store_publish_contract import PublishFault
from tests.support.bulk_faults import BulkFaults
from tests.support.vectors import DIM

pytestmark = [pytest.mark.contract, pytest.mark.opensearch]


def replicated(url: str, index: str | None = None) -> OpenSearchVectorStoreProvider:
    return OpenSearchVectorStoreProvider(
        build_client(Settings(opensearch_url=url)),
        index=index or f"test-{uuid.uuid4().hex[:12]}",
        dimension=DIM,
        replicas=1,
    )


class TestOnThreeNodes(single_node.TestOpenSearchVectorStore):
    @pytest.fixture
    def provider(self, cluster: Cluster) -> Iterator[OpenSearchVectorStoreProvider]:
        """The default hybrid strategy only (the node's ``hybrid`` query is the single node's to test)."""
        p = replicated(cluster.url)
        yield p
        p.drop()
        p.close()

    @pytest.fixture
    def publish_fault(self, cluster: Cluster) -> Iterator[PublishFault]:
        """The document's fence action answered 503 by a proxy in front of one node, the rest applied."""
        proxy = BulkFaults(cluster.urls[0]).start()

        @contextmanager
        def fault(
            provider: VectorStoreProvider, store: VectorStore, doc: str, generation: int
        ) -> Iterator[VectorStore]:
            assert isinstance(provider, OpenSearchVectorStoreProvider)
            through = replicated(proxy.url, provider.index)
            proxy.refuse[rq.fence_id(store.scope, doc)] = 503
            try:
                yield through.scoped(store.scope)
            finally:
                proxy.heal()
                through.close()

        yield fault
        proxy.stop()
