"""Logs, traces and metrics at the edge: the handlers' logger, which never writes a credential; their
X-Ray tracer (Powertools Tracer), which records every AWS, OpenSearch and model call as a subsegment;
and CloudWatch embedded-metric-format lines (Powertools Metrics) per run and per ingested document,
written to the function's log — no API call, no extra latency.

Per run (chat, search): ``Runs``, ``Steps``, ``Retrievals``, ``Reranks``, ``LlmInputTokens``,
``LlmOutputTokens``, ``LatencyMs`` and ``Exit_<reason>``, with a ``Kind`` dimension. Per ingest batch:
``IngestDocuments``, ``IngestChunks``, ``IngestSkipped``, ``IngestFailures``. The core stays free of the
SDK: handlers call these with what the services returned.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

if TYPE_CHECKING:  # the chat's event models and ASGI types: only the chat handler loads them (cold starts)
    from starlette.types import ASGIApp, Receive, Scope, Send

    from ragline.agents.events import RunEvent
    from ragline.domain.api import Usage

NAMESPACE = "Ragline"

# -- logs -----------------------------------------------------------------------------------------

REDACTED = "[redacted]"
CREDENTIAL_FIELDS = frozenset(
    {"authorization", "proxyauthorization", "authorizationtoken", "xapikey", "apikey", "cookie",
     "cookies", "setcookie", "xamzsecuritytoken", "credentials", "clientsecret", "apitoken", "secret",
     "password"}
)  # fmt: skip
"""Field names (any case, ``-``/``_`` ignored) whose values are credentials: the ``Authorization``
header (also as a TOKEN authorizer's ``authorizationToken``), API keys, cookies, session tokens, a
data source's ``credentials`` (and the fields they hold), a webhook's signing ``secret``."""
MAX_REDACTED_BODY = 1_000_000
"""A JSON text up to this long (a logged event's ``body``) is parsed and redacted field by field."""
_API_KEY = re.compile(r"\brl_[A-Za-z0-9_\-]{16,}")
"""A Ragline API key inside free text (a formatted message, a repr of an event)."""
_RECORD_FIELDS = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


def redact(value: Any) -> Any:
    """A copy of ``value`` with every credential field's value (at any depth) and every API key in
    its text replaced by ``[redacted]``; the original is left alone (the handler still reads it)."""
    if isinstance(value, str):
        if value[:1] == "{" and len(value) <= MAX_REDACTED_BODY:  # a JSON body: its fields, redacted
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
            if isinstance(parsed, Mapping):
                return json.dumps(redact(parsed))
        return _API_KEY.sub(REDACTED, value)
    if isinstance(value, Mapping):
        return {k: REDACTED if _is_credential(k) else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact(v) for v in value)
    return value


def _is_credential(name: object) -> bool:
    return isinstance(name, str) and name.lower().replace("-", "").replace("_", "") in CREDENTIAL_FIELDS


class RedactCredentials(logging.Filter):
    """Passes every record with its message, arguments and extra fields through :func:`redact`,
    before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.msg)
        if record.args:
            record.args = redact(record.args)
        for name, value in list(vars(record).items()):
            if name not in _RECORD_FIELDS:  # an ``extra`` field
                setattr(record, name, redact(value))
        return True


_REDACT_CREDENTIALS = RedactCredentials()


def handler_logger() -> Logger:
    """The Powertools logger of a handler, which never writes a credential.

    ``POWERTOOLS_LOGGER_LOG_EVENT=true`` makes ``inject_lambda_context`` log each whole event (read by
    Powertools when the decorator is applied), headers and all; a formatter option cannot stop that.
    The filter sits on the logger (the event and the handler's own lines) and on its handler (lines
    of ``ragline.*`` loggers that propagate to it), so it holds with event logging on.
    """
    logger = Logger()
    logger.addFilter(_REDACT_CREDENTIALS)
    logger.registered_handler.addFilter(_REDACT_CREDENTIALS)
    return logger


# -- traces ---------------------------------------------------------------------------------------

TRACE_HEADER_ENV = "_X_AMZN_TRACE_ID"
"""Where the Lambda runtime puts the invocation's trace header, and where the X-Ray SDK reads it."""


def handler_tracer() -> Tracer:
    """The Powertools tracer of a handler (X-Ray; disabled outside Lambda and by
    ``POWERTOOLS_TRACE_DISABLED``): every call Ragline makes is a subsegment of the invocation's
    trace — botocore through the X-Ray SDK's patch (DynamoDB, S3, SQS, Secrets Manager, Bedrock), and
    as remote calls the requests of urllib3 (the OpenSearch client) and of httpx2 (the OpenAI SDK's
    transport; the SDK's ``httpx``/``httplib`` patches see neither urllib3 2 nor httpx2). Those two are
    wrapped when first imported, so a handler loads neither before it needs it. A streamed model
    response's subsegment ends with its headers (time to first byte).

    Handlers wrap ``lambda_handler`` in ``capture_lambda_handler(capture_response=False)``: a response
    holds the tenant's chunks and answers, which have no place in trace metadata.
    """
    tracer = Tracer(auto_patch=False)
    if tracer.disabled:
        return tracer
    import wrapt

    tracer.patch(["botocore"])

    def urlopen(wrapped: Callable[..., Any], pool: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if type(pool).__module__.startswith("botocore"):  # an AWS call: the botocore patch has it
            return wrapped(*args, **kwargs)
        method, path = _method_and_url(*args, **kwargs)
        url = f"{pool.scheme}://{pool.host}:{pool.port}{path}"
        return _remote_call(tracer, pool.host, method, url, lambda: wrapped(*args, **kwargs), "status")

    def handle_request(
        wrapped: Callable[..., Any], _: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        request = args[0] if args else kwargs["request"]
        url = str(request.url)
        return _remote_call(
            tracer, request.url.host, request.method, url, lambda: wrapped(*args, **kwargs), "status_code"
        )

    wrapt.when_imported("urllib3.connectionpool")(
        lambda module: wrapt.wrap_function_wrapper(module, "HTTPConnectionPool.urlopen", urlopen)
    )
    wrapt.when_imported("httpx2")(
        lambda module: wrapt.wrap_function_wrapper(module, "HTTPTransport.handle_request", handle_request)
    )
    return tracer


def _remote_call(
    tracer: Tracer, host: str, method: str, url: str, call: Callable[[], Any], status: str
) -> Any:
    """``call()`` inside a remote subsegment named after ``host``, with X-Ray's HTTP fields (the
    status read from the response's attribute named ``status``)."""
    with tracer.provider.in_subsegment(name=host, namespace="remote") as subsegment:
        http_meta = cast(Any, subsegment).put_http_meta  # an X-Ray subsegment's; not in Powertools' type
        http_meta("method", method)
        http_meta("url", url)
        response = call()
        http_meta("status", getattr(response, status))
        return response


def _method_and_url(method: str, url: str, *_args: Any, **_kwargs: Any) -> tuple[str, str]:
    return method, url


def correlate(run_id: str, logger: Logger, tracer: Tracer) -> None:
    """A run's id on every line its request logs, and as its trace's ``run_id`` annotation (searchable
    in X-Ray; the logger's lines carry the trace id too)."""
    logger.append_keys(run_id=run_id)
    tracer.put_annotation("run_id", run_id)  # a no-op when tracing is disabled


class TraceHeaderFromRequest:
    """ASGI middleware for the chat app behind the Lambda Web Adapter: the adapter is the runtime
    client and passes the invocation's trace header as the ``x-amzn-trace-id`` request header, not
    in the app's environment, so the X-Ray SDK (and the logger's ``xray_trace_id`` key) would find
    no trace. Lambda sends one request at a time to an execution environment, so the header is put
    where the runtime would have put it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = dict(scope["headers"]).get(b"x-amzn-trace-id")
            if header:
                os.environ[TRACE_HEADER_ENV] = header.decode("latin-1")
        await self.app(scope, receive, send)


# -- metrics --------------------------------------------------------------------------------------


def record_run(kind: str, usage: Usage, exit_reason: str, started: float, steps: int = 0) -> None:
    """One finished run's figures (``started`` from ``time.perf_counter()``)."""
    one = EphemeralMetrics(namespace=NAMESPACE)  # its own metric set, written at once
    one.add_dimension(name="Kind", value=kind)
    one.add_metric(name="Runs", unit=MetricUnit.Count, value=1)
    one.add_metric(name="Steps", unit=MetricUnit.Count, value=steps)
    one.add_metric(name="Retrievals", unit=MetricUnit.Count, value=usage.retrievals)
    one.add_metric(name="Reranks", unit=MetricUnit.Count, value=usage.reranks)
    one.add_metric(name="LlmInputTokens", unit=MetricUnit.Count, value=usage.llm_input_tokens)
    one.add_metric(name="LlmOutputTokens", unit=MetricUnit.Count, value=usage.llm_output_tokens)
    one.add_metric(
        name="LatencyMs", unit=MetricUnit.Milliseconds, value=(time.perf_counter() - started) * 1000
    )
    one.add_metric(name=f"Exit_{exit_reason}", unit=MetricUnit.Count, value=1)
    one.flush_metrics()
    sys.stdout.flush()  # EMF is read from the log: never leave a run's line in a buffer


def observe_chat(events: Generator[RunEvent, None, None]) -> Generator[RunEvent, None, None]:
    """Pass a chat run's events through, recording its metrics when its final event goes by."""
    from ragline.agents.events import RunFinished, ToolStarted

    started, steps = time.perf_counter(), 0
    try:
        for event in events:
            if isinstance(event, ToolStarted):
                steps += 1
            elif isinstance(event, RunFinished):
                record_run("chat", event.usage, event.exit_reason, started, steps)
            yield event
    finally:
        events.close()  # a client hang-up closes this wrapper; the run still finishes (and is charged)


def record_ingest(outcomes: Iterable[tuple[str, int]], failures: int) -> None:
    """One SQS batch: each document's (outcome, chunks), and the messages that failed."""
    batch = EphemeralMetrics(namespace=NAMESPACE)
    counted: dict[str, float] = {"IngestDocuments": 0, "IngestChunks": 0, "IngestSkipped": 0}
    for outcome, chunks in outcomes:
        counted["IngestDocuments"] += 1
        counted["IngestChunks"] += chunks
        counted["IngestSkipped"] += outcome in ("unchanged", "stale", "duplicate")
    for name, value in counted.items():
        batch.add_metric(name=name, unit=MetricUnit.Count, value=value)
    batch.add_metric(name="IngestFailures", unit=MetricUnit.Count, value=failures)
    batch.flush_metrics()
    sys.stdout.flush()


def record_quota_exceeded() -> None:
    """A request refused because its tenant's quota is used up (``QuotaExceeded`` metric, alarmed)."""
    refused = EphemeralMetrics(namespace=NAMESPACE)
    refused.add_metric(name="QuotaExceeded", unit=MetricUnit.Count, value=1)
    refused.flush_metrics()
    sys.stdout.flush()
