"""POST /v1/chat as a small ASGI app (Starlette), streamed as Server-Sent Events.

Python Lambdas cannot stream a response natively, so this app runs behind the Lambda Web Adapter
(``run.sh`` starts uvicorn; ``AWS_LWA_INVOKE_MODE=response_stream``). The API Gateway request
context, with the authorizer's tenant, arrives in the ``x-amzn-request-context`` header; the tenant
is taken from there only. ``stream: false`` returns the whole run as one JSON body.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from functools import cache
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ragline.agents.events import RunEvent
from ragline.config import load_settings
from ragline.domain.chat import ChatRequest
from ragline.http import error_body
from ragline.services.chat import ChatService
from ragline.services.tenancy import Principal
from ragline.wiring import Container


@cache
def chat_service() -> ChatService:
    return Container(load_settings()).chat


def request_context(request: Request) -> dict[str, Any]:
    raw = request.headers.get("x-amzn-request-context", "")
    try:
        context = json.loads(raw) if raw else {}
    except json.JSONDecodeError:
        context = {}
    return context if isinstance(context, dict) else {}


def sse(event: RunEvent) -> bytes:
    return f"event: {event.type}\ndata: {event.model_dump_json()}\n\n".encode()


async def stream_events(events: Iterator[RunEvent]) -> AsyncIterator[bytes]:
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


def collect(events: Iterator[RunEvent]) -> dict[str, Any]:
    body: dict[str, Any] = {"answer": "", "sources": [], "warnings": [], "steps": [], "error": None}
    for event in events:
        data = event.model_dump()
        kind = data.pop("type")
        if kind == "sources":
            body["sources"] = data["chunks"]
        elif kind == "warning":
            body["warnings"].append(data)
        elif kind in ("tool_start", "tool_end"):
            body["steps"].append({"type": kind, **data})
        elif kind == "error":
            body["error"] = data
        elif kind == "final":
            body.update(
                answer=data["answer"],
                usage=data["usage"],
                exitReason=data["exit_reason"],
                runId=data["run_id"],
            )
    return body


async def chat(request: Request) -> Response:
    try:
        context = request_context(request)
        caller = Principal.from_context(context.get("authorizer"))
        body = ChatRequest.model_validate_json(await request.body())
        run_id = request.headers.get("idempotency-key") or context.get("requestId") or None
        events = chat_service().answer_chat(caller.tenant_id, body, run_id=run_id, principal=caller)
    except Exception as exc:  # the edge: every error becomes the one JSON shape
        status, payload = error_body(_as_ragline(exc))
        return JSONResponse(payload, status_code=status)
    if not body.stream:
        return JSONResponse(await anyio.to_thread.run_sync(collect, events))
    headers = {"cache-control": "no-cache", "x-accel-buffering": "no"}
    return StreamingResponse(stream_events(events), media_type="text/event-stream", headers=headers)


def _as_ragline(exc: Exception) -> Exception:
    from pydantic import ValidationError

    from ragline import errors

    if isinstance(exc, ValidationError):
        problems = exc.errors(include_url=False, include_context=False, include_input=False)
        return errors.InvalidRequest("invalid chat request", problems=problems)
    return exc


async def health(request: Request) -> Response:
    return JSONResponse({"ok": True})


app = Starlette(
    routes=[Route("/v1/chat", chat, methods=["POST"]), Route("/healthz", health, methods=["GET"])]
)
