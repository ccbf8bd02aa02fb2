"""One chat-model script, played on either endpoint: the OpenAI-compatible replay server
(:mod:`tests.support.openai_replay`) or the local Bedrock server's Converse/ConverseStream
(:mod:`tests.support.bedrock_converse`), so the agents' tests run unchanged on both.

Registered as a pytest plugin (``pytest_plugins`` in ``tests/conftest.py``): ask for ``chat_endpoint``
(parametrized ``openai`` / ``bedrock``; restrict a test with
``@pytest.mark.parametrize("chat_endpoint", ["openai"], indirect=True)`` and say why). Script it with
the replay's turns (``text``, ``tool_call``, ``error``…); read ``chat_requests`` in OpenAI's shape.

Translation to Converse (:func:`converse_turn`): text deltas → ``say(pieces…)`` with the same token
counts (a turn without usage sends no ``metadata``); tool calls → ``use_tool`` with the same ids
(``call_replay_<i>`` when unnamed), names and arguments; finish ``stop``/``length``/``tool_calls``/
``content_filter`` → ``end_turn``/``max_tokens``/``tool_use``/``content_filtered``; HTTP errors → the
Bedrock error of that status (429 throttling, 5xx internal/bad gateway/unavailable, 401/403 access
denied, 404 not found, 400 validation), ``times`` kept; hang-ups → ``cut``; a mid-stream error event →
``stream_exception("modelStreamErrorException")``. What Converse cannot say — tool arguments that are
not a JSON object (its ``toolUse.input`` is always one), pauses — raises :class:`NotOnBedrock`: keep
such a test on OpenAI.

Translation back (:func:`openai_request`): ``system`` → leading system messages; ``toolUse`` blocks →
an assistant's ``tool_calls`` (arguments as JSON text); ``toolResult`` blocks → ``role: tool``
messages; the text the adapter writes for tool traffic it may not send as blocks (no tools offered, a
half pair) → the tool call or tool message it stands for, marked ``"as_text": True``; every other text
block → one message of its turn's role; ``toolConfig.tools`` → ``tools``; ``toolChoice`` → ``tool_choice``
(``any`` → ``"required"``); ``inferenceConfig`` → ``max_tokens`` and ``temperature``; cache points dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from tests.support.bedrock_converse import ConverseTurn, cut, fail, say, stream_exception, use_tool
from tests.support.bedrock_server import REGION, BedrockServer
from tests.support.openai_replay import OpenAIReplay, Turn

if TYPE_CHECKING:
    from ragline.ports import ChatModel

BEDROCK_MODEL = "amazon.nova-pro-v1:0"
"""Nova: its tool use streams, and it takes a cache point after the system prompt."""
LLM_MAX_RETRIES = 2
LLM_TIMEOUT_S = 5.0
STOPS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "content_filtered",
}
STATUS_ERRORS = {
    400: "ValidationException",
    401: "AccessDeniedException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    429: "ThrottlingException",
    500: "InternalServerException",
    502: "BadGatewayException",
    503: "ServiceUnavailableException",
}
_CALLED = re.compile(r"^\[called (?P<name>\S+) with (?P<input>.*)\]$", re.DOTALL)
_RESULT = "[tool result]\n"


class NotOnBedrock(ValueError):
    """A scripted turn Converse cannot express."""


class ChatEndpoint(Protocol):
    name: str

    def script(self, turns: Sequence[Turn]) -> None: ...

    @property
    def chat_requests(self) -> list[dict[str, Any]]: ...

    @property
    def remaining(self) -> list[Any]: ...

    def reset(self) -> None: ...

    def values(self) -> dict[str, Any]:
        """The :class:`~ragline.config.Settings` fields that make a Container chat with this endpoint."""
        ...

    def model(self, *, max_retries: int) -> ChatModel:
        """A chat model adapter talking to this endpoint, built directly."""
        ...


class OpenAIEndpoint:
    name = "openai"

    def __init__(self, replay: OpenAIReplay) -> None:
        self.replay = replay

    def script(self, turns: Sequence[Turn]) -> None:
        self.replay.script(turns)

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return self.replay.chat_requests

    @property
    def remaining(self) -> list[Any]:
        return self.replay.remaining

    def reset(self) -> None:
        self.replay.reset()

    def values(self) -> dict[str, Any]:
        s = self.replay.settings(llm_max_retries=LLM_MAX_RETRIES, llm_timeout_s=LLM_TIMEOUT_S)
        keys = ("openai_base_url", "openai_api_key", "llm_max_retries", "llm_timeout_s")
        return {k: getattr(s, k) for k in keys}

    def model(self, *, max_retries: int) -> ChatModel:
        from ragline.adapters.openai.chat import OpenAIChatModel

        return OpenAIChatModel(model="replay-model", client=self.replay.client(max_retries=max_retries))


class BedrockEndpoint:
    """The local Bedrock server, reached as a deployment reaches Bedrock: boto3 built from the
    environment (endpoint, dummy credentials, Region), so ``values()`` need name no URL."""

    name = "bedrock"

    def __init__(self, server: BedrockServer, monkeypatch: pytest.MonkeyPatch) -> None:
        self.server = server
        for name in (
            "AWS_PROFILE",
            "AWS_SESSION_TOKEN",
            "AWS_ENDPOINT_URL",
            "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
        ):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
        monkeypatch.setenv("AWS_REGION", REGION)

    def script(self, turns: Sequence[Turn]) -> None:
        self.server.script_converse([c for t in turns for c in converse_turn(t)])

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [openai_request(body) for body in self.server.converse_requests]

    @property
    def remaining(self) -> list[Any]:
        return self.server.converse_remaining

    def reset(self) -> None:
        self.server.reset()

    def values(self) -> dict[str, Any]:
        return {
            "chat_provider": "bedrock",
            "bedrock_chat_model": BEDROCK_MODEL,
            "aws_region": REGION,
            "llm_max_retries": LLM_MAX_RETRIES,
            "llm_timeout_s": LLM_TIMEOUT_S,
        }

    def model(self, *, max_retries: int) -> ChatModel:
        from ragline.adapters.bedrock.chat import BedrockChatModel

        return BedrockChatModel(
            model=BEDROCK_MODEL, region=REGION, retries=max_retries, read_timeout_s=LLM_TIMEOUT_S
        )


def converse_turn(turn: Turn) -> list[ConverseTurn]:
    """The Converse answers equivalent to one replay turn (``times`` copies of it)."""
    if turn.silent_s or (turn.delay_s and (turn.calls or turn.status != 200)):
        raise NotOnBedrock("only a text answer's pauses are scripted on the Bedrock server")
    if turn.status != 200:
        if turn.status not in STATUS_ERRORS:
            raise NotOnBedrock(f"no Bedrock error answers HTTP {turn.status}")
        return [fail(STATUS_ERRORS[turn.status], times=turn.times)]
    if turn.times is None:
        raise NotOnBedrock("only errors answer every request")
    return [_answer(turn)] * turn.times


def _answer(turn: Turn) -> ConverseTurn:
    if turn.hang_up:
        return cut(*turn.deltas, clean=turn.clean_end)
    if turn.error is not None:
        return stream_exception("modelStreamErrorException", *turn.deltas, message=str(turn.error["message"]))
    counts: dict[str, Any] = {"usage": False}
    if turn.usage is not None:
        counts = {"input_tokens": turn.usage[0], "output_tokens": turn.usage[1]}
    if not turn.calls:
        return say(*turn.deltas, stop=STOPS[turn.finish or "stop"], delay_s=turn.delay_s, **counts)
    if turn.finish not in (None, "tool_calls"):
        raise NotOnBedrock(f"a Converse turn with tool use always stops as tool_use, not {turn.finish}")
    calls = [
        (c.name, _object(c.arguments), c.call_id or f"call_replay_{i}") for i, c in enumerate(turn.calls)
    ]
    (name, first, call_id), *more = calls
    return use_tool(name, first, tool_use_id=call_id, text_before=turn.deltas, more=tuple(more), **counts)


def _object(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise NotOnBedrock(f"Bedrock's toolUse input is always a JSON object, not {arguments!r}")
    return value


def openai_request(body: dict[str, Any]) -> dict[str, Any]:
    """A recorded Converse request in the shape the OpenAI adapter sends (see the module docstring)."""
    out: dict[str, Any] = {"model": body.get("modelId"), "stream": body.get("stream")}
    system = [{"role": "system", "content": b["text"]} for b in body.get("system", []) if "text" in b]
    out["messages"] = system + [m for turn in body.get("messages", []) for m in _messages(turn)]
    config = body.get("inferenceConfig") or {}
    if "maxTokens" in config:
        out["max_tokens"] = config["maxTokens"]
    if "temperature" in config:
        out["temperature"] = config["temperature"]
    tool_config = body.get("toolConfig")
    if tool_config:
        out["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t["toolSpec"]["name"],
                    "description": t["toolSpec"].get("description"),
                    "parameters": t["toolSpec"]["inputSchema"]["json"],
                },
            }
            for t in tool_config["tools"]
            if "toolSpec" in t
        ]
        choice = tool_config.get("toolChoice")
        if choice:
            out["tool_choice"] = _tool_choice(choice)
    return out


def _tool_choice(choice: dict[str, Any]) -> Any:
    if "any" in choice:
        return "required"
    if "auto" in choice:
        return "auto"
    return {"type": "function", "function": {"name": choice["tool"]["name"]}}


def _messages(turn: dict[str, Any]) -> list[dict[str, Any]]:
    if turn["role"] == "assistant":
        return [_assistant(turn["content"])]
    out: list[dict[str, Any]] = []
    for block in turn["content"]:
        if "toolResult" in block:
            result = block["toolResult"]
            content = "".join(c.get("text", "") for c in result["content"])
            out.append({"role": "tool", "tool_call_id": result["toolUseId"], "content": content})
        elif "text" in block and block["text"].startswith(_RESULT):
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": None,
                    "content": block["text"][len(_RESULT) :],
                    "as_text": True,
                }
            )
        elif "text" in block:
            out.append({"role": "user", "content": block["text"]})
    return out


def _assistant(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in blocks:
        written = _CALLED.match(block.get("text", ""))
        if "toolUse" in block:
            use = block["toolUse"]
            calls.append(_call(use["toolUseId"], use["name"], json.dumps(use["input"])))
        elif written:
            calls.append({**_call(None, written["name"], written["input"]), "as_text": True})
        elif "text" in block:
            texts.append(block["text"])
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _call(call_id: str | None, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.fixture(params=["openai", "bedrock"])
def chat_endpoint(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> ChatEndpoint:
    """The session's replay server or Bedrock server, with an empty script and request log."""
    if request.param == "openai":
        return OpenAIEndpoint(request.getfixturevalue("openai_replay"))
    return BedrockEndpoint(request.getfixturevalue("bedrock_server"), monkeypatch)
