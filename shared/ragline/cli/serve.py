"""``ragline serve``: the real handlers behind one local HTTP server.

The chat ASGI app is mounted as it is; the REST handlers (search, documents) are Lambda functions,
so each request is turned into the API Gateway proxy event they receive in AWS. The tenant comes
from ``--tenant`` as if the authorizer had resolved it (a local server has no API keys).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from ragline.domain.tenancy import ALL_SCOPES
from ragline.services.tenancy import Principal

REST_ROUTES = {
    "search": [("/v1/namespaces/{namespace}/search", ["POST"])],
    "documents": [
        ("/v1/namespaces/{namespace}/documents", ["GET", "POST"]),
        ("/v1/namespaces/{namespace}/documents/{document_id}", ["GET", "DELETE"]),
    ],
}


def local_principal(tenant: str) -> dict[str, str]:
    """A local server has no API keys: the operator acts as the tenant with every scope."""
    return Principal(tenant_id=tenant, scopes=frozenset(ALL_SCOPES)).to_context()


def load_function(functions: Path, name: str) -> ModuleType:
    path = functions / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"ragline_fn_{name}", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class LambdaContext:
    function_name = "ragline-local"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:local:000000000000:function:ragline-local"
    aws_request_id = "local"


def rest_endpoint(module: ModuleType, resource: str, tenant: str) -> Any:
    async def endpoint(request: Request) -> Response:
        body = (await request.body()).decode() or None
        event = {
            "resource": resource,
            "path": request.url.path,
            "httpMethod": request.method,
            "headers": dict(request.headers),
            "queryStringParameters": dict(request.query_params) or None,
            "pathParameters": dict(request.path_params),
            # A fresh id per request, as API Gateway gives: the run id (and its one charge) hangs on it.
            "requestContext": {"requestId": uuid.uuid4().hex, "authorizer": local_principal(tenant)},
            "body": body,
            "isBase64Encoded": False,
        }
        result = module.lambda_handler(event, LambdaContext())
        return Response(
            result.get("body") or "", status_code=result["statusCode"], headers=result.get("headers") or {}
        )

    return endpoint


def build_app(functions: Path, tenant: str) -> Starlette:
    chat = load_function(functions, "chat")
    context = json.dumps({"requestId": None, "authorizer": local_principal(tenant)}).encode()

    async def chat_with_tenant(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = [(k, v) for k, v in scope["headers"] if k != b"x-amzn-request-context"]
            scope = {**scope, "headers": [*headers, (b"x-amzn-request-context", context)]}
        await chat.app(scope, receive, send)

    routes: list[Any] = []
    for name, paths in REST_ROUTES.items():
        module = load_function(functions, name)
        for path, methods in paths:
            routes.append(Route(path, rest_endpoint(module, path, tenant), methods=methods))
    routes.append(Mount("/", app=chat_with_tenant))
    return Starlette(routes=routes)
