"""The chat route's edge: the API Gateway context behind the Lambda Web Adapter, SSE framing, and
Starlette's own routing errors in the one JSON error shape.

Python Lambdas cannot stream a response natively, so the chat function is an ASGI app behind the
Lambda Web Adapter; the authorizer's tenant arrives in the ``x-amzn-request-context`` header.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Generator
from typing import Any

import anyio
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ragline import errors
from ragline.agents.events import RunEvent
from ragline.http import error_body, json_text, method_not_allowed, route_not_found


def gateway_context(header: str) -> dict[str, Any]:
    """The API Gateway request context the Web Adapter forwards (empty when absent or malformed)."""
    try:
        context = json.loads(json_text(header)) if header else {}
    except (json.JSONDecodeError, errors.InvalidRequest):
        context = {}
    return context if isinstance(context, dict) else {}


def error_response(exc: BaseException, headers: dict[str, str] | None = None) -> Response:
    status, body = error_body(exc)
    return JSONResponse(body, status_code=status, headers=headers)


async def routing_error(request: Request, exc: Exception) -> Response:
    """Starlette's 404 (no route) and 405 (a route, another method) in the one shape; installed for
    both statuses by the chat app and by ``ragline serve``."""
    if isinstance(exc, HTTPException) and exc.status_code == 405:
        allowed = sorted(m.strip() for m in (exc.headers or {}).get("Allow", "").split(",") if m.strip())
        return error_response(method_not_allowed(request.method, allowed), {"Allow": ", ".join(allowed)})
    return error_response(route_not_found(request.method, request.url.path))


ROUTING_ERRORS = {404: routing_error, 405: routing_error}
"""Starlette ``exception_handlers`` that answer routing errors in the one shape."""


def sse(event: RunEvent) -> bytes:
    return f"event: {event.type}\ndata: {event.model_dump_json()}\n\n".encode()


async def stream_events(events: Generator[RunEvent, None, None]) -> AsyncIterator[bytes]:
    """Drive the (blocking) run in a worker thread; closing it on disconnect finishes the run once."""
    done = object()
    try:
        while True:
            event = await anyio.to_thread.run_sync(next, events, done)
            if event is done:
                return
            yield sse(event)  # type: ignore[arg-type]
    finally:
        # Reached on completion and when the client goes away (the response task is cancelled):
        # closing the generator runs its finally, which commits the run's usage exactly once.
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(events.close)
