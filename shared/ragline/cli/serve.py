"""``ragline serve``: the real handlers behind one local HTTP server.

The chat ASGI app is mounted as it is; the REST handlers (search, documents) are Lambda functions,
so each request is turned into the API Gateway proxy event they receive in AWS. The caller is what the
authorizer would have resolved: by default the operator of ``--tenant`` (every scope, no key needed);
with ``--api-keys`` each request's ``Authorization: Bearer rl_…`` key, checked as the authorizer checks
it (a missing, unknown or revoked key is a 401 in the one error shape). ``/mcp`` is the MCP server
(:mod:`ragline.cli.mcp`), which always takes the request's own key.

Routing matches the path as sent, percent-escapes kept (``notes%2Fpump.md`` is one document id, as
behind API Gateway); every other path and method gets the one JSON error shape.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ragline import errors
from ragline.cli.handlers import REST_ROUTES, load_function
from ragline.services.authentication import Principal
from ragline.streaming import ROUTING_ERRORS, error_response
from ragline.wiring import Container

__all__ = [  # REST_ROUTES and load_function live in handlers (openapi reads them too), importable here
    "DOCS_PAGE",
    "LOOPBACK_NAMES",
    "REST_ROUTES",
    "SYNC_TICK_SECONDS",
    "Callers",
    "LambdaContext",
    "LoopbackHostOnly",
    "SentPaths",
    "SyncClock",
    "api_docs",
    "build_app",
    "callers",
    "gateway_body",
    "gateway_event",
    "host_name",
    "load_function",
    "local_principal",
    "operator_tenant",
    "playground",
    "rest_endpoint",
    "result_headers",
]

logger = logging.getLogger(__name__)


SYNC_TICK_SECONDS = 30.0
"""How often a local server looks for data sources whose scheduled sync is due."""


class SyncClock:
    """A local server's EventBridge Scheduler: every tick, each due source's first sync step goes to
    the container's step queue (a thread of this process). Only the embedded scheduler keeps times."""

    def __init__(self, container: Container, tick: float = SYNC_TICK_SECONDS) -> None:
        self._container = container
        self._tick = tick
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        from ragline.adapters.embedded.sync_scheduler import SqliteSyncScheduler

        if not isinstance(self._container.sync_scheduler, SqliteSyncScheduler):
            return
        self._thread = threading.Thread(target=self._loop, name="ragline-sync-clock", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def tick(self) -> int:
        """Queue every due sync now; how many."""
        from ragline.adapters.embedded.sync_scheduler import SqliteSyncScheduler

        scheduler = self._container.sync_scheduler
        due = scheduler.due() if isinstance(scheduler, SqliteSyncScheduler) else []
        for step in due:
            self._container.step_queue.submit(step)
        return len(due)

    def _loop(self) -> None:
        while not self._stop.wait(self._tick):
            try:
                self.tick()
            except errors.RaglineError:
                logger.warning("the sync clock's tick failed", exc_info=True)


def operator_tenant(container: Container, tenant: str) -> None:
    """``ragline serve`` without ``--api-keys`` acts as ``tenant``'s operator: its record is made if it
    has none, so the routes that manage it (keys, limits, webhooks) work from the first request, as the
    README's first steps expect (a deleted or suspended tenant is left as it is)."""
    try:
        container.registry.get_tenant(tenant)
    except errors.NotFound:
        container.tenancy.create_tenant(tenant)


def local_principal(tenant: str) -> dict[str, str]:
    """A local server has no API keys: the operator acts as the tenant with every scope, and may name
    an end user (``Ragline-User-Id``) to see what that user would see."""
    return Principal.operator(tenant)._replace(may_assert_user=True).to_context()


class LambdaContext:
    """The parts of the Lambda context object the handlers (and Powertools) read."""

    function_name = "ragline-local"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:local:000000000000:function:ragline-local"
    aws_request_id = "local"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


def gateway_event(
    method: str,
    path: str,
    *,
    resource: str,
    path_parameters: dict[str, str] | None = None,
    authorizer: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
    body: str | None = None,
    request_id: str | None = None,
) -> dict[str, Any]:
    """The API Gateway REST proxy event a handler receives for one request."""
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": {"content-type": "application/json", **(headers or {})},
        "queryStringParameters": query or None,
        "pathParameters": path_parameters or None,
        # A fresh id per request, as API Gateway gives: the run id (and its one charge) hangs on it.
        "requestContext": {
            "requestId": request_id or uuid.uuid4().hex,
            "authorizer": authorizer or {},
            "resourcePath": resource,
            "httpMethod": method,
        },
        "body": body,
        "isBase64Encoded": False,
    }


def gateway_body(raw: bytes) -> str | None:
    """The body as API Gateway hands it to a proxy integration. The API declares no binary media
    types, so every body arrives as text, each byte that is not UTF-8 replaced by U+FFFD (the
    handlers refuse those as not UTF-8); with binary types it would be base64, which they also read."""
    return raw.decode("utf-8", errors="replace") or None


def result_headers(result: dict[str, Any]) -> dict[str, str]:
    """A proxy result's headers; Powertools answers with ``multiValueHeaders``."""
    multi = {k: ", ".join(v) for k, v in (result.get("multiValueHeaders") or {}).items()}
    return {**multi, **(result.get("headers") or {})}


Callers = Callable[[str | None], dict[str, str]]
"""The ``Authorization`` header → the authorizer context (raises ``Unauthorized``)."""


def callers(tenant: str, container: Container, *, api_keys: bool) -> Callers:
    if not api_keys:
        return lambda _authorization: local_principal(tenant)
    return lambda authorization: container.tenancy.authenticate(authorization).to_context()


def rest_endpoint(module: ModuleType, resource: str, caller: Callers, container: Container) -> Any:
    async def endpoint(request: Request) -> Response:
        try:
            authorizer = caller(request.headers.get("authorization"))
        except errors.Unauthorized as exc:
            return error_response(exc)
        event = gateway_event(
            request.method,
            request.scope["path"],  # as sent: see SentPaths
            resource=resource,
            path_parameters=dict(request.path_params),
            authorizer=authorizer,
            headers=dict(request.headers),
            query=dict(request.query_params),
            body=gateway_body(await request.body()),
        )
        result = module.lambda_handler(event, LambdaContext(), container=container)
        return Response(
            result.get("body") or "", status_code=result["statusCode"], headers=result_headers(result)
        )

    return endpoint


class SentPaths:
    """Route on the path as the client sent it (``raw_path``), not the ASGI server's decoded one: a
    decoded ``%2F`` would split a document id in two and miss its route, as it does not in AWS."""

    SAFE = "/%!$&'()*+,;=:@-._~"  # RFC 3986 path characters, and "%" so escapes stay as they are

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            raw = scope.get("raw_path") or scope["path"].encode()
            scope = {**scope, "path": quote(raw, safe=self.SAFE)}
        await self.app(scope, receive, send)


LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
"""The only names a request may address this server by (its ``Host`` header, port aside)."""


def host_name(host: str) -> str:
    """A ``Host`` header's name, lowercased, without its port (an IPv6 literal keeps its brackets)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.split(":", 1)[0]


class LoopbackHostOnly:
    """Refuse (403, the one error shape) a request addressed to any name but this machine's loopback.
    The server listens on 127.0.0.1 and, without ``--api-keys``, acts as the tenant's operator; a web
    page on another site can rebind its own domain name to 127.0.0.1 (DNS rebinding) and have the
    visitor's browser send requests here as same-origin ones, but they still name that domain in
    ``Host``. Covers every route, /mcp included. (Starlette's ``TrustedHostMiddleware`` does the same
    check but answers in plain text, outside the API's one error shape.)"""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            if host_name(host) not in LOOPBACK_NAMES:
                refused = errors.Forbidden(
                    "ragline serve answers only requests addressed to localhost or 127.0.0.1", host=host[:200]
                )
                await error_response(refused)(scope, receive, send)
                return
        await self.app(scope, receive, send)


DOCS_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ragline API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({url: "/openapi.json", dom_id: "#swagger-ui"});</script>
</body></html>
"""


def api_docs(functions: Path) -> list[Any]:
    """``/openapi.json`` (generated from the handlers, as ``docs/openapi.json``) and Swagger UI at
    ``/docs``, its assets from the ``swagger-ui-bundle-v2`` package (nothing from a CDN)."""
    from starlette.responses import HTMLResponse
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles
    from swagger_ui_bundle import swagger_ui_path

    from ragline.cli.openapi import render

    document = render(functions).encode()

    async def openapi(request: Request) -> Response:
        return Response(document, media_type="application/json")

    async def docs(request: Request) -> Response:
        return HTMLResponse(DOCS_PAGE)

    return [
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/docs", docs, methods=["GET"]),
        Mount("/docs/assets", app=StaticFiles(directory=swagger_ui_path)),
    ]


async def playground(request: Request) -> Response:
    """The playground: one static page (``playground.html``, no build step, nothing from a CDN) that
    talks to this server's own API."""
    from importlib.resources import files

    from starlette.responses import HTMLResponse

    return HTMLResponse(files("ragline.cli").joinpath("playground.html").read_text(encoding="utf-8"))


def build_app(functions: Path, tenant: str, container: Container, *, api_keys: bool = False) -> Starlette:
    """Every route of the API on one ASGI app, each handler given ``container``."""
    chat_app = load_function(functions, "chat").create_app(container, worker=False)
    caller = callers(tenant, container, api_keys=api_keys)

    async def chat_with_tenant(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            authorization = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1") or None
            try:
                context = json.dumps({"requestId": None, "authorizer": caller(authorization)}).encode()
            except errors.Unauthorized as exc:
                await error_response(exc)(scope, receive, send)
                return
            headers = [(k, v) for k, v in scope["headers"] if k != b"x-amzn-request-context"]
            scope = {**scope, "headers": [*headers, (b"x-amzn-request-context", context)]}
        await chat_app(scope, receive, send)

    routes: list[Any] = []
    for name, paths in REST_ROUTES.items():
        module = load_function(functions, name)
        for path, methods in paths:
            route = Route(path, rest_endpoint(module, path, caller, container), methods=methods)
            route.methods = set(methods)  # not Starlette's implicit HEAD: API Gateway routes none here
            routes.append(route)
    routes += [*api_docs(functions), Route("/", playground, methods=["GET"])]
    # /mcp: MCP over streamable HTTP, always as the request's own API key, --api-keys or not (an MCP
    # client is configured with one; a keyless operator endpoint would answer any local process).
    from ragline.cli.mcp import HttpEndpoint

    mcp = HttpEndpoint(container)
    mcp_route = Route("/mcp", mcp, methods=["GET", "POST", "DELETE"])
    mcp_route.methods = {"GET", "POST", "DELETE"}  # no implicit HEAD
    routes.append(mcp_route)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        clock = SyncClock(container)
        clock.start()
        try:
            async with mcp.lifespan(app):
                yield
        finally:
            clock.stop()

    app = Starlette(
        routes=routes,
        middleware=[Middleware(LoopbackHostOnly), Middleware(SentPaths)],
        exception_handlers=ROUTING_ERRORS,
        lifespan=lifespan,
    )
    # A path no REST route claims goes to the chat app: its routes, else its one-shape 404/405. (A
    # catch-all Mount would also take a REST path's other methods, which are a 405 here.)
    app.router.default = chat_with_tenant
    return app
