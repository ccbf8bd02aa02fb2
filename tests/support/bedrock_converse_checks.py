"""The checks Bedrock makes on a Converse / ConverseStream request body before any model runs, so a
wrong request from Ragline's adapter fails in tests as it would in AWS (``ValidationException``, 400).

Only what Ragline sends is allowed: content blocks ``text`` / ``toolUse`` / ``toolResult`` /
``cachePoint``, system blocks ``text`` / ``cachePoint``, tools ``toolSpec`` / ``cachePoint``.
"""

from __future__ import annotations

import re
from typing import Any

from tests.support.bedrock_wire import ServiceError

REQUEST_KEYS = frozenset(
    {
        "messages",
        "system",
        "inferenceConfig",
        "toolConfig",
        "guardrailConfig",
        "additionalModelRequestFields",
        "promptVariables",
        "additionalModelResponseFieldPaths",
        "requestMetadata",
        "performanceConfig",
        "serviceTier",
        "outputConfig",
    }
)
"""ConverseRequest's members in the service model, but ``modelId`` (it is in the path)."""

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_INFERENCE_KEYS = {"maxTokens", "temperature", "topP", "stopSequences"}


def invalid(message: str) -> ServiceError:
    return ServiceError("ValidationException", message)


def check_request(body: Any) -> None:
    """Raise the ValidationException Bedrock would answer for ``body``, if any."""
    if not isinstance(body, dict):
        raise invalid("Malformed input request, please reformat your input.")
    unknown = sorted(set(body) - REQUEST_KEYS)
    if unknown:
        raise invalid(f"Unknown parameter in input: {unknown[0]!r}")
    uses_tools = _check_messages(body.get("messages"))
    _check_system(body.get("system"))
    if "toolConfig" in body:
        _check_tool_config(body["toolConfig"])
    elif uses_tools:
        raise invalid(
            "The toolConfig field must be defined when using toolUse and toolResult content blocks."
        )
    _check_inference(body.get("inferenceConfig"))


def _check_messages(messages: Any) -> bool:
    """Check roles, blocks and tool pairing; whether any message holds toolUse/toolResult blocks."""
    if not isinstance(messages, list) or not messages:
        raise invalid(
            "A conversation must start with a user message. Try again with a conversation "
            "that starts with a user message."
        )
    uses_tools = False
    pending: set[str] | None = None  # toolUse ids the next user message must answer
    for n, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        expected = "user" if n % 2 == 0 else "assistant"
        if n == 0 and role != "user":
            raise invalid(
                "A conversation must start with a user message. Try again with a conversation "
                "that starts with a user message."
            )
        if role != expected:
            raise invalid(
                "A conversation must alternate between user and assistant roles. Make sure the "
                "conversation alternates between user and assistant roles and try again."
            )
        content = message.get("content")
        if not isinstance(content, list) or not content:
            raise invalid(f"The content field in the Message object at messages.{n} is empty.")
        used: set[str] = set()
        answered: set[str] = set()
        for b, block in enumerate(content):
            kind = _check_block(block, f"messages.{n}.content.{b}")
            if kind == "toolUse":
                if role != "assistant":
                    raise invalid(
                        f"messages.{n}.content.{b}: toolUse blocks are only allowed in assistant messages."
                    )
                used.add(block["toolUse"]["toolUseId"])
            elif kind == "toolResult":
                tool_use_id = block["toolResult"]["toolUseId"]
                if role != "user" or pending is None or tool_use_id not in pending:
                    raise invalid(
                        f"messages.{n}.content.{b}: the toolResult block's toolUseId "
                        f"{tool_use_id} does not match a toolUse block of the previous turn."
                    )
                answered.add(tool_use_id)
            uses_tools = uses_tools or kind in ("toolUse", "toolResult")
        if pending and answered != pending:
            missing = sorted(pending - answered)[0]
            raise invalid(
                f"Expected toolResult blocks at messages.{n}.content for the following Ids: {missing}"
            )
        pending = used if role == "assistant" else None
    if pending:
        raise invalid(
            f"Expected toolResult blocks at messages.{len(messages)}.content for the following "
            f"Ids: {sorted(pending)[0]}"
        )
    return uses_tools


def _check_block(block: Any, where: str) -> str:
    kind = _one_key(block, where, {"text", "toolUse", "toolResult", "cachePoint"})
    value = block[kind]
    if kind == "text":
        if not isinstance(value, str) or not value.strip():
            raise invalid(
                f"The text field in the ContentBlock object at {where} is blank. Add text to "
                "the text field, and try again."
            )
    elif kind == "toolUse":
        if not isinstance(value, dict) or not isinstance(value.get("toolUseId"), str):
            raise invalid(f"{where}.toolUse must hold toolUseId, name and input")
        if not _TOOL_NAME.match(str(value.get("name"))) or not isinstance(value.get("input"), dict):
            raise invalid(f"{where}.toolUse must hold a valid name and an object input")
    elif kind == "toolResult":
        _check_tool_result(value, where)
    else:
        _check_cache_point(value, where)
    return kind


def _check_tool_result(value: Any, where: str) -> None:
    if not isinstance(value, dict) or not isinstance(value.get("toolUseId"), str):
        raise invalid(f"{where}.toolResult must hold toolUseId and content")
    content = value.get("content")
    if not isinstance(content, list) or not content:
        raise invalid(f"{where}.toolResult.content must be a non-empty list")
    for c, item in enumerate(content):
        kind = _one_key(item, f"{where}.toolResult.content.{c}", {"text", "json"})
        if kind == "text" and not isinstance(item["text"], str):
            raise invalid(f"{where}.toolResult.content.{c}.text must be a string")
    if value.get("status", "success") not in ("success", "error"):
        raise invalid(f"{where}.toolResult.status must be success or error")
    if set(value) - {"toolUseId", "content", "status"}:
        raise invalid(f"{where}.toolResult has unknown fields")


def _check_cache_point(value: Any, where: str) -> None:
    if value != {"type": "default"}:
        raise invalid(f"{where}.cachePoint must be {{'type': 'default'}}")


def _one_key(block: Any, where: str, allowed: set[str]) -> str:
    if not isinstance(block, dict) or len(block) != 1 or next(iter(block)) not in allowed:
        keys = sorted(block) if isinstance(block, dict) else block
        raise invalid(f"{where} must hold exactly one of {sorted(allowed)}, not {keys}")
    return str(next(iter(block)))


def _check_system(system: Any) -> None:
    if system is None:
        return
    if not isinstance(system, list):
        raise invalid("system must be a list of SystemContentBlock")
    for n, block in enumerate(system):
        kind = _one_key(block, f"system.{n}", {"text", "cachePoint"})
        if kind == "text" and (not isinstance(block["text"], str) or not block["text"]):
            raise invalid(f"The text field in the SystemContentBlock object at system.{n} is blank.")
        if kind == "cachePoint":
            _check_cache_point(block["cachePoint"], f"system.{n}")


def _check_tool_config(config: Any) -> None:
    tools = config.get("tools") if isinstance(config, dict) else None
    if not isinstance(tools, list) or not tools:
        raise invalid("toolConfig.tools must hold at least one tool")
    names: list[str] = []
    for n, tool in enumerate(tools):
        kind = _one_key(tool, f"toolConfig.tools.{n}", {"toolSpec", "cachePoint"})
        if kind == "cachePoint":
            _check_cache_point(tool["cachePoint"], f"toolConfig.tools.{n}")
            continue
        spec = tool["toolSpec"]
        name = spec.get("name") if isinstance(spec, dict) else None
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise invalid(
                f"1 validation error detected: Value '{name}' at 'toolConfig.tools.{n}.member."
                "toolSpec.name' failed to satisfy constraint: Member must satisfy regular "
                "expression pattern: [a-zA-Z0-9_-]+"
            )
        schema = spec.get("inputSchema")
        if not isinstance(schema, dict) or set(schema) != {"json"} or not isinstance(schema["json"], dict):
            raise invalid(f"toolConfig.tools.{n}.toolSpec.inputSchema must be {{'json': <object>}}")
        if "description" in spec and (not isinstance(spec["description"], str) or not spec["description"]):
            raise invalid(f"toolConfig.tools.{n}.toolSpec.description must be a non-empty string")
        if name in names:
            raise invalid(f"The tool name {name} is used more than once in toolConfig.tools.")
        names.append(name)
    choice = config.get("toolChoice")
    if choice is not None:
        kind = _one_key(choice, "toolConfig.toolChoice", {"auto", "any", "tool"})
        if kind == "tool" and (choice["tool"] or {}).get("name") not in names:
            raise invalid("toolConfig.toolChoice.tool.name must name one of toolConfig.tools")
    if set(config) - {"tools", "toolChoice"}:
        raise invalid("toolConfig has unknown fields")


def _check_inference(config: Any) -> None:
    if config is None:
        return
    if not isinstance(config, dict) or set(config) - _INFERENCE_KEYS:
        raise invalid(f"inferenceConfig may only hold {sorted(_INFERENCE_KEYS)}")
    tokens = config.get("maxTokens", 1)
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
        raise invalid("The maximum tokens you requested exceeds the model limit or is below 1.")
    for key in ("temperature", "topP"):
        value = config.get(key, 0)
        if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1:
            raise invalid(
                f"1 validation error detected: Value '{value}' at 'inferenceConfig.{key}' "
                "failed to satisfy constraint: Member must have value between 0 and 1"
            )
