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

Every request must carry a SigV4 ``Authorization`` header (``AWS4-HMAC-SHA256 Credential=…/bedrock/
aws4_request, SignedHeaders=…, Signature=…``) and ``X-Amz-Date``; otherwise the answer is 403
``AccessDeniedException``. The signature itself is not verified. Errors are sent as Bedrock does: the
code in the ``x-amzn-ErrorType`` header, ``{"message": …}`` as the body (or, with ``via="type"``, the
code only in the body's ``__type``).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
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

REGION = "us-east-1"
TITAN_V2 = "amazon.titan-embed-text-v2:0"
RERANK_MODELS = ("amazon.rerank-v1:0", "cohere.rerank-v3-5:0")
MINILM_DIMENSION = 384

ERROR_STATUS = {
    "AccessDeniedException": 403,
    "ResourceNotFoundException": 404,
    "ThrottlingException": 429,
    "ModelNotReadyException": 429,
    "ModelTimeoutException": 408,
    "ModelErrorException": 424,
    "DependencyFailedException": 424,
    "ServiceQuotaExceededException": 400,
    "ValidationException": 400,
    "ConflictException": 409,
    "InternalServerException": 500,
    "BadGatewayException": 502,
    "ServiceUnavailableException": 503,
}
"""The HTTP status each error shape declares in the botocore service models."""

_AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=[^/\s]+/\d{8}/[a-z0-9-]+/(?P<service>[a-z0-9-]+)/aws4_request,\s*"
    r"SignedHeaders=(?P<signed>[a-z0-9;-]+),\s*Signature=[0-9a-f]{64}$"
)
_MODEL_ARN = re.compile(
    r"^(arn:aws(-[^:]+)?:(bedrock|sagemaker):[a-z0-9-]{1,20}:([0-9]{12})?:([a-z-]+/)?)?"
    r"([a-z0-9.-]{1,63}){0,2}(([:][a-z0-9-]{1,63}){0,2})?(/[a-z0-9]{1,12})?$"
)  # BedrockModelArn's pattern in the bedrock-agent-runtime service model
_TITAN_KEYS = {"inputText", "dimensions", "normalize", "embeddingTypes"}

Operation = Literal["InvokeModel", "Rerank"]


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


class ServiceError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


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
            self.max_in_flight = 0

    def recorded(self, operation: Operation) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.operation == operation]

    def client(self, service: str, *, signed: bool = True, max_attempts: int = 2, **config: Any) -> Any:
        """A real boto3 client (``bedrock-runtime`` or ``bedrock-agent-runtime``) pointed here."""
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
            region_name=REGION,
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
        invoke = re.fullmatch(r"/model/(?P<model>[^/]+)/invoke", path)
        operation = "InvokeModel" if invoke else "Rerank" if path == "/rerank" else "Unknown"
        headers = {k.lower(): v for k, v in self.headers.items()}
        bedrock = self.server.bedrock
        try:
            body: Any = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw
        bedrock._record(RecordedRequest(operation, self.path, headers, body))
        with bedrock._counting():
            try:
                self._refuse_unsigned(headers)
                fault = bedrock._next_fault(operation)
                if fault is not None:
                    self._error(fault.status, fault.code, f"scripted {fault.code}", via=fault.via)
                elif invoke:
                    self._invoke(unquote(invoke["model"]), headers, body)
                elif operation == "Rerank":
                    self._json(200, _rerank(body, bedrock))
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
        text, dimensions, normalize = _titan_request(body)
        delay = self.server.bedrock.embed_delays.get(text, 0.0)
        if delay:
            time.sleep(delay)
        vector = titan_vector(text, dimensions, normalize=normalize)
        tokens = minilm().count_tokens(text)
        answer = {"embedding": [float(x) for x in vector], "inputTextTokenCount": tokens}
        self._json(200, answer, {"x-amzn-bedrock-input-token-count": str(tokens)})

    def _json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("x-amzn-requestid", str(uuid.uuid4()))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, code: str, message: str, *, via: str = "header") -> None:
        if via == "header":
            payload: dict[str, str] = {"message": message}
            headers = {"x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/"}
        else:
            payload, headers = {"__type": f"com.amazon.bedrock#{code}", "message": message}, {}
        self._json(status, payload, headers)


def _titan_request(body: Any) -> tuple[str, int, bool]:
    """``(inputText, dimensions, normalize)`` of a Titan V2 body, checked as Titan V2 checks it."""
    if not isinstance(body, dict):
        raise ServiceError("ValidationException", "Malformed input request, please reformat your input")
    extra = sorted(set(body) - _TITAN_KEYS)
    if extra:
        raise ServiceError("ValidationException", f"extraneous key [{extra[0]}] is not permitted")
    text = body.get("inputText")
    if not isinstance(text, str) or not 1 <= len(text) <= 50_000:
        raise ServiceError("ValidationException", "inputText must be a string of 1 to 50000 characters")
    dimensions = body.get("dimensions", 1024)
    if dimensions not in (256, 512, 1024):
        raise ServiceError("ValidationException", f"{dimensions} is not a valid enum value")
    normalize = body.get("normalize", True)
    if not isinstance(normalize, bool):
        raise ServiceError("ValidationException", "normalize must be a boolean")
    return text, int(dimensions), normalize


def _rerank(body: Any, bedrock: BedrockServer) -> dict[str, Any]:
    query, texts, arn, wanted = _rerank_request(body)
    if arn.rsplit("/", 1)[-1] not in RERANK_MODELS:
        raise ServiceError("ValidationException", f"The model {arn} does not support reranking")
    model = minilm()
    vectors = model.embed_documents([query, *texts])
    scores = (1.0 + vectors[1:] @ vectors[0]) / 2.0
    order = sorted(range(len(texts)), key=lambda i: (-float(scores[i]), i))[:wanted]
    results = [{"index": i, "relevanceScore": float(scores[i])} for i in order]
    size = bedrock.rerank_page_size
    if size is None:
        return {"results": results}
    fingerprint = hashlib.sha256(
        json.dumps({k: v for k, v in body.items() if k != "nextToken"}, sort_keys=True).encode()
    ).hexdigest()[:16]
    start = 0
    if "nextToken" in body:
        token_fingerprint, _, offset = str(body["nextToken"]).partition(".")
        if token_fingerprint != fingerprint or not offset.isdigit():
            raise ServiceError("ValidationException", "nextToken does not belong to this request")
        start = int(offset)
    page: dict[str, Any] = {"results": results[start : start + size]}
    if start + size < len(results):
        page["nextToken"] = f"{fingerprint}.{start + size}"
    return page


def _rerank_request(body: Any) -> tuple[str, list[str], str, int]:
    """``(query, texts, modelArn, numberOfResults)``, checked against the service model's shapes."""

    def invalid(what: str) -> ServiceError:
        return ServiceError("ValidationException", f"1 validation error detected: {what}")

    if not isinstance(body, dict):
        raise invalid("the body is not a JSON object")
    queries = body.get("queries")
    if not isinstance(queries, list) or len(queries) != 1:
        raise invalid("queries must hold exactly one query")
    query = queries[0]
    if query.get("type") != "TEXT" or not _text_ok(query.get("textQuery")):
        raise invalid("queries[0] must be a TEXT query of 1 to 32000 characters")
    sources = body.get("sources")
    if not isinstance(sources, list) or not 1 <= len(sources) <= 1000:
        raise invalid("sources must hold 1 to 1000 sources")
    texts: list[str] = []
    for n, source in enumerate(sources):
        if not isinstance(source, dict) or source.get("type") != "INLINE":
            raise invalid(f"sources[{n}] must be an INLINE source")
        document = source.get("inlineDocumentSource")
        if not isinstance(document, dict) or document.get("type") != "TEXT":
            raise invalid(f"sources[{n}] must be an INLINE TEXT document")
        if not _text_ok(document.get("textDocument")):
            raise invalid(f"sources[{n}].textDocument.text must be 1 to 32000 characters")
        texts.append(document["textDocument"]["text"])
    config = body.get("rerankingConfiguration") or {}
    bedrock_config = config.get("bedrockRerankingConfiguration") or {}
    arn = (bedrock_config.get("modelConfiguration") or {}).get("modelArn")
    if config.get("type") != "BEDROCK_RERANKING_MODEL" or not isinstance(arn, str):
        raise invalid("rerankingConfiguration must be a BEDROCK_RERANKING_MODEL with a modelArn")
    if not _MODEL_ARN.match(arn):
        raise invalid(f"modelArn {arn!r} does not match the model ARN pattern")
    wanted = bedrock_config.get("numberOfResults", len(texts))
    if not isinstance(wanted, int) or not 1 <= wanted <= len(texts):
        raise invalid("numberOfResults must be between 1 and the number of sources")
    return query["textQuery"]["text"], texts, arn, wanted


def _text_ok(document: Any) -> bool:
    text = document.get("text") if isinstance(document, dict) else None
    return isinstance(text, str) and 1 <= len(text) <= 32_000


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
