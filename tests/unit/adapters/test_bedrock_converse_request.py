"""The Converse request builder (pure): Ragline's OpenAI-shaped conversation kept within Bedrock's rules."""

from __future__ import annotations

import pytest

from ragline.adapters.bedrock.converse import (
    base_model,
    build_request,
    caches,
    converse_messages,
    finish_reason,
    streams_tool_use,
    tool_use_id,
)
from ragline.domain.chat import ChatMessage, ChatOptions, ToolCall, ToolSpec

pytestmark = pytest.mark.unit

CALL = ToolCall(id="call_1", name="search", arguments='{"query": "bees"}')
TOOL = ToolSpec(name="search", description="Search.", parameters={"type": "object", "properties": {}})


def roles(messages: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [m["role"] for m in messages]


@pytest.mark.parametrize(
    ("model", "base"),
    [
        ("amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0"),
        ("us.amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0"),
        ("apac.anthropic.claude-3-5-haiku-20241022-v1:0", "anthropic.claude-3-5-haiku-20241022-v1:0"),
        ("global.anthropic.claude-sonnet-4-20250514-v1:0", "anthropic.claude-sonnet-4-20250514-v1:0"),
        ("arn:aws:bedrock:eu-west-1:123:inference-profile/eu.amazon.nova-lite-v1:0", "amazon.nova-lite-v1:0"),
        ("meta.llama3-1-70b-instruct-v1:0", "meta.llama3-1-70b-instruct-v1:0"),
    ],
)
def test_base_model_strips_the_geography_of_an_inference_profile(model: str, base: str) -> None:
    assert base_model(model) == base


def test_cache_points_by_family_unless_forced() -> None:
    assert caches("us.anthropic.claude-3-7-sonnet-20250219-v1:0", "auto") == (True, True)
    assert caches("amazon.nova-lite-v1:0", "auto") == (True, False)
    assert caches("anthropic.claude-3-haiku-20240307-v1:0", "auto") == (False, False)
    assert caches("anthropic.claude-3-haiku-20240307-v1:0", "on") == (True, True)
    assert caches("amazon.nova-lite-v1:0", "off") == (False, False)


def test_streamed_tool_use_by_family() -> None:
    assert streams_tool_use("us.amazon.nova-pro-v1:0")
    assert not streams_tool_use("us.meta.llama3-1-70b-instruct-v1:0")
    assert not streams_tool_use("mistral.mistral-large-2407-v1:0")


def test_finish_reasons() -> None:
    assert [finish_reason(s) for s in ("end_turn", "tool_use", "max_tokens", "guardrail_intervened")] == [
        "stop",
        "tool_calls",
        "length",
        "content_filter",
    ]


def test_tool_use_ids_keep_to_bedrocks_pattern() -> None:
    assert tool_use_id("text_call_0.1:x") == "text_call_0_1_x"
    assert len(tool_use_id("x" * 100)) == 64
    assert tool_use_id("") == "call"


def test_system_goes_to_the_top_and_roles_alternate_starting_with_user() -> None:
    messages = [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="assistant", content="Hello."),
        ChatMessage(role="user", content="One."),
        ChatMessage(role="user", content="Two."),
        ChatMessage(role="assistant", content="   "),  # blank: never sent
    ]
    body = build_request(messages, [], ChatOptions(max_output_tokens=9, temperature=1.7))

    assert body["system"] == [{"text": "Be brief."}]
    assert roles(body["messages"]) == ["user", "assistant", "user"]
    assert body["messages"][2]["content"] == [{"text": "One."}, {"text": "Two."}]
    assert body["inferenceConfig"] == {"maxTokens": 9, "temperature": 1.0}
    assert "toolConfig" not in body


def test_a_call_and_its_result_are_a_tool_use_and_a_tool_result() -> None:
    messages = [
        ChatMessage(role="user", content="Bees?"),
        ChatMessage(role="assistant", content="Searching.", tool_calls=(CALL,)),
        ChatMessage(role="tool", content="", tool_call_id="call_1"),
    ]
    body = build_request(messages, [TOOL], ChatOptions(tool_choice="required"))

    assert body["messages"][1]["content"] == [
        {"text": "Searching."},
        {"toolUse": {"toolUseId": "call_1", "name": "search", "input": {"query": "bees"}}},
    ]
    assert body["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "call_1", "content": [{"text": "(no output)"}]}}
    ]
    assert body["toolConfig"]["toolChoice"] == {"any": {}}
    assert body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"] == {"json": TOOL.parameters}


def test_arguments_that_are_not_a_json_object_are_still_an_object() -> None:
    odd = ToolCall(id="c", name="search", arguments="not json")
    listed = ToolCall(id="d", name="search", arguments="[1, 2]")
    messages = [
        ChatMessage(role="user", content="Bees?"),
        ChatMessage(role="assistant", tool_calls=(odd, listed)),
        ChatMessage(role="tool", content="r1", tool_call_id="c"),
        ChatMessage(role="tool", content="r2", tool_call_id="d"),
    ]
    uses = [b["toolUse"]["input"] for b in converse_messages(messages, tools_offered=True)[1]["content"]]
    assert uses == [{"arguments": "not json"}, {"arguments": [1, 2]}]


def test_half_pairs_and_tool_traffic_without_tools_are_written_as_text() -> None:
    orphan_call = ToolCall(id="lost", name="search", arguments="{}")
    messages = [
        ChatMessage(role="user", content="Bees?"),
        ChatMessage(role="assistant", tool_calls=(CALL, orphan_call)),
        ChatMessage(role="tool", content="found", tool_call_id="call_1"),
        ChatMessage(role="tool", content="stray", tool_call_id="nobody"),
    ]
    kept = converse_messages(messages, tools_offered=True)
    assert [next(iter(b)) for b in kept[1]["content"]] == ["toolUse", "text"]
    assert [next(iter(b)) for b in kept[2]["content"]] == ["toolResult", "text"]

    flattened = converse_messages(messages, tools_offered=False)
    assert all("text" in b for m in flattened for b in m["content"])
    assert "found" in flattened[2]["content"][0]["text"]
