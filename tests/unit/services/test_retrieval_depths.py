"""How deep each path fetches before it cuts: what the store is asked for (``k``) and what the reranker
is given, for chat's modes and the search route's ``rerank``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline.agents.events import ChatResponse
from ragline.config import Settings
from ragline.domain.api import NamespacePatch, SearchRequest
from ragline.services.namespaces import NamespaceService
from ragline.wiring import Container
from tests.support.fakes import ScriptedChatModel
from tests.unit.services.test_chat_over_openai import ACME, RecordingStores
from tests.unit.services.test_chat_service import RecordingReranker, World, req

pytestmark = pytest.mark.unit


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    yield w
    w.stores.close()


def wired(world: World, stores: RecordingStores, reranker: RecordingReranker) -> Container:
    return Container(
        Settings(home=world.root),
        registry=world.registry,
        stores=stores,
        ledger=world.ledger,
        embedder=world.embedder,
        chat_model=ScriptedChatModel([[("search", {"query": "bees"})], ["Bees pollinate."]]),
        reranker=reranker,
    )


@pytest.mark.parametrize(("chunks", "fetched"), [(None, 30), (15, 45)])
def test_an_accurate_chat_search_fetches_three_times_what_it_shows_and_at_least_30(
    world: World, chunks: int | None, fetched: int
) -> None:
    # Given a namespace that shows the model the default 10 chunks a search, or 15
    if chunks is not None:
        NamespaceService(registry=world.registry, documents=None).update(  # type: ignore[arg-type]
            ACME, "docs", NamespacePatch.model_validate({"chunksPerSearch": chunks})
        )
    stores, reranker = RecordingStores(world.stores), RecordingReranker()

    # When an accurate run searches once
    body = ChatResponse.collect(wired(world, stores, reranker).chat.answer_chat(ACME, req()))

    # Then the store is asked for three times as many (at least 30), reranked down to what is shown
    assert body.exit_reason == "answered"
    assert [query.k for _, query in stores.received] == [fetched]
    assert [top_n for _, _, top_n in reranker.calls] == [chunks or 10]


def test_a_fast_chat_search_fetches_what_it_shows_and_does_not_rerank(world: World) -> None:
    stores, reranker = RecordingStores(world.stores), RecordingReranker()
    body = ChatResponse.collect(wired(world, stores, reranker).chat.answer_chat(ACME, req(mode="fast")))
    assert body.exit_reason == "answered"
    assert [query.k for _, query in stores.received] == [10] and reranker.calls == []


@pytest.mark.parametrize(("k", "fetched"), [(5, 30), (40, 40)])
def test_a_reranked_search_gives_the_reranker_at_least_30_candidates(
    world: World, k: int, fetched: int
) -> None:
    stores, reranker = RecordingStores(world.stores), RecordingReranker()
    out = wired(world, stores, reranker).search.search(
        ACME, "docs", SearchRequest(query="bees", k=k, rerank=True)
    )
    assert [query.k for _, query in stores.received] == [fetched]
    assert [top_n for _, _, top_n in reranker.calls] == [k] and len(out.hits) <= k
