"""Models that are weak agents (small open models behind llama.cpp, vLLM, Ollama): a tool call written
as text is run, tool markup never reaches the client, and an answer with no retrieval or no citation
says so — each reply shape played by the scripted OpenAI-compatible server through the real adapter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline.agents.events import ChatResponse, RunEvent
from tests.support.model_endpoints import ChatEndpoint
from tests.support.openai_replay import text, tool_call
from tests.unit.services.test_chat_over_openai import ACME, service
from tests.unit.services.test_chat_service import World, req

pytestmark = pytest.mark.unit

SEARCH = {"name": "search", "arguments": {"query": "bees pollinate"}}
ANSWER = 'Honey bees pollinate flowering plants <citation ids="bees#0"/>.'


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    yield w
    w.stores.close()


def run(
    world: World, chat_endpoint: ChatEndpoint, first: str, **body: object
) -> tuple[list[RunEvent], ChatResponse]:
    chat_endpoint.script([text(*_pieces(first)), text(ANSWER)])
    chat, _ = service(world, chat_endpoint)
    events = list(chat.answer_chat(ACME, req(**body)))
    return events, ChatResponse.collect(events)


def _pieces(reply: str) -> list[str]:
    """The reply streamed in small uneven pieces, as servers do."""
    return [reply[i : i + 7] for i in range(0, len(reply), 7)]


def streamed(events: list[RunEvent]) -> str:
    return "".join(e.text for e in events if e.type == "text")


@pytest.mark.parametrize(
    "first",
    [
        "```json\n" + json.dumps(SEARCH) + "\n```",
        "Let me look that up.\n<tool_call>\n" + json.dumps(SEARCH) + "\n</tool_call>",
        "<tools>" + json.dumps(SEARCH) + "</tools>",
        '<function=search>{"query": "bees pollinate"}</function>',
        '<search query="bees pollinate"/>',
        json.dumps(SEARCH),
        "<tool_call>" + json.dumps({"name": "search", "arguments": json.dumps(SEARCH["arguments"])}),
    ],
    ids=["fence", "tool_call_tag", "tools_tag", "function_tag", "tool_named_tag", "bare_json", "unclosed"],
)
def test_a_tool_call_written_as_text_is_run_and_never_streamed(
    world: World, chat_endpoint: ChatEndpoint, first: str
) -> None:
    events, body = run(world, chat_endpoint, first)
    assert [e.tool for e in body.steps if e.type == "tool_start"] == ["search"]
    assert "text_tool_calls" in [w.code for w in body.warnings]
    text_out = streamed(events)
    for markup in ("tool_call", "<tools", "<function", "<search", '"arguments"', "```"):
        assert markup not in text_out, (markup, text_out)
    assert body.exit_reason == "answered" and [s.id for s in body.sources] == ["bees#0"]
    assert "ungrounded_answer" not in [w.code for w in body.warnings]
    # the model's next turn saw its call as a real call, and the tool's result
    second = chat_endpoint.chat_requests[1]["messages"]
    assert second[-2]["role"] == "assistant" and second[-2]["tool_calls"][0]["function"]["name"] == "search"
    assert second[-1]["role"] == "tool" and "Honey bees" in second[-1]["content"]


def test_an_echoed_tool_response_is_removed_and_the_answer_is_ungrounded(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    result = json.dumps([{"id": "bees#0", "text": "Honey bees pollinate"}])
    echo = f"<tool_response>\n{result}\n</tool_response>\nBees pollinate."
    chat_endpoint.script([text(*_pieces(echo))])
    chat, _ = service(world, chat_endpoint)
    events = list(chat.answer_chat(ACME, req()))
    body = ChatResponse.collect(events)
    assert streamed(events).strip() == "Bees pollinate." and body.answer.strip() == "Bees pollinate."
    codes = [w.code for w in body.warnings]
    assert "tool_markup_removed" in codes and "ungrounded_answer" in codes
    assert body.usage.retrievals == 0 and body.exit_reason == "answered"


def test_an_answer_without_citations_in_accurate_mode_is_flagged(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script([tool_call("search", {"query": "bees"}), text("Bees pollinate plants.")])
    chat, _ = service(world, chat_endpoint)
    accurate = ChatResponse.collect(chat.answer_chat(ACME, req()))
    ungrounded = [w for w in accurate.warnings if w.code == "ungrounded_answer"]
    assert len(ungrounded) == 1 and "cites no retrieved passage" in ungrounded[0].message
    chat_endpoint.script([tool_call("search", {"query": "bees"}), text("Bees pollinate plants.")])
    fast = ChatResponse.collect(chat.answer_chat(ACME, req(mode="fast")))
    assert "ungrounded_answer" not in [w.code for w in fast.warnings]  # fast mode does not require citations


def test_a_json_sample_in_an_answer_is_still_text(world: World, chat_endpoint: ChatEndpoint) -> None:
    sample = 'The config looks like:\n```json\n{"name": "colony", "queens": 1}\n```\n'
    chat_endpoint.script([tool_call("search", {"query": "colony"}), text(*_pieces(sample + ANSWER))])
    chat, _ = service(world, chat_endpoint)
    events = list(chat.answer_chat(ACME, req()))
    assert streamed(events) == sample + ANSWER
    assert "text_tool_calls" not in [w.code for w in ChatResponse.collect(events).warnings]


def test_a_turn_cut_at_its_cap_after_a_text_call_still_runs_the_call(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    # Given a model that writes its call as text, then invents results until the turn's cap
    rambling = "```json\n" + json.dumps(SEARCH) + "\n```\nResults:\n" + "- bees do things\n" * 40
    chat_endpoint.script([text(*_pieces(rambling), finish="length"), text(ANSWER)])
    chat, _ = service(world, chat_endpoint)

    # When it runs
    body = ChatResponse.collect(chat.answer_chat(ACME, req()))

    # Then the call read before the cut is run, the run goes on to a cited answer, and it says so
    assert [e.tool for e in body.steps if e.type == "tool_start"] == ["search"]
    codes = [w.code for w in body.warnings]
    assert "turn_cut_after_tool_call" in codes and "answer_truncated" not in codes
    assert body.exit_reason == "answered" and [s.id for s in body.sources] == ["bees#0"]
    # and the second request shows the model its call and the result, not what it made up
    second = chat_endpoint.chat_requests[1]["messages"]
    assistant = next(m for m in second if m["role"] == "assistant")
    assert not assistant.get("content") and assistant["tool_calls"][0]["function"]["name"] == "search"


def test_a_turn_cut_at_its_cap_without_a_call_still_ends_truncated(
    world: World, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script([text(*_pieces("Bees " * 50), finish="length")])
    chat, _ = service(world, chat_endpoint)
    body = ChatResponse.collect(chat.answer_chat(ACME, req()))
    assert body.exit_reason == "max_output_tokens"
    assert "answer_truncated" in [w.code for w in body.warnings]
