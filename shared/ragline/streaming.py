"""The chat route's edge: the API Gateway context behind the Lambda Web Adapter, and SSE framing.

Python Lambdas cannot stream a response natively, so the chat function is an ASGI app behind the
Lambda Web Adapter; the authorizer's tenant arrives in the ``x-amzn-request-context`` header.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Generator
from typing import Any

import anyio

from ragline.agents.events import RunEvent


def gateway_context(header: str) -> dict[str, Any]:
    """The API Gateway request context the Web Adapter forwards (empty when absent or malformed)."""
    try:
        context = json.loads(header) if header else {}
    except json.JSONDecodeError:
        context = {}
    return context if isinstance(context, dict) else {}


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
