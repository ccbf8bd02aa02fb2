"""Run the real handlers the way Lambda and API Gateway do: the one loader, context and event builder.

The builders are production code (``ragline serve`` uses them too); this module adds what tests need
on top: calling a REST handler with a container and a caller, and the chat ASGI app with the context
header the Lambda Web Adapter forwards.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

from starlette.testclient import TestClient

from ragline.cli.serve import LambdaContext, gateway_event, load_function
from ragline.services.authentication import Principal
from ragline.wiring import Container

FUNCTIONS = Path(__file__).parents[2] / "functions"


def load_handler(name: str) -> ModuleType:
    """A fresh import of ``functions/<name>/app.py``, as a new Lambda container does."""
    return load_function(FUNCTIONS, name)


def authorizer_context(
    tenant: str, scopes: str = "chat,search,ingest,admin", namespaces: str = ""
) -> dict[str, str]:
    """What the authorizer puts in the request context for a key (see ``Principal.to_context``)."""
    return {"tenantId": tenant, "scopes": scopes, "namespaces": namespaces, "keyId": "key_test"}


def path_parameters(resource: str, path: str) -> dict[str, str]:
    """``/v1/namespaces/{namespace}/search`` + ``/v1/namespaces/docs/search`` → ``{"namespace": "docs"}``."""
    pattern = re.sub(r"\\{(\w+)\\}", r"(?P<\1>[^/]+)", re.escape(resource))
    match = re.fullmatch(pattern, path)
    return match.groupdict() if match else {}


def call_rest(
    module: ModuleType,
    container: Container,
    method: str,
    path: str,
    *,
    resource: str,
    authorizer: dict[str, str] | None,
    body: Any = None,
    headers: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
    request_id: str | None = None,
) -> tuple[int, Any]:
    """One request through a REST handler; ``body`` is sent as JSON unless it is already a string.
    Each request gets a fresh gateway request id, as in AWS (the run id when no Idempotency-Key)."""
    event = gateway_event(
        method,
        path,
        resource=resource,
        path_parameters=path_parameters(resource, path),
        authorizer=authorizer,
        headers=headers,
        query=query,
        body=body if body is None or isinstance(body, str) else json.dumps(body),
        request_id=request_id,
    )
    response = module.lambda_handler(event, LambdaContext(), container=container)
    return response["statusCode"], json.loads(response["body"] or "null")


def chat_client(module: ModuleType, container: Container) -> TestClient:
    """A client for the chat ASGI app, wired to ``container``."""
    return TestClient(module.create_app(container))


def chat_headers(authorizer: dict[str, str], request_id: str | None = None, **extra: str) -> dict[str, str]:
    """The headers the Lambda Web Adapter forwards: the API Gateway context with the authorizer's
    (a fresh request id per call unless given, as in AWS)."""
    context = {"requestId": request_id or f"gw-{uuid.uuid4().hex}", "authorizer": authorizer}
    return {"x-amzn-request-context": json.dumps(context), **extra}


def operator(tenant: str) -> dict[str, str]:
    return Principal.operator(tenant).to_context()
