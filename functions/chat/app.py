"""POST /v1/chat as a small ASGI app (Starlette), streamed as Server-Sent Events.

``run.sh`` starts uvicorn behind the Lambda Web Adapter (``AWS_LWA_INVOKE_MODE=response_stream``);
the tenant is taken only from the API Gateway context the adapter forwards. ``stream: false``
returns the whole run as one JSON body. The adapter passes the invocation's X-Ray trace header as a
request header; the app puts it where the X-Ray SDK reads it, so the run's calls join the trace.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ragline import snapstart, telemetry, wiring
from ragline.domain.api import ChatRequest
from ragline.http import checked_idempotency_key, json_text, require_json
from ragline.streaming import (
    ERROR_HANDLERS,
    RunStream,
    error_response,
    gateway_context,
    json_reply,
    released,
)
from ragline.wiring import Container

logger = telemetry.handler_logger()
tracer = telemetry.handler_tracer()  # model, AWS and OpenSearch calls become subsegments of the invocation


def create_app(container: Container | None = None) -> Starlette:
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
            run_id = key or context.get("requestId") or None
            ids["run_id"] = str(run_id or "")
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
        return RunStream(events, slot.release)  # the slot freed however the stream ends

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[Route("/v1/chat", chat, methods=["POST"]), Route("/healthz", health, methods=["GET"])],
        exception_handlers=ERROR_HANDLERS,
        middleware=[Middleware(telemetry.TraceHeaderFromRequest)],
    )


app = create_app()


snapstart.prepare("chat")  # a SnapStart init's warm-up and hooks; nothing otherwise
