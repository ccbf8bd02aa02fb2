"""The chat run driven by the real OpenAI adapter against the local replay server (real HTTP)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.openai.chat import OpenAIChatModel
from ragline.agents.events import RunError, RunFinished, ToolFinished, Warning
from ragline.domain.models import SearchQuery, TenantScope
from ragline.services.chat import ChatService
from ragline.services.search import SearchService
from tests.support.openai_replay import OpenAIReplay, call, error, text, tool_call, tool_calls
from tests.unit.test_chat_service import World, req

pytestmark = pytest.mark.unit


class RecordingStores:
    """The real SQLite stores, recording the scope and query every search reached the store with."""

    def __init__(self, world: World) -> None:
        self.inner = world.stores
        self.received: list[tuple[TenantScope, SearchQuery]] = []

    def scoped(self, scope: TenantScope) -> Any:
        store = self.inner.scoped(scope)
        search = store.search

        def recorded(query: SearchQuery) -> Any:
            self.received.append((scope, query))
            return search(query)

        store.search = recorded  # type: ignore[method-assign]
        return store

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    yield w
    w.stores.close()


def service(world: World, replay: OpenAIReplay) -> tuple[ChatService, RecordingStores]:
    stores = RecordingStores(world)
    model = OpenAIChatModel(model="replay-model", client=replay.client(max_retries=2))
    search = SearchService(registry=world.registry, stores=stores, embedder=world.embedder)  # type: ignore[arg-type]
    svc = ChatService(registry=world.registry, stores=stores, search=search, model=model, ledger=world.ledger)  # type: ignore[arg-type]
    return svc, stores


def test_search_expand_answer_with_verified_citations(world: World, openai_replay: OpenAIReplay) -> None:
    openai_replay.script(
        [
            tool_call("search", {"query": "Part 6 long text", "mode": "semantic", "label": "Reading"}),
            tool_call("expand", {"documentId": "long", "sequence_number": 6}),
            text("Part six ", 'is here <citation ids="long#6"/>', " and ", '<citation ids="ghost#1"/>.'),
        ]
    )
    svc, _ = service(world, openai_replay)
    events = list(svc.answer_chat("acme", req(mode="fast")))
    ends = [e for e in events if isinstance(e, ToolFinished)]
    assert [e.tool for e in ends] == ["search", "expand"] and ends[1].hits == 11
    final = events[-1]
    assert isinstance(final, RunFinished) and final.answer == 'Part six is here <citation ids="long#6"/> and.'
    assert any(isinstance(e, Warning) and e.details.get("ids") == ["ghost#1"] for e in events)
    assert final.usage.llm_input_tokens == 300 and final.usage.llm_output_tokens == 30
    sent = openai_replay.chat_requests
    assert [t["function"]["name"] for t in sent[0]["tools"]] == ["search", "expand"]
    assert sent[1]["messages"][-1]["role"] == "tool" and "long#" in sent[1]["messages"][-1]["content"]


def test_a_tool_call_cannot_choose_tenant_namespace_or_filters(
    world: World, openai_replay: OpenAIReplay
) -> None:
    sneaky = {
        "query": "secret plants",
        "tenant_id": "globex",
        "namespace": "docs",
        "filters": {"document_ids": ["secret"]},
    }
    openai_replay.script([tool_call("search", sneaky), text("done")])
    svc, stores = service(world, openai_replay)
    events = list(svc.answer_chat("acme", req()))
    assert stores.received, "the search never reached the store"
    for scope, query in stores.received:
        assert scope == TenantScope(tenant_id="acme", namespace_id="docs")
        assert query.filters.document_ids == () and query.text == "secret plants"
    tool_reply = openai_replay.chat_requests[1]["messages"][-1]["content"]
    assert "Globex" not in tool_reply
    assert isinstance(events[-1], RunFinished)


def test_malformed_tool_json_is_returned_to_the_model(world: World, openai_replay: OpenAIReplay) -> None:
    openai_replay.script(
        [tool_calls(call("search", '{"query": "bees"')), tool_call("search", {"query": "bees"}), text("ok")]
    )
    svc, _ = service(world, openai_replay)
    events = list(svc.answer_chat("acme", req()))
    ends = [e for e in events if isinstance(e, ToolFinished)]
    assert ends[0].error == "invalid_arguments" and ends[1].error is None
    assert (
        "invalid arguments" in json.loads(openai_replay.chat_requests[1]["messages"][-1]["content"])["error"]
    )


def test_rate_limit_then_success(world: World, openai_replay: OpenAIReplay) -> None:
    openai_replay.script([error(429), text("fine")])
    svc, _ = service(world, openai_replay)
    final = list(svc.answer_chat("acme", req()))[-1]
    assert isinstance(final, RunFinished) and final.answer == "fine" and len(openai_replay.chat_requests) == 2


def test_upstream_500_ends_with_a_clean_error_event_and_one_charge(
    world: World, openai_replay: OpenAIReplay
) -> None:
    openai_replay.script([error(500, times=None)])
    svc, _ = service(world, openai_replay)
    events = list(svc.answer_chat("acme", req(), run_id="r-500"))
    err = next(e for e in events if isinstance(e, RunError))
    assert err.code == "dependency_unavailable"
    final = events[-1]
    assert isinstance(final, RunFinished) and final.exit_reason == "error"
    assert (
        world.ledger.period_runs(
            "acme", __import__("ragline.adapters.embedded.ledger").adapters.sqlite_ledger.current_period()
        )
        == 1
    )


def test_a_model_that_keeps_calling_tools_stops_at_20_steps(
    world: World, openai_replay: OpenAIReplay
) -> None:
    openai_replay.script([tool_call("search", {"query": f"bees {i}"}) for i in range(25)])
    svc, _ = service(world, openai_replay)
    final = list(svc.answer_chat("acme", req(mode="fast")))[-1]
    assert isinstance(final, RunFinished) and final.exit_reason == "max_steps"
    assert len(openai_replay.chat_requests) == 20


def test_store_without_keyword_or_order_downgrades_and_hides_expand(
    world: World, openai_replay: OpenAIReplay
) -> None:
    from tests.unit.test_chat_service import SemanticOnlyStores

    openai_replay.script([tool_call("search", {"query": "queen", "mode": "keyword"}), text("ok")])
    limited = SemanticOnlyStores(world.stores)
    model = OpenAIChatModel(model="replay-model", client=openai_replay.client())
    search = SearchService(registry=world.registry, stores=limited, embedder=world.embedder)  # type: ignore[arg-type]
    svc = ChatService(
        registry=world.registry, stores=limited, search=search, model=model, ledger=world.ledger
    )  # type: ignore[arg-type]
    events = list(svc.answer_chat("acme", req()))
    assert [t["function"]["name"] for t in openai_replay.chat_requests[0]["tools"]] == ["search"]
    assert any(isinstance(e, Warning) and e.code == "search_downgraded" for e in events)
