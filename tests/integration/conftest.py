"""Fixtures of the integration suites."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.ports import VectorStoreProvider
from tests.support.vectors import DIM


@pytest.fixture(params=["sqlite", pytest.param("opensearch", marks=pytest.mark.opensearch)])
def both_stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, VectorStoreProvider]]:
    """A fresh, empty store of each kind: a SQLite file, and an index (with its fences) on the node."""
    if request.param == "sqlite":
        sqlite = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
        yield "sqlite", sqlite
        sqlite.close()
        return
    client = build_client(Settings(opensearch_url=request.getfixturevalue("opensearch_url")))
    node = OpenSearchVectorStoreProvider(client, index=f"test-{uuid.uuid4().hex[:10]}", dimension=DIM)
    yield "opensearch", node
    node.drop()
    node.close()
