"""The VectorStore contract against a real OpenSearch node (lucene HNSW), one fresh index per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.models import TenantScope
from tests.contract.vector_store_contract import VectorStoreContract, hybrid, make_chunks
from tests.support.vectors import DIM

pytestmark = [pytest.mark.contract, pytest.mark.opensearch]


def _provider(url: str, **kw: object) -> OpenSearchVectorStoreProvider:
    client = build_client(Settings(opensearch_url=url))
    return OpenSearchVectorStoreProvider(client, index=f"test-{uuid.uuid4().hex[:12]}", dimension=DIM, **kw)  # type: ignore[arg-type]


class TestOpenSearchVectorStore(VectorStoreContract):
    @pytest.fixture
    def provider(self, opensearch_url: str) -> Iterator[OpenSearchVectorStoreProvider]:
        p = _provider(opensearch_url)
        yield p
        p.drop()
        p.close()


def test_concurrent_hybrid_strategy_matches_msearch(opensearch_url: str) -> None:
    """Given the same data, both hybrid strategies (one _msearch, two concurrent searches) agree."""
    one = _provider(opensearch_url, hybrid="msearch")
    two = OpenSearchVectorStoreProvider(one.client, index=one.index, dimension=DIM, hybrid="concurrent")
    try:
        scope = TenantScope(tenant_id="acme", namespace_id="docs")
        one.scoped(scope).upsert(make_chunks("d", ["alpha beta", "beta gamma", "gamma delta", "delta alpha"]))
        a = [(h.chunk.id, h.breakdown) for h in one.scoped(scope).search(hybrid("beta gamma"))]
        b = [(h.chunk.id, h.breakdown) for h in two.scoped(scope).search(hybrid("beta gamma"))]
        assert a == b and a
    finally:
        one.drop()
        two.close()
