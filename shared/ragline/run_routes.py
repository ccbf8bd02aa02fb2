"""The chat function's runs, conversations and evaluations routes, and its runs-queue worker
(``POST /events``, the Web Adapter's pass-through path for the runs queue's SQS events: background chat
runs and evaluation jobs' slices).

Every route takes the caller as the authorizer resolved it (the API Gateway context the adapter
forwards) and answers errors in the one JSON shape; the blocking service calls run off the event loop.
``/events`` is no API route: a request carrying an API Gateway context there is a 404 (the adapter's
pass-through sends its own context, ``"PassThrough"``, which is none).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ragline import errors
from ragline.domain.evaluations import EvaluationRequest
from ragline.http import json_text, require_json
from ragline.services.authentication import Principal
from ragline.streaming import LoggedStream, error_response, gateway_context, last_event_id
from ragline.wiring import Container

logger = logging.getLogger(__name__)
Handler = Callable[[Request, Container, Principal], Awaitable[Response]]
REPORT_HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
    "x-content-type-options": "nosniff",
}
"""An evaluation report quotes answers and documents: nothing in it may load or run anything."""


def caller_route(
    container: Callable[[], Container], handler: Handler
) -> Callable[[Request], Awaitable[Response]]:
    """A route of these: the caller from the gateway context, errors in the one shape."""

    async def endpoint(request: Request) -> Response:
        context = gateway_context(request.headers.get("x-amzn-request-context", ""))
        try:
            services = container()
            caller = services.tenant_gate.caller(context.get("authorizer"), request.headers)
            return await handler(request, services, caller)
        except Exception as exc:
            return error_response(exc, ids={"request_id": str(context.get("requestId") or "")})

    return endpoint


def blocking(fn: Callable[..., Any], *args: Any) -> Awaitable[Any]:
    """A blocking service call, off the event loop."""
    return anyio.to_thread.run_sync(fn, *args)


def run_routes(container: Callable[[], Container], *, worker: bool) -> list[Route]:
    """The routes; ``worker``: with ``POST /events`` (on Lambda; a local server runs background runs
    on threads of its own)."""

    def route(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        return caller_route(container, handler)

    async def get_run(request: Request, services: Container, caller: Principal) -> Response:
        view = await blocking(services.runs.get, caller, request.path_params["run_id"])
        return Response(view.model_dump_json(), media_type="application/json")

    async def run_events(request: Request, services: Container, caller: Principal) -> Response:
        after = last_event_id(request.headers.get("last-event-id"), request.query_params.get("after"))
        events = await blocking(services.runs.follow, caller, request.path_params["run_id"], after)
        return LoggedStream(events)

    async def cancel_run(request: Request, services: Container, caller: Principal) -> Response:
        view = await blocking(services.runs.cancel, caller, request.path_params["run_id"])
        return Response(view.model_dump_json(), media_type="application/json")

    async def list_conversations(request: Request, services: Container, caller: Principal) -> Response:
        listed = await blocking(services.conversations.list, caller)
        return Response(listed.model_dump_json(), media_type="application/json")

    async def get_conversation(request: Request, services: Container, caller: Principal) -> Response:
        view = await blocking(services.conversations.get, caller, request.path_params["conversation_id"])
        return Response(view.model_dump_json(), media_type="application/json")

    async def delete_conversation(request: Request, services: Container, caller: Principal) -> Response:
        await blocking(services.conversations.delete, caller, request.path_params["conversation_id"])
        return Response(status_code=204)

    async def conversation(request: Request) -> Response:
        handler = get_conversation if request.method == "GET" else delete_conversation
        return await route(handler)(request)

    async def queued_runs(request: Request) -> Response:
        """The runs queue's SQS event (the Web Adapter's pass-through; one message per invocation):
        each run to its end. Every response of this function is streamed, which an event source
        mapping cannot read as ``batchItemFailures``: a message is done when its invocation ends, and
        one that cannot be run is logged (its run stays ``queued``); an invocation that crashes
        (timeout, memory) brings its message back, to find its run claimed."""
        # An API request never reaches the worker: the adapter's pass-through context is no object
        if gateway_context(request.headers.get("x-amzn-request-context", "")):
            return error_response(errors.NotFound("not found"))
        from ragline.adapters.aws.run_queue import run_of

        services = container()
        event = json.loads(await request.body() or b"{}")
        ran, failed = [], []
        for record in event.get("Records") or []:
            try:
                tenant_id, run_id, message = run_of(str(record.get("body", "")))
                if await blocking(services.queued_work, tenant_id, run_id, message):
                    ran.append(run_id)
            except Exception:
                message_id = record.get("messageId")
                logger.exception("background run message failed", extra={"message_id": message_id})
                failed.append(message_id)
        return JSONResponse({"ran": ran, "failed": failed})

    routes = [
        Route("/v1/runs/{run_id}", route(get_run), methods=["GET"]),
        Route("/v1/runs/{run_id}/events", route(run_events), methods=["GET"]),
        Route("/v1/runs/{run_id}/cancel", route(cancel_run), methods=["POST"]),
        Route("/v1/conversations", route(list_conversations), methods=["GET"]),
        Route("/v1/conversations/{conversation_id}", conversation, methods=["GET", "DELETE"]),
        *evaluation_routes(container),
    ]
    if worker:
        routes.append(Route("/events", queued_runs, methods=["POST"]))
    return routes


def evaluation_routes(container: Callable[[], Container]) -> list[Route]:
    """Answer evaluation jobs: submit (202), list, read, and a completed job's report."""

    async def submit_evaluation(request: Request, services: Container, caller: Principal) -> Response:
        require_json(request.headers.get("content-type"))
        body = EvaluationRequest.model_validate_json(json_text(await request.body()))
        view = await blocking(services.evaluations.submit, caller, body)
        return Response(view.model_dump_json(), status_code=202, media_type="application/json")

    async def list_evaluations(request: Request, services: Container, caller: Principal) -> Response:
        listed = await blocking(services.evaluations.list, caller)
        return Response(listed.model_dump_json(), media_type="application/json")

    async def get_evaluation(request: Request, services: Container, caller: Principal) -> Response:
        view = await blocking(services.evaluations.get, caller, request.path_params["evaluation_id"])
        return Response(view.model_dump_json(), media_type="application/json")

    async def evaluation_report(request: Request, services: Container, caller: Principal) -> Response:
        fmt = request.query_params.get("format", "html")
        if fmt not in ("html", "json"):
            raise errors.InvalidRequest("format is html or json", field="format")
        body = await blocking(services.evaluations.report, caller, request.path_params["evaluation_id"], fmt)
        if fmt == "json":
            return Response(body, media_type="application/json")
        return Response(body, media_type="text/html; charset=utf-8", headers=REPORT_HEADERS)

    async def evaluations(request: Request) -> Response:
        handler = submit_evaluation if request.method == "POST" else list_evaluations
        return await caller_route(container, handler)(request)

    return [
        Route("/v1/evaluations", evaluations, methods=["GET", "POST"]),
        Route("/v1/evaluations/{evaluation_id}", caller_route(container, get_evaluation), methods=["GET"]),
        Route(
            "/v1/evaluations/{evaluation_id}/report",
            caller_route(container, evaluation_report),
            methods=["GET"],
        ),
    ]
