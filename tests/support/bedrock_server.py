"""A local HTTP server speaking Bedrock's REST-JSON wire protocol as botocore sends it, on 127.0.0.1, so
boto3 and Ragline's Bedrock adapters run end to end in tests (real HTTP, real SigV4 signing, real
botocore retries and error parsing) with real vectors and scores from the offline MiniLM model.

Registered as a pytest plugin (``pytest_plugins`` in ``tests/conftest.py``): ask for ``bedrock_server``
(the session's server, its faults, delays and request log cleared). Point boto3 at it with
:meth:`BedrockServer.client`.

Operations (both services share one endpoint; botocore signs both with signing name ``bedrock``):

- ``POST /model/{modelId}/invoke`` (bedrock-runtime ``InvokeModel``; botocore percent-encodes the
  ``:`` of the model id). Only ``amazon.titan-embed-text-v2:0`` exists here; its body is checked like
  Titan V2 does (``inputText`` 1..50,000 characters, ``dimensions`` 256/512/1024, ``normalize``, no
  other keys) and answered ``{"embedding": [...], "inputTextTokenCount": n}``. The vector is MiniLM's
  384-d one, truncated to the first ``dimensions`` values or zero-padded up to them, then L2
  renormalised — deterministic, and distinct texts stay distinct. With ``"normalize": false`` it is
  scaled by ``1 + len(inputText) % 5`` (Titan's raw vectors are not unit length either).
- ``POST /rerank`` (bedrock-agent-runtime ``Rerank``): the request is checked against the service
  model's shapes (one TEXT query, 1..1000 INLINE TEXT sources, ``BEDROCK_RERANKING_MODEL``, a model
  ARN of the model pattern naming ``amazon.rerank-v1:0`` or ``cohere.rerank-v3-5:0``,
  ``numberOfResults`` 1..number of sources). ``relevanceScore`` is ``(1 + cosine) / 2`` of the MiniLM
  vectors of query and document, results best first. ``rerank_page_size`` splits them into pages
  joined by ``nextToken``.
- ``POST /guardrail/{id}/version/{version}/apply`` (bedrock-runtime ``ApplyGuardrail``): a contextual
  grounding check, see :mod:`tests.support.bedrock_guardrail`.
- ``POST /model/{modelId}/converse`` and ``/converse-stream`` (bedrock-runtime ``Converse`` /
  ``ConverseStream``, any model or inference-profile id): answered from scripted turns, see
  :mod:`tests.support.bedrock_converse` (:meth:`BedrockServer.script_converse`).

Every request must carry a SigV4 ``Authorization`` header (``AWS4-HMAC-SHA256 Credential=…/bedrock/
aws4_request, SignedHeaders=…, Signature=…``) and ``X-Amz-Date``; otherwise the answer is 403
``AccessDeniedException``. The signature itself is not verified. Errors are sent as Bedrock does: the
code in the ``x-amzn-ErrorType`` header, ``{"message": …}`` as the body (or, with ``via="type"``, the
code only in the body's ``__type``).
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote

import numpy as np
import pytest

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ragline.adapters.local_models.embedder import LocalOnnxEmbedder

from tests.support.bedrock_converse import ConverseTurn, Reply, reply
from tests.support.bedrock_converse_checks import check_request
from tests.support.bedrock_guardrail import PATH as GUARDRAIL_PATH
from tests.support.bedrock_guardrail import apply_guardrail
from tests.support.bedrock_requests import RERANK_MODELS, rerank, titan_request
from tests.support.bedrock_wire import ERROR_STATUS, ServiceError

__all__ = ["ERROR_STATUS", "RERANK_MODELS", "BedrockServer", "ServiceError", "minilm", "titan_vector"]

REGION = "us-east-1"
TITAN_V2 = "amazon.titan-embed-text-v2:0"
MINILM_DIMENSION = 384

_AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=[^/\s]+/\d{8}/(?P<region>[a-z0-9-]+)/(?P<service>[a-z0-9-]+)"
    r"/aws4_request,\s*"
    r"SignedHeaders=(?P<signed>[a-z0-9;-]+),\s*Signature=[0-9a-f]{64}$"
)

Operation = Literal["InvokeModel", "Rerank", "Converse", "ConverseStream", "ApplyGuardrail"]
_OPERATIONS = {"invoke": "InvokeModel", "converse": "Converse", "converse-stream": "ConverseStream"}


@dataclass(frozen=True)
class Fault:
    """A scripted error answer for the next ``times`` requests (None: all) of ``operation`` (None: any)."""

    code: str
    status: int
    times: int | None = 1
    via: Literal["header", "type"] = "header"
    operation: Operation | None = None


@dataclass(frozen=True)
class RecordedRequest:
    operation: str
    path: str
    headers: dict[str, str]
    body: Any


_MINILM: dict[str, LocalOnnxEmbedder] = {}
_MINILM_LOCK = threading.Lock()


def minilm() -> LocalOnnxEmbedder:
    """The offline model behind every vector and score (loaded on the first request, once)."""
    with _MINILM_LOCK:
        if not _MINILM:
            from ragline.adapters.local_models.embedder import LocalOnnxEmbedder

            _MINILM["model"] = LocalOnnxEmbedder()
        return _MINILM["model"]


def titan_vector(text: str, dimensions: int, *, normalize: bool = True) -> NDArray[np.float32]:
    """The vector this server answers for ``text`` (see the module docstring)."""
    base = minilm().embed_query(text)
    sized = np.zeros(dimensions, dtype=np.float32)
    n = min(dimensions, MINILM_DIMENSION)
    sized[:n] = base[:n]
    sized /= np.linalg.norm(sized)
    return sized if normalize else sized * np.float32(1 + len(text) % 5)


class BedrockServer:
    """The server, its fault script and its request log; ``url`` is the ``endpoint_url`` for boto3."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._faults: list[list[Any]] = []
        self.requests: list[RecordedRequest] = []
        self.embed_delays: dict[str, float] = {}
        """Seconds to wait before answering InvokeModel for a given ``inputText``."""
        self.rerank_page_size: int | None = None
        self._converse_script: list[list[Any]] = []
        self.converse_requests: list[dict[str, Any]] = []
        """Converse/ConverseStream request bodies in order, with ``modelId`` and ``stream`` added."""
        self.converse_default: ConverseTurn | None = None
        """The answer when no scripted turn is left (None: a 500 ``InternalServerException``)."""
        self._in_flight = 0
        self.max_in_flight = 0
        self._http = _Server(("127.0.0.1", 0), _Handler)
        self._http.bedrock = self
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        self._thread = threading.Thread(
            target=self._http.serve_forever, args=(0.05,), name="bedrock-server", daemon=True
        )
        self._thread.start()

    def fail(
        self,
        code: str,
        *,
        times: int | None = 1,
        via: Literal["header", "type"] = "header",
        operation: Operation | None = None,
        status: int | None = None,
    ) -> BedrockServer:
        """Answer the next ``times`` matching requests with error ``code`` (its modelled status)."""
        fault = Fault(code, status or ERROR_STATUS[code], times, via, operation)
        with self._lock:
            self._faults.append([fault, times])
        return self

    def reset(self) -> None:
        """Forget faults, delays and requests, once requests still running (a client that timed out
        and left) have finished, so they cannot leak into the next test's log or concurrency."""
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=10)
            self._faults, self.requests = [], []
            self.embed_delays, self.rerank_page_size = {}, None
            self._converse_script, self.converse_requests, self.converse_default = [], [], None
            self.max_in_flight = 0

    def script_converse(self, turns: Iterable[ConverseTurn]) -> None:
        """Queue answers for the next Converse/ConverseStream requests, one per request (a ``fail``
        turn answers ``times`` requests; ``times=None``: every later one)."""
        with self._lock:
            self._converse_script += [[turn, turn.times if turn.kind == "fail" else 1] for turn in turns]

    @property
    def converse_remaining(self) -> list[ConverseTurn]:
        with self._lock:
            return [turn for turn, _ in self._converse_script]

    def recorded(self, operation: Operation) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.operation == operation]

    def client(
        self, service: str, *, signed: bool = True, max_attempts: int = 2, region: str = REGION, **config: Any
    ) -> Any:
        """A real boto3 client (``bedrock-runtime`` or ``bedrock-agent-runtime``) pointed here, signing for
        ``region`` (Rerank refuses a model Bedrock does not offer there)."""
        import boto3
        from botocore import UNSIGNED
        from botocore.config import Config

        options: dict[str, Any] = {
            "retries": {"max_attempts": max_attempts, "mode": "standard"},
            "connect_timeout": 2,
            "read_timeout": 10,
            **config,
        }
        if not signed:
            options["signature_version"] = UNSIGNED
        return boto3.client(
            service,
            endpoint_url=self.url,
            region_name=region,
            aws_access_key_id="test",
            aws_secret_access_key="test",
            config=Config(**options),
        )

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    # -- used by the handler -----------------------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_fault(self, operation: str) -> Fault | None:
        with self._lock:
            for entry in self._faults:
                fault, left = entry
                if fault.operation not in (None, operation):
                    continue
                if left is not None:
                    entry[1] = left - 1
                    if entry[1] <= 0:
                        self._faults.remove(entry)
                return fault  # type: ignore[no-any-return]
            return None

    def _next_turn(self) -> ConverseTurn:
        with self._lock:
            if not self._converse_script:
                if self.converse_default is None:
                    raise ServiceError("InternalServerException", "no scripted converse turn")
                return self.converse_default
            entry = self._converse_script[0]
            if entry[1] is not None:
                entry[1] -= 1
                if entry[1] <= 0:
                    self._converse_script.pop(0)
            return entry[0]  # type: ignore[no-any-return]

    @contextmanager
    def _counting(self) -> Iterator[None]:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            yield
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    bedrock: BedrockServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that time out or hang up are part of the tests, not server errors."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        path = self.path.split("?", 1)[0]
        invoke = re.fullmatch(r"/model/(?P<model>[^/]+)/(?P<op>invoke|converse|converse-stream)", path)
        operation = _OPERATIONS[invoke["op"]] if invoke else "Rerank" if path == "/rerank" else "Unknown"
        if GUARDRAIL_PATH.match(path):
            operation = "ApplyGuardrail"
        headers = {k.lower(): v for k, v in self.headers.items()}
        bedrock = self.server.bedrock
        try:
            body: Any = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw
        bedrock._record(RecordedRequest(operation, self.path, headers, body))
        if invoke and operation != "InvokeModel":  # every Converse request, refused or not
            recorded = body if isinstance(body, dict) else {"body": body}
            stream = operation == "ConverseStream"
            with bedrock._lock:
                bedrock.converse_requests.append(
                    {**recorded, "modelId": unquote(invoke["model"]), "stream": stream}
                )
        with bedrock._counting():
            try:
                self._refuse_unsigned(headers)
                fault = bedrock._next_fault(operation)
                if fault is not None:
                    self._error(fault.status, fault.code, f"scripted {fault.code}", via=fault.via)
                elif operation in ("Converse", "ConverseStream"):
                    assert invoke is not None
                    self._converse(body, stream=operation == "ConverseStream")
                elif invoke:
                    self._invoke(unquote(invoke["model"]), headers, body)
                elif operation == "ApplyGuardrail":
                    self._json(200, apply_guardrail(path, body))
                elif operation == "Rerank":
                    region = _AUTHORIZATION.match(headers["authorization"])["region"]  # type: ignore[index]
                    self._json(200, rerank(body, bedrock, region))
                else:
                    self._error(404, "UnknownOperationException", f"no operation at {self.path}")
            except ServiceError as exc:
                self._error(ERROR_STATUS[exc.code], exc.code, exc.message)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

    def _refuse_unsigned(self, headers: Mapping[str, str]) -> None:
        match = _AUTHORIZATION.match(headers.get("authorization", ""))
        if match is None or "x-amz-date" not in headers:
            raise ServiceError("AccessDeniedException", "Missing SigV4 Authorization or X-Amz-Date")
        signed = match["signed"].split(";")
        if match["service"] != "bedrock" or "host" not in signed or "x-amz-date" not in signed:
            raise ServiceError("AccessDeniedException", "The request is not signed for bedrock")

    def _invoke(self, model: str, headers: Mapping[str, str], body: Any) -> None:
        if model != TITAN_V2 and not model.endswith(f"/{TITAN_V2}"):
            raise ServiceError("ValidationException", "The provided model identifier is invalid.")
        if headers.get("content-type") != "application/json":
            raise ServiceError("ValidationException", "Content-Type must be application/json")
        text, dimensions, normalize = titan_request(body)
        delay = self.server.bedrock.embed_delays.get(text, 0.0)
        if delay:
            time.sleep(delay)
        vector = titan_vector(text, dimensions, normalize=normalize)
        tokens = minilm().count_tokens(text)
        answer = {"embedding": [float(x) for x in vector], "inputTextTokenCount": tokens}
        self._json(200, answer, {"x-amzn-bedrock-input-token-count": str(tokens)})

    def _converse(self, body: Any, *, stream: bool) -> None:
        bedrock = self.server.bedrock
        check_request(body)
        answer = reply(bedrock._next_turn(), body, stream=stream)
        if not stream:
            assert answer.payload is not None
            self._json(200, answer.payload, cut=answer.ending == "drop")
            return
        self._event_stream(answer)

    def _event_stream(self, answer: Reply) -> None:
        """Frames as HTTP chunks; ``drop`` ends the connection without the last chunk."""
        self.send_response(200)
        self.send_header("content-type", "application/vnd.amazon.eventstream")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("x-amzn-requestid", str(uuid.uuid4()))
        self.end_headers()
        for i, data in enumerate(answer.frames):
            if i and answer.delay_s:
                time.sleep(answer.delay_s)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        if answer.ending == "drop":
            self._drop()
        else:
            self.wfile.write(b"0\r\n\r\n")

    def _drop(self) -> None:
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None, *, cut: bool = False
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-amzn-requestid", str(uuid.uuid4()))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if cut:
            self.wfile.write(data[: len(data) // 2])
            self._drop()
            return
        self.wfile.write(data)

    def _error(self, status: int, code: str, message: str, *, via: str = "header") -> None:
        if via == "header":
            payload: dict[str, str] = {"message": message}
            headers = {"x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/"}
        else:
            payload, headers = {"__type": f"com.amazon.bedrock#{code}", "message": message}, {}
        self._json(status, payload, headers)


@pytest.fixture(scope="session")
def bedrock_server_session() -> Iterator[BedrockServer]:
    server = BedrockServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def bedrock_server(bedrock_server_session: BedrockServer) -> BedrockServer:
    """The session's Bedrock server with no faults, no delays and an empty request log."""
    bedrock_server_session.reset()
    return bedrock_server_session
