"""Both stores bound what ``neighbors`` is given: no sequence number or window reaches SQLite or
OpenSearch outside what they can hold (2^70 used to raise ``OverflowError`` in SQLite: an HTTP 500)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider
from ragline.domain.models import MAX_SEQUENCE_NUMBER, TenantScope, neighbor_window
from ragline.ports import VectorStore
from tests.contract.vector_store_contract import make_chunks
from tests.support.placement_registry import InMemoryDocuments
from tests.support.vectors import DIM

pytestmark = pytest.mark.unit
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
HUGE = 2**70


@pytest.mark.parametrize(
    ("seq", "before", "after", "window"),
    [
        (10, 5, 5, (5, 5)),
        (2, 5, 5, (2, 5)),
        (0, HUGE, HUGE, (0, MAX_SEQUENCE_NUMBER)),
        (MAX_SEQUENCE_NUMBER, 1, 1, (1, 0)),
        (MAX_SEQUENCE_NUMBER + 1, 5, 5, None),
        (HUGE, 5, 5, None),
        (-1, 5, 5, None),
    ],
)
def test_a_neighbour_window_is_clamped_to_the_storable_sequence_numbers(
    seq: int, before: int, after: int, window: tuple[int, int] | None
) -> None:
    assert neighbor_window(seq, before, after) == window


def test_a_negative_neighbour_window_is_an_invalid_request() -> None:
    with pytest.raises(errors.InvalidRequest):
        neighbor_window(3, -1, 5)


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[VectorStore]:
    provider = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    store = provider.scoped(SCOPE)
    store.upsert(make_chunks("book", [f"Sentence {i}." for i in range(8)]))
    yield store
    provider.close()


def test_sqlite_neighbors_of_an_absurd_sequence_number_are_none(sqlite_store: VectorStore) -> None:
    assert sqlite_store.neighbors("book", HUGE) == []
    assert sqlite_store.neighbors("book", -HUGE) == []


def test_sqlite_neighbors_with_an_absurd_window_read_the_whole_document(sqlite_store: VectorStore) -> None:
    got = sqlite_store.neighbors("book", 3, before=HUGE, after=HUGE)
    assert [c.sequence_number for c in got] == list(range(8))
    with pytest.raises(errors.InvalidRequest):
        sqlite_store.neighbors("book", 3, before=-HUGE)


class ExistingIndices:
    def exists(self, index: str) -> bool:
        return True

    def exists_alias(self, name: str) -> bool:
        return False

    def get_mapping(self, index: str) -> dict[str, object]:
        """An existing index that already has the filter fields."""
        return {index: {"mappings": {"properties": {"attribute_terms": {}, "readers": {}}}}}


class RecordingClient(InMemoryDocuments):
    """An OpenSearch client over existing indexes that answers every search with no hits and keeps
    the bodies it was sent."""

    def __init__(self) -> None:
        super().__init__()
        self.indices = ExistingIndices()
        self.bodies: list[dict[str, Any]] = []

    def search(self, *, index: str, body: dict[str, Any], routing: str) -> dict[str, Any]:
        self.bodies.append(body)
        return {"hits": {"hits": []}}


def test_opensearch_neighbors_send_only_integer_ranges() -> None:
    client = RecordingClient()
    store = OpenSearchVectorStoreProvider(client, index="chunks", dimension=DIM).scoped(SCOPE)  # type: ignore[arg-type]

    assert store.neighbors("book", HUGE) == [] and client.bodies == []  # nothing can be there: not asked
    store.neighbors("book", 3, before=HUGE, after=HUGE)

    (body,) = client.bodies
    assert body["query"]["bool"]["filter"][-1] == {
        "range": {"sequence_number": {"gte": 0, "lte": MAX_SEQUENCE_NUMBER}}
    }
    assert 0 < body["size"] <= 10_000
    with pytest.raises(errors.InvalidRequest):
        store.neighbors("book", 3, after=-1)
