"""The chat function as a small ASGI app (Starlette): ``POST /v1/chat`` streamed as Server-Sent
Events, the runs and conversations routes, and the background-run worker.

``run.sh`` starts uvicorn behind the Lambda Web Adapter (``AWS_LWA_INVOKE_MODE=response_stream``);
the tenant is taken only from the API Gateway context the adapter forwards. ``stream: false``
returns the whole run as one JSON body; ``background: true`` answers 202 with the run id and the run
goes to the runs queue. Every streamed event carries its sequence number as the SSE ``id``:
``GET /v1/runs/{runId}/events`` with ``Last-Event-ID`` serves the rest. The adapter passes the
runs queue's SQS events to ``POST /events`` (its pass-through path), which no API route reaches: a
request carrying an API Gateway context there is refused. The adapter passes the invocation's X-Ray
trace header as a request header; the app puts it where the X-Ray SDK reads it.
"""

from __future__ import annotations

import uuid

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ragline import snapstart, telemetry, wiring
from ragline.domain.api import ChatRequest
from ragline.http import checked_idempotency_key, json_text, require_json
from ragline.run_routes import run_routes
from ragline.streaming import (
    ERROR_HANDLERS,
    RUN_ID_HEADER,
    RunStream,
    error_response,
    gateway_context,
    json_reply,
    released,
)
from ragline.wiring import Container

logger = telemetry.handler_logger()
tracer = telemetry.handler_tracer()  # model, AWS and OpenSearch calls become subsegments of the invocation


def create_app(container: Container | None = None, *, worker: bool = True) -> Starlette:
    """``worker``: serve ``POST /events`` (the runs queue through the Web Adapter); a local server
    runs background runs on its own threads and has no such route."""

    async def chat(request: Request) -> Response:
        context = gateway_context(request.headers.get("x-amzn-request-context", ""))
        ids = {"request_id": str(context.get("requestId") or "")}  # named by an unexpected error's answer
        slot = None
        try:
            services = container or wiring.container()
            # a suspended tenant: 401; the end user a key asserts: this request's headers
            caller = services.tenant_gate.caller(context.get("authorizer"), request.headers)
            require_json(request.headers.get("content-type"))  # the REST handlers' rules, to the letter
            body = ChatRequest.model_validate_json(json_text(await request.body()))
            key = checked_idempotency_key(request.headers.get("idempotency-key"))  # > 255 chars: 400
            run_id = key or context.get("requestId") or uuid.uuid4().hex
            ids["run_id"] = str(run_id)
            if body.background:
                accepted = await anyio.to_thread.run_sync(services.background.submit, caller, body, run_id)
                body_202 = accepted.model_dump_json()
                headers = {RUN_ID_HEADER: run_id}
                return Response(body_202, status_code=202, media_type="application/json", headers=headers)
            slot = services.tenant_gate.run_slot(caller)  # too many runs in flight: 429, before any work
            events = slot.around(services.chat.answer_chat(caller, body, run_id=run_id))
            logger.info("chat run", extra={"run_id": run_id, "tenant": caller.tenant_id, "mode": body.mode})
            events = telemetry.observe_chat(events)
        except Exception as exc:  # the edge: every error becomes the one JSON shape
            if slot is not None:
                slot.release()
            return error_response(exc, ids=ids)
        if not body.stream:
            try:
                return await json_reply(events, ids)
            finally:  # the run's slot, even when the run never started (a no-op once it ended)
                await released(slot.release)
        return RunStream(events, slot.release, str(run_id))  # the slot freed however the stream ends

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True})

    built = (lambda: container) if container is not None else wiring.container
    routes = [
        Route("/v1/chat", chat, methods=["POST"]),
        *run_routes(built, worker=worker),
        Route("/healthz", health, methods=["GET"]),
    ]
    return Starlette(
        routes=routes,
        exception_handlers=ERROR_HANDLERS,
        middleware=[Middleware(telemetry.TraceHeaderFromRequest)],
    )


app = create_app()


snapstart.prepare("chat")  # a SnapStart init's warm-up and hooks; nothing otherwise
