"""A local OpenAI-compatible HTTP server that replays scripted turns, so the real ``openai`` SDK and
Ragline's adapters run end to end in tests (real HTTP, real SSE, real retries), on 127.0.0.1 only.

Registered as a pytest plugin (``pytest_plugins`` in ``tests/conftest.py``), so any test can ask for
``openai_replay``: the session's server with an empty script and request log. Script it with turns::

    openai_replay.script([text("Hello", " world"), tool_call("search", {"query": "x"}), error(429)])

Each ``POST /v1/chat/completions`` consumes the next turn (an ``error(..., times=n)`` turn answers n
requests, ``times=None`` all of them); with no turn left the server answers 400 (not retried), so an
over-eager caller fails loudly. ``POST /v1/embeddings`` returns :func:`embedding_vector` per input
(not unit length) and consumes no turn. Every request body is recorded in ``requests``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import struct
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from openai import OpenAI

    from ragline.config import Settings

SERVED_MODEL = "replay-served-model"
_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error"}
_ERROR_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}


@dataclass(frozen=True)
class Call:
    """One tool call the model makes; ``arguments`` is the raw JSON text."""

    name: str
    arguments: str
    call_id: str | None = None


@dataclass(frozen=True)
class Turn:
    """One scripted answer to one chat request (build it with the functions below)."""

    deltas: tuple[str, ...] = ()
    calls: tuple[Call, ...] = ()
    usage: tuple[int, int] | None = (100, 10)
    """(prompt_tokens, completion_tokens), sent when the request asks for ``include_usage``; None: a
    server that never reports token counts."""
    finish: str | None = None
    """The turn's ``finish_reason`` (default: ``tool_calls`` with calls, else ``stop``)."""
    delay_s: float = 0.0
    """Pause before each streamed chunk (a slow stream)."""
    silent_s: float = 0.0
    """Pause before the response starts (a server still reading a long prompt)."""
    hang_up: bool = False
    """Stream the deltas, then drop the connection without finishing the chunked body."""
    clean_end: bool = False
    """With ``hang_up``: end the chunked body properly, still without a finish chunk or ``[DONE]``."""
    status: int = 200
    error: Mapping[str, Any] | None = None
    """The OpenAI error object: the response body's when ``status`` is not 200, else a stream event."""
    headers: Mapping[str, str] = field(default_factory=dict)
    times: int | None = 1
    """How many requests this turn answers; None: every request from now on."""


def silent(seconds: float, then: Turn, *, times: int | None = 1) -> Turn:
    """``then``, answered only after ``seconds`` of silence before any byte of the response."""
    return replace(then, silent_s=seconds, times=times)


def call(name: str, arguments: Mapping[str, Any] | str, *, call_id: str | None = None) -> Call:
    return Call(name, arguments if isinstance(arguments, str) else json.dumps(arguments), call_id)


def text(
    *deltas: str, usage: tuple[int, int] | None = (100, 10), delay_s: float = 0.0, finish: str | None = None
) -> Turn:
    """A streamed text answer, one SSE chunk per delta (``delay_s`` before each: a slow stream)."""
    return Turn(deltas=deltas, usage=usage, delay_s=delay_s, finish=finish)


def tool_call(
    name: str,
    arguments: Mapping[str, Any] | str,
    *,
    call_id: str | None = None,
    text_before: Sequence[str] = (),
    usage: tuple[int, int] = (100, 10),
    delay_s: float = 0.0,
) -> Turn:
    """A turn ending in one tool call: id and name in its first chunk, arguments in 2–4 more."""
    only = call(name, arguments, call_id=call_id)
    return tool_calls(only, text_before=text_before, usage=usage, delay_s=delay_s)


def tool_calls(
    *calls: Call, text_before: Sequence[str] = (), usage: tuple[int, int] = (100, 10), delay_s: float = 0.0
) -> Turn:
    """A turn ending in several tool calls whose chunks are interleaved (round robin by ``index``)."""
    return Turn(deltas=tuple(text_before), calls=calls, usage=usage, delay_s=delay_s)


def hang_up(*deltas: str, clean: bool = False) -> Turn:
    """Stream these deltas, then drop the connection mid-body (no finish chunk, no ``[DONE]``).

    ``clean=True`` ends the HTTP body properly instead (a proxy that lost its upstream): the client
    sees no transport error, only a turn that never finished.
    """
    return Turn(deltas=deltas, hang_up=True, clean_end=clean)


def stream_error(*deltas: str, message: str = "The server had an error.", type: str = "server_error") -> Turn:
    """Stream these deltas, then an ``{"error": ...}`` event instead of the finish (as OpenAI does)."""
    return Turn(deltas=deltas, error={"message": message, "type": type, "param": None, "code": None})


def error(
    status: int,
    *,
    message: str | None = None,
    type: str | None = None,
    code: str | None = None,
    retry_after_ms: int | None = 1,
    headers: Mapping[str, str] | None = None,
    times: int | None = 1,
) -> Turn:
    """An HTTP error with an OpenAI error body.

    The SDK ignores ``retry-after: 0`` (it then backs off 0.5 s, 1 s, ...), so retries are made fast
    with ``retry-after-ms: 1`` by default; pass ``retry_after_ms=None`` to exercise its own backoff.
    """
    body = {
        "message": message or f"replayed error {status}",
        "type": type or _ERROR_TYPES.get(status, "server_error" if status >= 500 else "requests"),
        "param": None,
        "code": code or _ERROR_CODES.get(status),
    }
    all_headers = {"retry-after-ms": str(retry_after_ms)} if retry_after_ms is not None else {}
    return Turn(status=status, error=body, headers={**all_headers, **(headers or {})}, times=times)


def embedding_vector(text: str, dimension: int) -> list[float]:
    """The deterministic (and deliberately not unit-length) vector the server returns for ``text``."""
    rng = random.Random(hashlib.sha256(text.encode()).digest())
    return [round(rng.uniform(-3.0, 3.0), 4) for _ in range(dimension)]


def split_arguments(arguments: str) -> list[str]:
    """Arguments as 2–4 non-empty pieces (1 when shorter than 2 characters)."""
    if len(arguments) < 2:
        return [arguments]
    n = min(4, max(2, len(arguments) // 8), len(arguments))
    step = -(-len(arguments) // n)
    return [arguments[i : i + step] for i in range(0, len(arguments), step)]


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]


class OpenAIReplay:
    """The server's script and request log; ``base_url`` ends in ``/v1`` like OpenAI's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._script: list[list[Any]] = []
        self.requests: list[RecordedRequest] = []
        self.embedding_dimension = 8
        self.embeddings_reversed = False
        self._http = _Server(("127.0.0.1", 0), _Handler)
        self._http.replay = self
        self.base_url = f"http://127.0.0.1:{self._http.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=self._http.serve_forever, args=(0.05,), name="openai-replay", daemon=True
        )
        self._thread.start()

    def script(self, turns: Sequence[Turn]) -> OpenAIReplay:
        """Replace the script (the request log is kept); returns self for chaining."""
        with self._lock:
            self._script = [[t, t.times] for t in turns]
        return self

    def embeddings(self, *, dimension: int = 8, reversed_order: bool = False) -> OpenAIReplay:
        """Vectors of ``dimension``; ``reversed_order`` returns ``data`` last-first (order by ``index``)."""
        self.embedding_dimension, self.embeddings_reversed = dimension, reversed_order
        return self

    def reset(self) -> None:
        with self._lock:
            self._script, self.requests = [], []
        self.embeddings()

    @property
    def remaining(self) -> list[Turn]:
        """Turns not consumed yet (a ``times=None`` turn stays forever)."""
        with self._lock:
            return [t for t, _ in self._script]

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests if r.path.endswith("/embeddings")]

    def client(self, *, max_retries: int = 2, timeout: float = 5.0) -> OpenAI:
        """A real SDK client pointed here."""
        from openai import OpenAI

        return OpenAI(api_key="test-key", base_url=self.base_url, max_retries=max_retries, timeout=timeout)

    def settings(self, **overrides: Any) -> Settings:
        """Settings that send Ragline's OpenAI adapters here, with fast retries and timeouts."""
        from ragline.config import Settings

        values: dict[str, Any] = {
            "openai_base_url": self.base_url,
            "openai_api_key": "test-key",
            "llm_max_retries": 2,
            "llm_timeout_s": 5.0,
        }
        return Settings(**{**values, **overrides})

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def _record(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> None:
        with self._lock:
            self.requests.append(RecordedRequest(path, body, headers))

    def _next_turn(self) -> Turn | None:
        with self._lock:
            if not self._script:
                return None
            entry = self._script[0]
            turn, left = entry
            if left is not None:
                entry[1] = left - 1
                if entry[1] <= 0:
                    self._script.pop(0)
            return turn  # type: ignore[no-any-return]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    replay: OpenAIReplay

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that time out or hang up are part of the tests, not server errors."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        """``GET /v1/models``: the one model this server "serves" (as llama.cpp or vLLM list theirs)."""
        if self.path == "/v1/models":
            model = {"id": SERVED_MODEL, "object": "model", "created": 0, "owned_by": "replay"}
            self._json(200, {"object": "list", "data": [model]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        body: dict[str, Any] = json.loads(raw or b"{}")
        replay = self.server.replay
        replay._record(self.path, body, {k.lower(): v for k, v in self.headers.items()})
        try:
            if self.path == "/v1/chat/completions":
                self._chat(replay._next_turn(), body)
            elif self.path == "/v1/embeddings":
                self._embeddings(body, replay)
            else:
                self._json(
                    404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}}
                )
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _json(
        self, status: int, payload: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _chat(self, turn: Turn | None, body: dict[str, Any]) -> None:
        if turn is not None and turn.silent_s:
            time.sleep(turn.silent_s)
        if turn is None:
            n = len(self.server.replay.chat_requests)
            message = f"replay script exhausted: chat request #{n} has no scripted turn"
            err = {"message": message, "type": "replay_script_exhausted", "param": None, "code": None}
            self._json(400, {"error": err}, {"x-should-retry": "false"})
        elif turn.error is not None and turn.status != 200:
            self._json(turn.status, {"error": turn.error}, turn.headers)
        elif body.get("stream"):
            self._stream(turn, body)
        else:
            self._json(200, _completion(turn, body))

    def _stream(self, turn: Turn, body: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for chunk in _chunks(turn, body):  # a mid-stream error or hang-up replaces the finish chunk
            finishing = bool(chunk.get("choices") and chunk["choices"][0]["finish_reason"])
            if finishing and turn.error is not None:
                self._write(f"data: {json.dumps({'error': turn.error})}\n\n")
                break
            if finishing and turn.hang_up:
                if turn.clean_end:
                    self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                self.close_connection = True
                return
            time.sleep(turn.delay_s)
            self._write(f"data: {json.dumps(chunk)}\n\n")
        self._write("data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _write(self, event: str) -> None:
        data = event.encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _embeddings(self, body: dict[str, Any], replay: OpenAIReplay) -> None:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = []
        for i, text_in in enumerate(inputs):
            vector = embedding_vector(str(text_in), replay.embedding_dimension)
            encoded: Any = vector
            if body.get("encoding_format") == "base64":
                encoded = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": i, "embedding": encoded})
        if replay.embeddings_reversed:
            data.reverse()
        tokens = sum(len(str(t).split()) for t in inputs)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        self._json(200, {"object": "list", "data": data, "model": body.get("model", ""), "usage": usage})


def _chunks(turn: Turn, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The SSE chunks of a streamed turn, shaped like OpenAI's."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {**head, "choices": [choice]}

    head = {"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": int(time.time())}
    head["model"] = body.get("model", "")
    yield chunk({"role": "assistant", "content": ""})
    for piece in turn.deltas:
        yield chunk({"content": piece})
    pieces = [split_arguments(c.arguments) for c in turn.calls]
    for i, c in enumerate(turn.calls):
        fn = {"name": c.name, "arguments": ""}
        yield chunk({"tool_calls": [{"index": i, "id": _call_id(c, i), "type": "function", "function": fn}]})
    for step in range(max((len(p) for p in pieces), default=0)):
        for i, parts in enumerate(pieces):
            if step < len(parts):
                yield chunk({"tool_calls": [{"index": i, "function": {"arguments": parts[step]}}]})
    yield chunk({}, turn.finish or ("tool_calls" if turn.calls else "stop"))
    if (body.get("stream_options") or {}).get("include_usage") and turn.usage is not None:
        yield {**head, "choices": [], "usage": _usage(turn)}


def _completion(turn: Turn, body: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "".join(turn.deltas) or None}
    if turn.calls:
        message["tool_calls"] = [
            {"id": _call_id(c, i), "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for i, c in enumerate(turn.calls)
        ]
    choice = {
        "index": 0,
        "message": message,
        "finish_reason": turn.finish or ("tool_calls" if turn.calls else "stop"),
    }
    return {
        "id": "chatcmpl-replay",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "choices": [choice],
        "usage": _usage(turn),
    }


def _call_id(c: Call, index: int) -> str:
    return c.call_id or f"call_replay_{index}"


def _usage(turn: Turn) -> dict[str, int] | None:
    if turn.usage is None:
        return None
    prompt, completion = turn.usage
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


@pytest.fixture(scope="session")
def openai_replay_server() -> Iterator[OpenAIReplay]:
    replay = OpenAIReplay()
    try:
        yield replay
    finally:
        replay.close()


@pytest.fixture
def openai_replay(openai_replay_server: OpenAIReplay) -> OpenAIReplay:
    """The session's replay server with an empty script and request log."""
    openai_replay_server.reset()
    return openai_replay_server
