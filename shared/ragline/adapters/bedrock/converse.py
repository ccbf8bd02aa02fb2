"""Bedrock Converse requests as plain dicts (pure: unit-tested without a server), and what each model
family can do.

Ragline's conversation is OpenAI-shaped (:mod:`ragline.domain.chat`); Converse wants another shape
and stricter rules, which :func:`converse_messages` keeps:

- ``system`` messages go to the top-level ``system`` list; the rest alternate ``user``/``assistant``,
  starting with ``user`` (adjacent messages of one role are merged; blank text is never sent);
- an assistant's tool calls are ``toolUse`` blocks whose ``input`` is a JSON object; tool results are
  ``toolResult`` blocks of the next ``user`` message. A call without its result (or a result without
  its call) is written as text, since Bedrock rejects the pair half-made; so is all tool traffic
  when no tools are offered (``toolConfig`` is then absent, and Bedrock refuses tool blocks);
- tool-use ids keep to Bedrock's ``[a-zA-Z0-9_-]{1,64}``.

Where the model supports prompt caching, a ``cachePoint`` follows the static prefix: the system
prompt (Claude 3.5 Haiku and later, Nova), and the tool specs (Claude).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from ragline.domain.chat import ChatMessage, ChatOptions, ToolSpec

GEOGRAPHIES = frozenset({"us", "eu", "apac", "global", "us-gov", "ca", "jp", "au"})
"""Prefixes of cross-Region inference-profile ids (``us.amazon.nova-pro-v1:0``)."""
CACHES_SYSTEM = (
    "anthropic.claude-3-5-haiku",
    "anthropic.claude-3-7-",
    "anthropic.claude-sonnet-4",
    "anthropic.claude-opus-4",
    "anthropic.claude-haiku-4",
    "amazon.nova-",
)
"""Model families that take a cache point after the system prompt."""
CACHES_TOOLS = tuple(m for m in CACHES_SYSTEM if m.startswith("anthropic."))
"""Of those, the ones that take one after the tool specs too (Nova caches system and messages only)."""
WHOLE_TURN_WITH_TOOLS = ("meta.", "mistral.", "ai21.")
"""Families whose tool use Bedrock does not stream: with tools offered they are asked through
Converse, and the turn arrives whole."""
CACHE_POINT = {"cachePoint": {"type": "default"}}
_TOOL_USE_ID = re.compile(r"[^a-zA-Z0-9_-]")
_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}


def base_model(model_id: str) -> str:
    """The foundation model a model id, an inference-profile id or a profile ARN names."""
    model = model_id.rsplit("/", 1)[-1]
    geography, _, rest = model.partition(".")
    return rest if geography in GEOGRAPHIES and "." in rest else model


def caches(model_id: str, setting: Literal["auto", "on", "off"]) -> tuple[bool, bool]:
    """Whether to put a cache point after the system prompt, and after the tool specs."""
    if setting != "auto":
        return setting == "on", setting == "on"
    model = base_model(model_id)
    return model.startswith(CACHES_SYSTEM), model.startswith(CACHES_TOOLS)


def streams_tool_use(model_id: str) -> bool:
    return not base_model(model_id).startswith(WHOLE_TURN_WITH_TOOLS)


def finish_reason(stop_reason: str) -> str:
    """Converse's stop reason as the loop's finish reason (``stop``, ``tool_calls``, ``length``,
    ``content_filter``); an unknown one passes through."""
    return _FINISH.get(stop_reason, stop_reason or "stop")


def tool_use_id(call_id: str) -> str:
    return _TOOL_USE_ID.sub("_", call_id)[:64] or "call"


def build_request(
    messages: Sequence[ChatMessage],
    tools: Sequence[ToolSpec],
    options: ChatOptions,
    *,
    cache_system: bool = False,
    cache_tools: bool = False,
) -> dict[str, Any]:
    """The Converse/ConverseStream request (without ``modelId``, which the caller adds)."""
    system: list[dict[str, Any]] = [
        {"text": m.content} for m in messages if m.role == "system" and m.content.strip()
    ]
    if system and cache_system:
        system.append(CACHE_POINT)
    body: dict[str, Any] = {
        "messages": converse_messages(messages, tools_offered=bool(tools)),
        "inferenceConfig": {
            "maxTokens": options.max_output_tokens,
            "temperature": min(1.0, max(0.0, options.temperature)),
        },
    }
    if system:
        body["system"] = system
    if tools:
        specs: list[dict[str, Any]] = [
            {
                "toolSpec": {
                    "name": t.name,
                    "description": t.description,
                    "inputSchema": {"json": t.parameters},
                }
            }
            for t in tools
        ]
        if cache_tools:
            specs.append(CACHE_POINT)
        body["toolConfig"] = {"tools": specs}
        if options.tool_choice == "required":
            body["toolConfig"]["toolChoice"] = {"any": {}}
    return body


def converse_messages(messages: Sequence[ChatMessage], *, tools_offered: bool) -> list[dict[str, Any]]:
    """The conversation as Converse messages (see the module docstring for the rules kept)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    _pair_tool_blocks(turns, tools_offered)
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"text": "(The conversation so far follows.)"}]})
    return turns


def _blocks(message: ChatMessage) -> list[dict[str, Any]]:
    if message.role == "tool":
        result = {"text": message.content if message.content.strip() else "(no output)"}
        return [{"toolResult": {"toolUseId": tool_use_id(message.tool_call_id or ""), "content": [result]}}]
    blocks: list[dict[str, Any]] = [{"text": message.content}] if message.content.strip() else []
    for call in message.tool_calls:
        blocks.append(
            {
                "toolUse": {
                    "toolUseId": tool_use_id(call.id),
                    "name": call.name,
                    "input": _input(call.arguments),
                }
            }
        )
    return blocks


def _input(arguments: str) -> dict[str, Any]:
    """A call's arguments as the JSON object Bedrock requires (a model may have written anything)."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return {"arguments": arguments}
    return value if isinstance(value, dict) else {"arguments": value}


def _pair_tool_blocks(turns: list[dict[str, Any]], tools_offered: bool) -> None:
    """Keep ``toolUse``/``toolResult`` blocks only as whole pairs (a call in an assistant turn, its
    result in the next user turn) and only when tools are offered; write the rest as text."""
    for i, turn in enumerate(turns):
        following = turns[i + 1] if i + 1 < len(turns) else None
        if turn["role"] == "assistant":
            answered = (
                {b["toolResult"]["toolUseId"] for b in following["content"] if "toolResult" in b}
                if following
                else set()
            )
            turn["content"] = [
                b
                if "toolUse" not in b or (tools_offered and b["toolUse"]["toolUseId"] in answered)
                else _as_text(b)
                for b in turn["content"]
            ]
        else:
            previous = turns[i - 1] if i > 0 else None
            asked = (
                {b["toolUse"]["toolUseId"] for b in previous["content"] if "toolUse" in b}
                if previous
                else set()
            )
            turn["content"] = [
                b if "toolResult" not in b or b["toolResult"]["toolUseId"] in asked else _as_text(b)
                for b in turn["content"]
            ]


def _as_text(block: dict[str, Any]) -> dict[str, Any]:
    if "toolUse" in block:
        use = block["toolUse"]
        return {"text": f"[called {use['name']} with {json.dumps(use['input'], ensure_ascii=False)}]"}
    result = block["toolResult"]
    return {"text": f"[tool result]\n{result['content'][0]['text']}"}
