"""The model endpoint's contract, read honestly (issue 17): tool_choice, the per-turn cap, finish
reasons, unreadable calls, cosmetic arguments and missing token counts — each played through the real
adapter by the scripted OpenAI-compatible server and by the local Bedrock Converse server alike."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.openai.chat import OPENAI_DEFAULT, OpenAIChatModel
from ragline.agents.events import ChatResponse
from ragline.config import Settings
from ragline.domain.api import NamespacePatch
from ragline.domain.chat import ChatMessage, ChatOptions
from ragline.services.chat import ChatService
from ragline.wiring import Container
from tests.support.model_endpoints import ChatEndpoint
from tests.support.openai_replay import SERVED_MODEL, OpenAIReplay, Turn, text, tool_call
from tests.support.tool_results import tool_results
from tests.unit.services.test_chat_over_openai import ACME
from tests.unit.services.test_chat_service import World, req

pytestmark = pytest.mark.unit
ANSWER = 'Honey bees pollinate flowering plants <citation ids="bees#0"/>.'


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    yield w
    w.stores.close()


def chat(world: World, endpoint: ChatEndpoint, **settings: Any) -> ChatService:
    model = endpoint.model(max_retries=1)
    container = Container(
        Settings(home=world.root, **settings),
        registry=world.registry,
        stores=world.stores,
        ledger=world.ledger,
        embedder=world.embedder,
        chat_model=model,
        reranker=None,
    )
    return container.chat


def run(world: World, endpoint: ChatEndpoint, turns: list[Turn], **body: Any) -> ChatResponse:
    endpoint.script(turns)
    settings = body.pop("settings", {})
    return ChatResponse.collect(chat(world, endpoint, **settings).answer_chat(ACME, req(**body)))


def codes(body: ChatResponse) -> list[str]:
    return [w.code for w in body.warnings]


def test_an_accurate_run_requires_a_tool_on_its_first_turn_only(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    run(world, chat_endpoint, [tool_call("search", {"query": "bees"}), text(ANSWER)])
    first, second = chat_endpoint.chat_requests
    assert first["tool_choice"] == "required" and "tool_choice" not in second


@pytest.mark.parametrize(("body", "settings"), [({"mode": "fast"}, {}), ({}, {"tool_choice": "auto"})])
def test_fast_runs_and_the_auto_policy_leave_the_choice_to_the_model(
    world: World, chat_endpoint: ChatEndpoint, body: dict[str, Any], settings: dict[str, Any]
) -> None:
    run(
        world,
        chat_endpoint,
        [tool_call("search", {"query": "bees"}), text(ANSWER)],
        settings=settings,
        **body,
    )
    assert all("tool_choice" not in r for r in chat_endpoint.chat_requests)


def test_each_turn_is_capped_below_the_run_budget(world: World, chat_endpoint: ChatEndpoint) -> None:
    run(
        world,
        chat_endpoint,
        [tool_call("search", {"query": "bees"}), text(ANSWER)],
        settings={"turn_output_tokens": 300},
    )
    assert [r["max_tokens"] for r in chat_endpoint.chat_requests] == [300, 300]


def test_a_turn_cut_at_its_cap_ends_the_run_as_max_output_tokens(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    body = run(
        world,
        chat_endpoint,
        [tool_call("search", {"query": "bees"}), text("Honey bees poll", finish="length")],
    )
    assert body.exit_reason == "max_output_tokens" and "answer_truncated" in codes(body)
    assert body.answer == "Honey bees poll"  # the partial answer, marked by the exit reason and warning


def test_a_content_filter_stop_has_its_own_exit(world: World, chat_endpoint: ChatEndpoint) -> None:
    body = run(
        world, chat_endpoint, [tool_call("search", {"query": "bees"}), text("", finish="content_filter")]
    )
    assert body.exit_reason == "content_filter" and "content_filtered" in codes(body)


def test_a_tool_calls_finish_with_no_readable_call_is_told_to_the_model(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    body = run(
        world,
        chat_endpoint,
        [text("", finish="tool_calls"), tool_call("search", {"query": "bees"}), text(ANSWER)],
    )
    assert "tool_call_unreadable" in codes(body) and body.exit_reason == "answered"
    second = chat_endpoint.chat_requests[1]["messages"]
    assert second[-1]["role"] == "user" and "could not be read" in second[-1]["content"]
    assert [s.id for s in body.sources] == ["bees#0"]


def test_a_long_label_is_cut_not_fatal(world: World, chat_endpoint: ChatEndpoint) -> None:
    label = "Searching for " + "pollination " * 40
    body = run(world, chat_endpoint, [tool_call("search", {"query": "bees", "label": label}), text(ANSWER)])
    finished = [s for s in body.steps if s.type == "tool_end"]
    assert finished[0].error is None and finished[0].hits > 0 and len(finished[0].label) == 120
    assert body.exit_reason == "answered"


def test_missing_token_counts_are_estimated_and_flagged(world: World, chat_endpoint: ChatEndpoint) -> None:
    body = run(
        world,
        chat_endpoint,
        [
            Turn(calls=tool_call("search", {"query": "bees"}).calls, usage=None),
            text(ANSWER, usage=None),
        ],
    )
    assert codes(body).count("usage_estimated") == 1
    assert body.usage.llm_input_tokens > 0 and body.usage.llm_output_tokens >= len(ANSWER) // 4


# OpenAI only: it reads the model a server lists at GET /models, which Bedrock has no counterpart of
def test_a_local_server_is_labelled_with_the_model_it_serves(openai_replay: OpenAIReplay) -> None:
    assert OpenAIChatModel.from_settings(openai_replay.settings()).name == SERVED_MODEL
    named = openai_replay.settings(chat_model="qwen2.5-coder-1.5b")
    assert OpenAIChatModel.from_settings(named).name == "qwen2.5-coder-1.5b"
    hosted = Settings(openai_api_key="sk-test")  # OpenAI itself: its default model, no request made
    assert OpenAIChatModel.from_settings(hosted).name == OPENAI_DEFAULT
    openai_replay.script([text(ANSWER)])
    model = OpenAIChatModel.from_settings(openai_replay.settings())
    list(model.stream([ChatMessage(role="user", content="hi")], [], ChatOptions()))
    assert openai_replay.chat_requests[-1]["model"] == SERVED_MODEL  # and it is the model asked


def tool_result_sent(endpoint: ChatEndpoint) -> str:
    """The search result the model was sent on its second turn."""
    (message,) = [m for m in endpoint.chat_requests[1]["messages"] if m["role"] == "tool"]
    return str(message["content"])


@pytest.mark.parametrize("mode", ["accurate", "fast"])
def test_a_search_shows_the_model_the_configured_number_of_chunks(
    world: World, chat_endpoint: ChatEndpoint, mode: str
) -> None:
    script = [tool_call("search", {"query": "long text part"}), text(ANSWER)]
    run(world, chat_endpoint, script, mode=mode, settings={"chunks_per_search": 3})
    assert len(tool_results(tool_result_sent(chat_endpoint))) == 3

    # and a namespace's own setting (PATCH chunksPerSearch) wins over the deployment's
    admin = Container(Settings(home=world.root), registry=world.registry).namespaces
    assert (
        admin.update(ACME, "docs", NamespacePatch.model_validate({"chunksPerSearch": 2})).chunks_per_search
        == 2
    )
    chat_endpoint.reset()
    run(world, chat_endpoint, script, mode=mode, settings={"chunks_per_search": 3})
    assert len(tool_results(tool_result_sent(chat_endpoint))) == 2


def test_the_result_layout_is_a_setting(world: World, chat_endpoint: ChatEndpoint) -> None:
    script = [tool_call("search", {"query": "bees"}), text(ANSWER)]
    run(world, chat_endpoint, script)
    assert tool_result_sent(chat_endpoint).startswith("[bees#")
    chat_endpoint.reset()
    body = run(world, chat_endpoint, script, settings={"tool_results": "json"})
    sent = json.loads(tool_result_sent(chat_endpoint))
    assert sent[0]["id"] == "bees#0" and body.exit_reason == "answered"
    assert [s.id for s in body.sources] == ["bees#0"]


def test_a_run_writes_at_most_5000_output_tokens_however_many_turns_it_takes(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    # Given the default bounds, and a model that keeps searching, each turn writing 1,800 tokens
    turns = [tool_call("search", {"query": f"bees {i}"}, usage=(100, 1800)) for i in range(6)]

    # When the run executes
    body = run(world, chat_endpoint, [*turns, text(ANSWER)])

    # Then each turn may write what is left of the run's 5,000 (2,000 a turn at most), and once the
    # 5,000 are spent the run stops without another model call
    assert [r["max_tokens"] for r in chat_endpoint.chat_requests] == [2000, 2000, 1400]
    assert body.exit_reason == "max_output_tokens"
