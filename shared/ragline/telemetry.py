"""Logs and metrics at the edge: the handlers' logger, which never writes a credential, and CloudWatch
embedded-metric-format lines (Powertools Metrics) per run and per ingested document, written to the
function's log — no API call, no extra latency.

Per run (chat, search): ``Runs``, ``Steps``, ``Retrievals``, ``Reranks``, ``LlmInputTokens``,
``LlmOutputTokens``, ``LatencyMs`` and ``Exit_<reason>``, with a ``Kind`` dimension. Per ingest batch:
``IngestDocuments``, ``IngestChunks``, ``IngestSkipped``, ``IngestFailures``. The core stays free of the
SDK: handlers call these with what the services returned.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from collections.abc import Generator, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

if TYPE_CHECKING:  # the chat's event models: only the chat handler loads them (cold starts)
    from ragline.agents.events import RunEvent
    from ragline.domain.api import Usage

NAMESPACE = "Ragline"

# -- logs -----------------------------------------------------------------------------------------

REDACTED = "[redacted]"
CREDENTIAL_FIELDS = frozenset(
    {"authorization", "proxyauthorization", "authorizationtoken", "xapikey", "apikey", "cookie",
     "cookies", "setcookie", "xamzsecuritytoken"}
)  # fmt: skip
"""Field names (any case, ``-``/``_`` ignored) whose values are credentials: the ``Authorization``
header (also as a TOKEN authorizer's ``authorizationToken``), API keys, cookies, session tokens."""
_API_KEY = re.compile(r"\brl_[A-Za-z0-9_\-]{16,}")
"""A Ragline API key inside free text (a formatted message, a repr of an event)."""
_RECORD_FIELDS = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


def redact(value: Any) -> Any:
    """A copy of ``value`` with every credential field's value (at any depth) and every API key in
    its text replaced by ``[redacted]``; the original is left alone (the handler still reads it)."""
    if isinstance(value, str):
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
