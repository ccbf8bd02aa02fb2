"""Ragline as an MCP server: ``ragline mcp`` (stdio) and ``/mcp`` on ``ragline serve`` (streamable HTTP).

Three tools — ``search``, ``hosting_search`` and ``ask`` — and the caller's readable namespaces as
resources (``ragline://namespaces/{namespace}``), all through the services the REST routes use, so
scopes, namespace allow-lists, tenant isolation and metering (one charge per tool call) are theirs.

The caller is a Ragline API key, resolved as the deployed authorizer resolves it: on stdio the key in
``RAGLINE_API_KEY`` (checked before serving, and again per request, so a revoked key stops at once); on
HTTP each request's ``Authorization: Bearer rl_…`` header (a missing or unknown key is a 401 in the one
JSON error shape). A refused call is a tool error whose content is the one error shape
(``{"error": {"code", "message", "details"}}``); a refused resource read is a protocol error with that
shape as its ``data``.

The ``mcp`` SDK is imported inside the functions: the CLI's startup and the Lambda layer (which does not
ship it) never load it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from pydantic import Field

from ragline import __version__, errors
from ragline.agents.events import ChatResponse
from ragline.domain.api import (
    ApiRequest,
    ChatAgent,
    ChatMode,
    ChatRequest,
    HostingSearchRequest,
    HostingSearchResponse,
    RequestFilter,
    SearchRequest,
    SearchResponse,
)
from ragline.http import error_body
from ragline.services.authentication import Principal
from ragline.services.read_views import may_see
from ragline.streaming import error_response, log_failure

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server import Server, ServerRequestContext
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import Receive, Scope, Send

    from ragline.wiring import Container

URI_PREFIX = "ragline://namespaces/"
PRINCIPAL = "ragline.principal"
"""The ASGI scope key under which ``/mcp`` hands the request's authenticated principal to the tools."""
INSTRUCTIONS = (
    "Ragline: retrieval over this API key's namespaces (read the ragline://namespaces/ resources to see "
    "them). `search` ranks one namespace's chunks, `hosting_search` gathers the best chunks for a "
    "question over several rounds, `ask` answers with verified citations. Each call is one metered run."
)

Resolve = Callable[[Any], Principal]
"""The transport's request (``ctx.request``: the HTTP request, or None on stdio) → its caller."""


class AskArgs(ApiRequest):
    """The ``ask`` tool's arguments: one question, as a one-message ``stream: false`` chat."""

    question: str = Field(min_length=1, max_length=100_000, description="The question to answer.")
    namespaces: list[str] = Field(
        default_factory=list,
        max_length=20,
        description="Namespaces to search; empty: the collection router picks among the readable ones.",
    )
    agent: ChatAgent = Field(default="agentic", description="Which agent answers; auto: the RAG router.")
    mode: ChatMode = Field(default="accurate", description="accurate (reranks) or fast.")
    filter: RequestFilter = None


class SearchArgs(SearchRequest):
    """The ``search`` tool's arguments: the route's body and the namespace of its path."""

    namespace: str = Field(min_length=1, max_length=128, description="The namespace to search.")


def tool_list() -> list[types.Tool]:
    import mcp_types as types

    read_only = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)

    def tool(name: str, description: str, args: type[ApiRequest], result: type[Any]) -> types.Tool:
        return types.Tool(
            name=name,
            description=description,
            input_schema=args.model_json_schema(),
            output_schema=result.model_json_schema(mode="serialization"),
            annotations=read_only,
        )

    return [
        tool(
            "search",
            "Search one namespace (scope `search`): the best chunks with their ids, text, filename and "
            "score breakdown. mode: semantic | keyword | hybrid; k: 1-100.",
            SearchArgs,
            SearchResponse,
        ),
        tool(
            "hosting_search",
            "The best chunks for a question or conversation (scope `search`) from a self-evaluating "
            "multi-query search over the namespaces (empty: the default one); returns the chunks, the "
            "rounds and why the loop stopped. Send `query` or `messages`, not both.",
            HostingSearchRequest,
            HostingSearchResponse,
        ),
        tool(
            "ask",
            "Answer a question from the namespaces' documents (scope `chat`): the answer with "
            '<citation ids="…"/> markers, the cited sources (verified against what the run '
            "retrieved), warnings and usage.",
            AskArgs,
            ChatResponse,
        ),
    ]


def run_tool(container: Container, principal: Principal, name: str, arguments: dict[str, Any]) -> Any:
    """One tool call through the route's service (blocking: run it in a worker thread), holding a run
    slot of the caller's key and tenant as the REST routes do."""
    if name not in ("search", "hosting_search", "ask"):  # listed tools only: not reached
        raise errors.InvalidRequest(f"unknown tool {name!r}", tool=name)
    with container.tenant_gate.run_slot(principal):
        return _run(container, principal, name, arguments)


def _run(container: Container, principal: Principal, name: str, arguments: dict[str, Any]) -> Any:
    if name == "search":
        args = SearchArgs.model_validate(arguments)
        request = SearchRequest.model_validate(args.model_dump(by_alias=True, exclude={"namespace"}))
        return container.search.search(principal, args.namespace, request)
    if name == "hosting_search":
        return container.hosting_search.search(principal, HostingSearchRequest.model_validate(arguments))
    ask = AskArgs.model_validate(arguments)
    chat = ChatRequest.model_validate(
        {
            "messages": [{"role": "user", "content": ask.question}],
            "namespaces": ask.namespaces,
            "agent": ask.agent,
            "mode": ask.mode,
            "filter": ask.filter,
            "stream": False,
        }
    )
    events = container.chat.answer_chat(principal, chat)
    try:
        return ChatResponse.collect(events)
    finally:
        events.close()  # a run left half-read still finishes, and is charged, once


def namespace_of(uri: str) -> str:
    if not uri.startswith(URI_PREFIX) or not uri[len(URI_PREFIX) :]:
        raise errors.NotFound(f"no resource {uri!r}", uri=uri)
    return unquote(uri[len(URI_PREFIX) :])


def read_namespace(container: Container, principal: Principal, namespace: str) -> dict[str, Any]:
    """The namespace as the namespaces route shows it (any scope, inside the allow-list), with the
    number of documents it holds (every record not deleted, as deleting a namespace counts them) —
    for an end user, only those it may read: a count is never an oracle for the others."""
    view = container.namespaces.get(principal, namespace)
    records = container.documents.list(principal.tenant_id, namespace)
    return {
        **view.model_dump(mode="json"),
        "documentCount": sum(1 for r in records if r.status != "deleted" and may_see(principal, r.readers)),
    }


def build_server(container: Container, resolve: Resolve) -> Server[Any]:
    """The MCP server: its handlers resolve the caller per request, then call the services."""
    import anyio
    import mcp_types as types
    from mcp.server import Server
    from mcp.shared.exceptions import MCPError

    tools = tool_list()
    known = {t.name for t in tools}

    async def blocking(fn: Callable[[], Any]) -> Any:
        return await anyio.to_thread.run_sync(fn)

    def protocol_error(exc: BaseException) -> MCPError:
        status, body = error_body(exc)
        log_failure(exc, status)
        code = types.INVALID_PARAMS if status < 500 else types.INTERNAL_ERROR
        return MCPError(code=code, message=body["error"]["message"], data=body)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in known:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        request, arguments = ctx.request, dict(params.arguments or {})
        try:
            result = await blocking(lambda: run_tool(container, resolve(request), params.name, arguments))
        except Exception as exc:  # the edge: every error is the one shape, as a tool error
            status, body = error_body(exc)
            log_failure(exc, status)
            text = json.dumps(body, ensure_ascii=False)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], structured_content=body, is_error=True
            )
        structured = result.model_dump(mode="json")
        text = json.dumps(structured, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=structured
        )

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        request = ctx.request
        try:
            listing = await blocking(lambda: container.namespaces.list(resolve(request)))
        except Exception as exc:
            raise protocol_error(exc) from exc
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=URI_PREFIX + quote(ns.namespace_id, safe=""),
                    name=ns.namespace_id,
                    description=ns.description or None,
                    mime_type="application/json",
                )
                for ns in listing.namespaces
            ]
        )

    async def list_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(
            uri_template=URI_PREFIX + "{namespace}",
            name="namespace",
            description="A namespace this key may read: its description, settings and document count.",
            mime_type="application/json",
        )
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        request, uri = ctx.request, str(params.uri)
        try:
            body = await blocking(lambda: read_namespace(container, resolve(request), namespace_of(uri)))
        except Exception as exc:
            raise protocol_error(exc) from exc
        text = json.dumps(body, ensure_ascii=False)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, text=text, mime_type="application/json")]
        )

    return Server(
        "ragline",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


# -- stdio -------------------------------------------------------------------------------------------


def stdio_caller(container: Container, api_key: str) -> Resolve:
    """The key's principal, checked now (``Unauthorized`` before anything is served) and per request."""
    if not api_key.strip():
        raise errors.Unauthorized(
            "RAGLINE_API_KEY is not set: `ragline mcp` acts as the API key it holds "
            "(create one with `ragline keys create --tenant T`)"
        )
    authorization = f"Bearer {api_key.strip()}"
    container.tenancy.authenticate(authorization)
    return lambda _request: container.tenant_gate.admit(container.tenancy.authenticate(authorization))


def serve_stdio(container: Container, api_key: str) -> None:
    """Serve MCP over stdin/stdout as ``api_key`` until the client closes the pipe."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(container, stdio_caller(container, api_key))

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)


# -- streamable HTTP ---------------------------------------------------------------------------------


def request_principal(request: Any) -> Principal:
    """The principal :class:`HttpEndpoint` authenticated for this HTTP request."""
    principal = request.scope.get(PRINCIPAL) if request is not None else None
    if not isinstance(principal, Principal):
        raise errors.Unauthorized("missing or malformed API key")
    return principal


class HttpEndpoint:
    """``/mcp``: MCP over streamable HTTP, stateless (each POST stands alone, with its own key) and
    answered as JSON. Mount it as an ASGI app and run :meth:`lifespan` with the hosting app (each run
    of it starts a fresh session manager: the SDK's runs only once, and an app may be started again)."""

    def __init__(self, container: Container) -> None:
        self._container = container
        self._server = build_server(container, request_principal)
        self._manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def lifespan(self, app: Any = None) -> AsyncIterator[None]:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        manager = StreamableHTTPSessionManager(app=self._server, stateless=True, json_response=True)
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        import anyio

        if scope["type"] == "http":
            authorization = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1") or None
            try:
                authenticate = self._container.tenancy.authenticate
                principal = await anyio.to_thread.run_sync(authenticate, authorization)
                headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
                # as the REST handlers hold the authorizer's answer: status, end user, request rate
                principal = await anyio.to_thread.run_sync(
                    self._container.tenant_gate.admit, principal, headers
                )
                if self._manager is None:
                    raise errors.DependencyUnavailable(
                        "the MCP endpoint is not running: start the app's lifespan"
                    )
            except errors.RaglineError as exc:
                await error_response(exc)(scope, receive, send)
                return
            scope = {**scope, PRINCIPAL: principal}
        if self._manager is not None:
            await self._manager.handle_request(scope, receive, send)
