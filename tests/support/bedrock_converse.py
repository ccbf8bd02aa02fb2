"""Scripted answers for bedrock-runtime Converse and ConverseStream on the local Bedrock server
(:mod:`tests.support.bedrock_server`): one :class:`ConverseTurn` per request, queued with
``bedrock_server.script_converse([...])``, in the wire format botocore parses — JSON for
``POST /model/{modelId}/converse``, ``application/vnd.amazon.eventstream`` frames (chunked) for
``POST /model/{modelId}/converse-stream``.

A request is checked as Bedrock checks it first (:mod:`tests.support.bedrock_converse_checks`): a bad one
is answered 400 ``ValidationException`` and consumes no turn. Every request, good, bad, unsigned or
answered by a server-level ``bedrock_server.fail(...)``, is recorded in ``bedrock_server.converse_requests``
(its body with the percent-decoded ``modelId`` and ``stream`` added).

What botocore (1.44, urllib3 2.8) raises for each scripted failure, for the adapter to map:

- ``fail(code)``: ``botocore.exceptions.ClientError`` with ``error["Error"]["Code"] == code`` and
  ``ResponseMetadata.HTTPStatusCode`` its status, from ``client.converse(...)`` and equally from
  ``client.converse_stream(...)`` itself (before any event; nothing to iterate). Codes botocore retries
  (ThrottlingException, ModelNotReadyException, InternalServerException, ServiceUnavailableException…)
  consume one turn per attempt.
- ``stream_exception(code, ...)``: iterating ``response["stream"]`` yields the events before it, then
  raises ``botocore.exceptions.EventStreamError`` (a ClientError) whose code is the member name as sent,
  e.g. ``"throttlingException"`` (lower camel case). On ``converse`` (no stream) the turn answers the
  HTTP error of that name (``ThrottlingException``; ``modelStreamErrorException`` → ``ModelErrorException``).
- ``cut(...)`` (connection dropped mid-body): iterating yields the events before it, then raises
  ``urllib3.exceptions.ProtocolError`` ("Response ended prematurely") — botocore does not wrap it (it
  reads the event stream straight from urllib3), so it is neither a ClientError nor a BotoCoreError.
  On ``converse`` half the declared Content-Length is sent: botocore raises nothing and returns a
  response without ``output``, ``stopReason`` or ``usage`` (its JSON parser swallows the torn body).
- ``cut(..., clean=True)``: iterating just ends, without ``messageStop`` or ``metadata``; nothing is
  raised — the adapter must notice the missing ``messageStop`` itself.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any, Literal

from tests.support import bedrock_wire as wire
from tests.support.bedrock_wire import ERROR_STATUS, ServiceError

STOP_REASONS = (
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "guardrail_intervened",
    "content_filtered",
)
STREAM_EXCEPTIONS = {
    "internalServerException": "InternalServerException",
    "modelStreamErrorException": "ModelErrorException",
    "validationException": "ValidationException",
    "throttlingException": "ThrottlingException",
    "serviceUnavailableException": "ServiceUnavailableException",
}
"""ConverseStreamOutput's exception members, and the HTTP error a non-stream Converse answers instead."""

Kind = Literal["say", "tool_use", "fail", "stream_exception", "cut"]
Ending = Literal["end", "clean", "drop"]


@dataclass(frozen=True)
class ToolCall:
    name: str
    input: dict[str, Any]
    tool_use_id: str


@dataclass(frozen=True)
class ConverseTurn:
    """One scripted answer to one Converse/ConverseStream request (``fail`` turns: ``times`` requests)."""

    kind: Kind
    pieces: tuple[str, ...] = ()
    stop: str = "end_turn"
    calls: tuple[ToolCall, ...] = ()
    code: str = ""
    message: str = ""
    times: int | None = 1
    clean: bool = False
    usage: bool = True
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read: int = 0
    cache_write: int = 0
    delay_s: float = 0.0
    """Streamed: the pause before each frame after ``messageStart`` (a slow model)."""


def say(
    *pieces: str,
    stop: str = "end_turn",
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cache_read: int = 0,
    cache_write: int = 0,
    usage: bool = True,
    delay_s: float = 0.0,
) -> ConverseTurn:
    """A text answer; streamed, each piece is one ``contentBlockDelta`` (``delay_s`` before each frame
    after the first). Token counts left out (None) are estimated from the request and the pieces (0 is
    sent as 0); ``usage=False`` sends no ``metadata`` event (no ``usage`` field)."""
    if stop not in STOP_REASONS:
        raise ValueError(f"unknown stop reason {stop!r}")
    return ConverseTurn(
        "say",
        pieces,
        stop,
        usage=usage,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read=cache_read,
        cache_write=cache_write,
        delay_s=delay_s,
    )


def use_tool(
    name: str,
    input: dict[str, Any],
    *,
    tool_use_id: str = "tooluse_1",
    text_before: tuple[str, ...] = (),
    more: tuple[tuple[str, dict[str, Any], str], ...] = (),
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cache_read: int = 0,
    cache_write: int = 0,
    usage: bool = True,
) -> ConverseTurn:
    """Optional text first, then one toolUse block per call (``more``: further ``(name, input, id)``),
    ending with ``stopReason: "tool_use"``."""
    calls = (ToolCall(name, input, tool_use_id), *(ToolCall(n, i, t) for n, i, t in more))
    return ConverseTurn(
        "tool_use",
        text_before,
        "tool_use",
        calls,
        usage=usage,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read=cache_read,
        cache_write=cache_write,
    )


def fail(code: str, *, times: int | None = 1, message: str = "") -> ConverseTurn:
    """Answer the next ``times`` requests (None: all) with HTTP error ``code`` as Bedrock sends it."""
    if code not in ERROR_STATUS:
        raise ValueError(f"unknown Bedrock error {code!r}")
    if times is not None and times < 1:
        raise ValueError("times must be at least 1 (or None)")
    return ConverseTurn("fail", code=code, times=times, message=message or f"scripted {code}")


def stream_exception(code: str, *pieces: str, message: str = "") -> ConverseTurn:
    """A stream sending ``pieces`` as text deltas, then an exception frame of ``code`` (e.g.
    ``throttlingException``), then its end."""
    if code not in STREAM_EXCEPTIONS:
        raise ValueError(f"{code!r} is not a ConverseStream exception event ({sorted(STREAM_EXCEPTIONS)})")
    return ConverseTurn("stream_exception", pieces, code=code, message=message or f"scripted {code}")


def cut(*pieces: str, clean: bool = False) -> ConverseTurn:
    """A stream sending ``pieces`` then dropping the connection (``clean``: ending the HTTP body
    properly) without ``messageStop`` or ``metadata``."""
    return ConverseTurn("cut", pieces, clean=clean)


@dataclass(frozen=True)
class Reply:
    """What the handler sends: a JSON body, or event-stream ``frames`` ended as ``ending`` says."""

    payload: dict[str, Any] | None = None
    frames: tuple[bytes, ...] = ()
    ending: Ending = "end"
    delay_s: float = 0.0


def reply(turn: ConverseTurn, body: dict[str, Any], *, stream: bool) -> Reply:
    """The answer ``turn`` gives to the (already checked) request ``body``."""
    if turn.kind == "fail":
        raise ServiceError(turn.code, turn.message)
    if not stream:
        if turn.kind == "stream_exception":
            raise ServiceError(STREAM_EXCEPTIONS[turn.code], turn.message)
        return Reply(payload=_response(turn, body), ending="drop" if turn.kind == "cut" else "end")
    frames = [wire.event("messageStart", {"role": "assistant"}), *_text_frames(turn.pieces)]
    if turn.kind == "stream_exception":
        return Reply(frames=(*frames, wire.exception(turn.code, turn.message)))
    if turn.kind == "cut":
        return Reply(frames=tuple(frames), ending="clean" if turn.clean else "drop")
    if turn.pieces:
        frames.append(wire.event("contentBlockStop", {"contentBlockIndex": 0}))
    for index, call in enumerate(turn.calls, start=1 if turn.pieces else 0):
        frames += _tool_frames(index, call)
    frames.append(wire.event("messageStop", {"stopReason": turn.stop}))
    if turn.usage:
        frames.append(wire.event("metadata", {"usage": _usage(turn, body), "metrics": _metrics(turn)}))
    return Reply(frames=tuple(frames), delay_s=turn.delay_s)


def _text_frames(pieces: tuple[str, ...]) -> list[bytes]:
    return [wire.event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": p}}) for p in pieces]


def _tool_frames(index: int, call: ToolCall) -> list[bytes]:
    start = {"toolUse": {"toolUseId": call.tool_use_id, "name": call.name}}
    frames = [wire.event("contentBlockStart", {"contentBlockIndex": index, "start": start})]
    for fragment in fragments(json.dumps(call.input)):
        delta = {"toolUse": {"input": fragment}}
        frames.append(wire.event("contentBlockDelta", {"contentBlockIndex": index, "delta": delta}))
    return [*frames, wire.event("contentBlockStop", {"contentBlockIndex": index})]


def fragments(text: str) -> list[str]:
    """``text`` in two or three non-empty pieces, as models stream a tool's JSON input."""
    cuts = [0, len(text) // 3, 2 * len(text) // 3, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(cuts) if a < b]


def _response(turn: ConverseTurn, body: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"text": "".join(turn.pieces)}] if turn.pieces else []
    content += [
        {"toolUse": {"toolUseId": c.tool_use_id, "name": c.name, "input": c.input}} for c in turn.calls
    ]
    answer: dict[str, Any] = {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": turn.stop,
        "metrics": _metrics(turn),
    }
    if turn.usage:
        answer["usage"] = _usage(turn, body)
    return answer


def _usage(turn: ConverseTurn, body: dict[str, Any]) -> dict[str, int]:
    """The scripted counts, or estimates (4 characters a token) of the request and the answer."""
    prompt = json.dumps([body.get("system"), body.get("messages"), body.get("toolConfig")])
    answer = "".join(turn.pieces) + "".join(json.dumps(c.input) for c in turn.calls)
    inputs = turn.input_tokens if turn.input_tokens is not None else max(1, len(prompt) // 4)
    outputs = turn.output_tokens if turn.output_tokens is not None else max(1, len(answer) // 4)
    usage = {"inputTokens": inputs, "outputTokens": outputs}
    usage["totalTokens"] = inputs + outputs + turn.cache_read + turn.cache_write
    if turn.cache_read:
        usage["cacheReadInputTokens"] = turn.cache_read
    if turn.cache_write:
        usage["cacheWriteInputTokens"] = turn.cache_write
    return usage


def _metrics(turn: ConverseTurn) -> dict[str, int]:
    return {"latencyMs": 20 + 5 * (len(turn.pieces) + len(turn.calls))}
