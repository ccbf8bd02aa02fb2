"""The chat route's edge: the API Gateway context behind the Lambda Web Adapter, SSE framing, the
``stream: false`` body, and every error in the one JSON error shape — Starlette's routing errors,
unexpected ones, a run failing before its body is sent — or, once a stream has started, as an
``error`` event.

Python Lambdas cannot stream a response natively, so the chat function is an ASGI app behind the
Lambda Web Adapter; the authorizer's tenant arrives in the ``x-amzn-request-context`` header.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator
from typing import Any, TypeVar

import anyio
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from ragline import errors
from ragline.agents.events import ChatResponse, RunError, RunEvent, RunFinished
from ragline.domain.runs import LoggedEvent
from ragline.http import (
    count_refusal,
    error_body,
    json_text,
    method_not_allowed,
    retry_headers,
    route_not_found,
)

logger = logging.getLogger(__name__)
T = TypeVar("T")


def gateway_context(header: str) -> dict[str, Any]:
    """The API Gateway request context the Web Adapter forwards (empty when absent or malformed)."""
    try:
        context = json.loads(json_text(header)) if header else {}
    except (json.JSONDecodeError, errors.InvalidRequest):
        context = {}
    return context if isinstance(context, dict) else {}


def error_response(
    exc: BaseException, headers: dict[str, str] | None = None, *, ids: dict[str, str] | None = None
) -> Response:
    """``exc`` in the one shape; a failure on our side (5xx) is logged first (see :func:`log_failure`).
    An unexpected one names the request by ``ids`` (``request_id``, ``run_id``), never by its text."""
    ids = {name: value for name, value in (ids or {}).items() if value}
    count_refusal(exc)
    status, body = error_body(exc, **ids)
    log_failure(exc, status, ids)
    return JSONResponse(body, status_code=status, headers={**(headers or {}), **retry_headers(exc)})


def log_failure(exc: BaseException, status: int, ids: dict[str, str] | None = None) -> None:
    """A failure answered with ``status``: an unexpected error with its trace, a dependency failing as
    a warning with its code; a caller's mistake (4xx) is the caller's to see, not logged here."""
    if status < 500:
        return
    if isinstance(exc, errors.RaglineError):
        logger.warning("request failed: %s", exc.code, extra={"code": exc.code, **(ids or {})})
    else:
        logger.error("request failed unexpectedly", exc_info=exc, extra=ids)


async def routing_error(request: Request, exc: Exception) -> Response:
    """Starlette's 404 (no route) and 405 (a route, another method) in the one shape; installed for
    both statuses by the chat app and by ``ragline serve``."""
    if isinstance(exc, HTTPException) and exc.status_code == 405:
        allowed = sorted(m.strip() for m in (exc.headers or {}).get("Allow", "").split(",") if m.strip())
        return error_response(method_not_allowed(request.method, allowed), {"Allow": ", ".join(allowed)})
    return error_response(route_not_found(request.method, request.url.path))


ROUTING_ERRORS = {404: routing_error, 405: routing_error}
"""Starlette ``exception_handlers`` that answer routing errors in the one shape."""


async def unexpected_error(request: Request, exc: Exception) -> Response:
    """The last resort: an error no route caught is the one shape too (500 ``internal_error``), not
    Starlette's plain-text page. Starlette still re-raises it to the server after answering."""
    return error_response(exc)


ERROR_HANDLERS: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    **ROUTING_ERRORS,
    Exception: unexpected_error,
}
"""Starlette ``exception_handlers`` for an app at the edge: routing errors and unexpected errors."""


RUN_ID_HEADER = "ragline-run-id"
"""The response header naming a chat's run (streamed, JSON or background)."""


def sse(event: RunEvent, seq: int | None = None) -> bytes:
    """One event; ``seq``: its sequence number in the run's log, sent as the SSE ``id`` (what a client
    sends back as ``Last-Event-ID`` to resume)."""
    head = f"id: {seq}\n" if seq is not None else ""
    return f"{head}event: {event.type}\ndata: {event.model_dump_json()}\n\n".encode()


def last_event_id(header: str | None, query: str | None = None) -> int:
    """Where a client resumes: the ``Last-Event-ID`` header (SSE's own), else ``?after=``; 0: from the
    start. Anything but a non-negative integer is a 400."""
    raw = (header if header is not None else query or "0").strip() or "0"
    if not raw.isdigit() or len(raw) > 12:
        raise errors.InvalidRequest(
            "Last-Event-ID must be the id of an event of the run", header="Last-Event-ID"
        )
    return int(raw)


def error_event(exc: BaseException) -> RunError:
    """An error after the response started, as the stream's ``error`` event (code and message as
    :func:`~ragline.http.error_body` gives them: an unexpected error never shows its text)."""
    count_refusal(exc)
    status, body = error_body(exc)
    log_failure(exc, status)
    return RunError(code=body["error"]["code"], message=body["error"]["message"])


async def json_reply(events: Generator[RunEvent, None, None], ids: dict[str, str] | None = None) -> Response:
    """``stream: false``: the whole run as one body — or, if the run fails outside the events it
    reports itself (a ledger down when the run is charged, a bug), the one error shape (naming the
    request by ``ids``). A client that goes away does not stop the run: it ends (recorded, charged
    once) and its result stays readable at ``/v1/runs/{runId}``."""
    try:
        reply = await anyio.to_thread.run_sync(ChatResponse.collect, events)
        headers = {RUN_ID_HEADER: reply.run_id} if reply.run_id else None
        return Response(reply.model_dump_json(), media_type="application/json", headers=headers)
    except Exception as exc:
        return error_response(exc, ids=ids)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(finish_run, events)


def finish_run(events: Generator[RunEvent, None, None]) -> None:
    """Run ``events`` to their end, nobody reading (a client that left): the run is recorded and
    charged once as if read; on AWS the invocation lasts until it ends (the function's timeout)."""
    try:
        for _ in events:
            pass
    except Exception:  # recorded as the run's last event by its recording; nobody to answer
        logger.warning("a run nobody was reading failed", exc_info=True)
    finally:
        events.close()


async def stream_events(events: Generator[RunEvent, None, None]) -> AsyncIterator[bytes]:
    """Drive the (blocking) run in a worker thread, each event with its sequence number as its SSE id.

    The status line is sent before the run starts, so a failure the run does not report itself
    ends the stream with an ``error`` event instead of a cut connection. A client that goes away (the
    response task is cancelled) does not stop the run: it goes on to its end, recorded for the client
    to resume, and is charged exactly once."""
    seq = 0
    try:
        async for event in _threaded(events):
            if isinstance(event, BaseException):
                yield sse(error_event(event))
                return
            seq += 1
            replay = isinstance(event, RunFinished) and event.replayed  # a replay is not the run's log
            yield sse(event, None if replay else seq)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(finish_run, events)


async def _threaded(items: Iterator[T]) -> AsyncIterator[T | Exception]:
    """``items`` read one at a time in a worker thread (they block); an error they raise ends them,
    given as the last item."""
    done = object()
    while True:
        try:
            item = await anyio.to_thread.run_sync(next, items, done)
        except Exception as exc:
            yield exc
            return
        if item is done:
            return
        yield item  # type: ignore[misc]


class LoggedStream(StreamingResponse):
    """A run's recorded events (``GET /v1/runs/{id}/events``) as Server-Sent Events, each with its id."""

    def __init__(self, events: Iterator[LoggedEvent]) -> None:
        headers = {"cache-control": "no-cache", "x-accel-buffering": "no"}
        super().__init__(_logged(events), media_type="text/event-stream", headers=headers)


async def _logged(events: Iterator[LoggedEvent]) -> AsyncIterator[bytes]:
    try:
        async for event in _threaded(events):
            if isinstance(event, BaseException):
                yield sse(error_event(event))
                return
            yield f"id: {event.seq}\nevent: {event.type}\ndata: {event.data}\n\n".encode()
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(close)


async def released(release: Callable[[], None]) -> None:
    """``release`` (a blocking store write) off the event loop, even while the request is cancelled."""
    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(release)


class RunStream(StreamingResponse):
    """A run's events as Server-Sent Events, then ``release`` (the run's slot, idempotent) once the
    response is over however it ends. The run's own ``finally`` frees the slot when the run started;
    this frees it when the client went away before the stream's first byte and the run never did
    (a generator never started runs no ``finally``: the slot would be held for its whole lease)."""

    def __init__(
        self, events: Generator[RunEvent, None, None], release: Callable[[], None], run_id: str = ""
    ) -> None:
        headers = {"cache-control": "no-cache", "x-accel-buffering": "no"}
        if run_id:  # a client that drops before the final event still knows which run to resume
            headers[RUN_ID_HEADER] = run_id
        super().__init__(stream_events(events), media_type="text/event-stream", headers=headers)
        self._release = release

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await released(self._release)
