"""The chat run driven by a real model adapter against a local server (real HTTP): the OpenAI adapter
against the replay server and the Bedrock adapter against the Converse server, with one script."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.agents.events import RunError, RunFinished, ToolFinished, Warning
from ragline.config import Settings
from ragline.domain.billing import current_period
from ragline.domain.models import SearchQuery, TenantScope
from ragline.ports import VectorStoreProvider
from ragline.services.authentication import Principal
from ragline.services.chat import ChatService
from ragline.wiring import Container
from tests.support.model_endpoints import ChatEndpoint
from tests.support.openai_replay import call, error, text, tool_call, tool_calls
from tests.support.tool_results import tool_results
from tests.unit.services.test_chat_service import SemanticOnlyStores, World, req

pytestmark = pytest.mark.unit
ACME = Principal.operator("acme")


class RecordingStores:
    """The real SQLite stores, recording the scope and query every search reached the store with."""

    def __init__(self, inner: VectorStoreProvider) -> None:
        self.inner = inner
        self.received: list[tuple[TenantScope, SearchQuery]] = []

    def scoped(self, scope: TenantScope, view: Any = None) -> Any:
        store = self.inner.scoped(scope, view)
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


def service(world: World, endpoint: ChatEndpoint, stores: Any = None) -> tuple[ChatService, RecordingStores]:
    """The chat service wired as in production, but with the local server as the model endpoint."""
    recording = RecordingStores(stores or world.stores)
    model = endpoint.model(max_retries=2)
    container = Container(
        Settings(home=world.root),
        registry=world.registry,
        stores=recording,
        ledger=world.ledger,
        embedder=world.embedder,
        chat_model=model,
        reranker=None,
    )
    return container.chat, recording


def tool_reply(endpoint: ChatEndpoint, request: int) -> Any:
    """The tool result the model received at the end of the ``request``-th chat request."""
    last = endpoint.chat_requests[request]["messages"][-1]
    assert last["role"] == "tool"
    return tool_results(last["content"])


def test_search_expand_answer_with_verified_citations(world: World, chat_endpoint: ChatEndpoint) -> None:
    # Given a model that searches, expands a hit by the ids the search showed it, then cites one real
    # chunk and one it invented
    chat_endpoint.script(
        [
            tool_call("search", {"query": "Part 6 long text", "mode": "semantic", "label": "Reading"}),
            tool_call("expand", {"documentId": "long", "sequenceNumber": 6}),
            text("Part six ", 'is here <citation ids="long#6"/>', " and ", '<citation ids="ghost#1"/>.'),
        ]
    )
    svc, _ = service(world, chat_endpoint)

    # When the run goes through the real OpenAI adapter
    events = list(svc.answer_chat(ACME, req(mode="fast")))

    # Then both tools ran, the expand read the 10 chunks around long#6 in order (not long#6 again)
    ends = [e for e in events if isinstance(e, ToolFinished)]
    assert [e.tool for e in ends] == ["search", "expand"] and ends[1].hits == 10
    # and the invented citation was removed and reported, the real one kept
    final = events[-1]
    assert isinstance(final, RunFinished) and final.answer == 'Part six is here <citation ids="long#6"/> and.'
    assert any(isinstance(e, Warning) and e.details.get("ids") == ["ghost#1"] for e in events)
    assert final.usage.llm_input_tokens == 300 and final.usage.llm_output_tokens == 30
    # and the model was offered both tools and saw chunks under the ids it cites and expands with
    sent = chat_endpoint.chat_requests
    assert [t["function"]["name"] for t in sent[0]["tools"]] == ["search", "expand"]
    found = tool_reply(chat_endpoint, 1)
    assert found and {"id", "documentId", "sequenceNumber", "filename", "text"} == set(found[0])
    assert any(c["documentId"] == "long" and c["id"] == f"long#{c['sequenceNumber']}" for c in found)
    expanded = tool_reply(chat_endpoint, 2)
    assert [c["sequenceNumber"] for c in expanded] == [1, 2, 3, 4, 5, 7, 8, 9, 10, 11]
    assert all(c["id"] == f"long#{c['sequenceNumber']}" for c in expanded)


def test_a_tool_call_cannot_choose_tenant_namespace_or_filters(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    # Given a model that tries to pick another tenant, a namespace and filters in its tool call
    sneaky = {
        "query": "secret plants",
        "tenant_id": "globex",
        "tenantId": "globex",
        "namespace": "docs",
        "filters": {"document_ids": ["secret"]},
    }
    chat_endpoint.script([tool_call("search", sneaky), text("done")])
    svc, stores = service(world, chat_endpoint)

    # When acme's run executes it
    events = list(svc.answer_chat(ACME, req()))

    # Then every search reached the store in acme's scope, with only the query text taken from the model
    assert stores.received, "the search never reached the store"
    for scope, query in stores.received:
        assert scope == TenantScope(tenant_id="acme", namespace_id="docs")
        assert query.filters.document_ids == () and query.text == "secret plants"
    assert "Globex" not in chat_endpoint.chat_requests[1]["messages"][-1]["content"]
    assert isinstance(events[-1], RunFinished)


# OpenAI only: Bedrock's toolUse input is always a JSON object, so a call cannot arrive truncated there
@pytest.mark.parametrize("chat_endpoint", ["openai"], indirect=True)
def test_malformed_tool_json_is_returned_to_the_model(world: World, chat_endpoint: ChatEndpoint) -> None:
    # Given a model whose first tool call is truncated JSON
    chat_endpoint.script(
        [tool_calls(call("search", '{"query": "bees"')), tool_call("search", {"query": "bees"}), text("ok")]
    )
    svc, _ = service(world, chat_endpoint)

    # When the run executes
    events = list(svc.answer_chat(ACME, req()))

    # Then the bad call came back to the model as a tool error, and its corrected call ran
    ends = [e for e in events if isinstance(e, ToolFinished)]
    assert ends[0].error == "invalid_arguments" and ends[1].error is None
    assert "invalid arguments" in tool_reply(chat_endpoint, 1)["error"]


def test_rate_limit_then_success(world: World, chat_endpoint: ChatEndpoint) -> None:
    # Given an endpoint that rate-limits once
    chat_endpoint.script([error(429), text("fine")])
    svc, _ = service(world, chat_endpoint)

    # When the run executes
    final = list(svc.answer_chat(ACME, req()))[-1]

    # Then the adapter retried and the run answered
    assert isinstance(final, RunFinished) and final.answer == "fine" and len(chat_endpoint.chat_requests) == 2


def test_upstream_500_ends_with_a_clean_error_event_and_no_charge(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    # Given an endpoint that always fails
    chat_endpoint.script([error(500, times=None)])
    svc, _ = service(world, chat_endpoint)

    # When the run executes
    events = list(svc.answer_chat(ACME, req(), run_id="r-500"))

    # Then it ends with an error event and a final event, and takes no quota slot (no work was done)
    err = next(e for e in events if isinstance(e, RunError))
    assert err.code == "dependency_unavailable"
    final = events[-1]
    assert isinstance(final, RunFinished) and final.exit_reason == "error"
    assert world.ledger.period_runs("acme", current_period()) == 0


def test_upstream_500_after_a_search_is_charged_what_the_run_used(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    # Given an endpoint that asks for one search and then fails for good
    chat_endpoint.script([tool_call("search", {"query": "bees"}), error(500, times=None)])
    svc, _ = service(world, chat_endpoint)

    # When the run executes
    final = list(svc.answer_chat(ACME, req(mode="fast"), run_id="r-500-late"))[-1]

    # Then the run did work (a model turn, a search) and is charged once, with what it used
    assert isinstance(final, RunFinished) and final.exit_reason == "error"
    assert final.usage.retrievals >= 1
    assert world.ledger.period_runs("acme", current_period()) == 1
    assert world.ledger.period_usage("acme", current_period()).retrievals == final.usage.retrievals


def test_a_model_that_keeps_calling_tools_stops_at_20_steps(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    # Given a model that never stops searching
    chat_endpoint.script([tool_call("search", {"query": f"bees {i}"}) for i in range(25)])
    svc, _ = service(world, chat_endpoint)

    # When the run executes
    final = list(svc.answer_chat(ACME, req(mode="fast")))[-1]

    # Then the loop stops after 20 model turns
    assert isinstance(final, RunFinished) and final.exit_reason == "max_steps"
    assert len(chat_endpoint.chat_requests) == 20


def test_store_without_keyword_or_order_downgrades_and_hides_expand(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    # Given a store without keyword search or ordered reads, and a model asking for a keyword search
    chat_endpoint.script([tool_call("search", {"query": "queen", "mode": "keyword"}), text("ok")])
    svc, _ = service(world, chat_endpoint, stores=SemanticOnlyStores(world.stores))

    # When the run executes
    events = list(svc.answer_chat(ACME, req()))

    # Then the model was never offered expand, and the search ran semantic with a warning
    assert [t["function"]["name"] for t in chat_endpoint.chat_requests[0]["tools"]] == ["search"]
    assert any(isinstance(e, Warning) and e.code == "search_downgraded" for e in events)
