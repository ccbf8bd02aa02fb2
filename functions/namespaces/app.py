"""Management API: namespaces, API keys and usage of the caller's tenant.

Powertools' resolver validates bodies against the pydantic models below (and serves the OpenAPI
document); every error still leaves in Ragline's one JSON shape. Reading namespaces needs any scope
(filtered by the key's allow-list); changing them, managing keys and reading usage need ``admin``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Annotated, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from ragline import errors
from ragline.config import load_settings
from ragline.domain.tenancy import ApiKeyRecord, Namespace, Scope
from ragline.http import error_body, install_error_handlers
from ragline.services.namespaces import new_namespace
from ragline.services.tenancy import Principal
from ragline.wiring import Container

logger = Logger()
app = APIGatewayRestResolver(enable_validation=True)
install_error_handlers(app)


@app.exception_handler(RequestValidationError)
def invalid_body(exc: RequestValidationError) -> Response[str]:
    import json

    status, body = error_body(errors.InvalidRequest("invalid request", problems=str(exc.errors())[:1000]))
    return Response(status, "application/json", json.dumps(body))


class NewNamespace(BaseModel):
    namespace_id: str = Field(alias="namespaceId", min_length=1, max_length=128)
    description: str = Field(default="", max_length=2000)
    default: bool = False


class NamespacePatch(BaseModel):
    description: str | None = Field(default=None, max_length=2000)
    default: bool | None = None
    system_prompt: str | None = Field(default=None, alias="systemPrompt", max_length=20000)


class NewKey(BaseModel):
    name: str = Field(default="", max_length=200)
    scopes: list[Scope] = Field(min_length=1)
    namespaces: list[str] = Field(default_factory=list)


@cache
def container() -> Container:
    return Container(load_settings())


def caller() -> Principal:
    return Principal.from_context(app.current_event.request_context.authorizer.raw_event)


def ns_view(ns: Namespace) -> dict[str, Any]:
    return {
        "namespaceId": ns.namespace_id,
        "description": ns.description,
        "default": ns.default,
        "embeddingModel": ns.settings.embedding_model,
        "systemPrompt": ns.settings.system_prompt,
        "createdAt": ns.created_at.isoformat(),
    }


def key_view(k: ApiKeyRecord) -> dict[str, Any]:
    """Never the key or its hash."""
    return {
        "keyId": k.key_id,
        "name": k.name,
        "scopes": list(k.scopes),
        "namespaces": list(k.namespaces),
        "createdAt": k.created_at.isoformat(),
        "lastUsedAt": k.last_used_at.isoformat() if k.last_used_at else None,
        "revoked": not k.active,
    }


@app.get("/v1/namespaces")
def list_namespaces() -> dict[str, Any]:
    me = caller()
    spaces = container().registry.list_namespaces(me.tenant_id)
    return {"namespaces": [ns_view(n) for n in spaces if me.may_read(n.namespace_id)]}


@app.post("/v1/namespaces")
def create_namespace(body: NewNamespace) -> Response[dict[str, Any]]:
    me = caller()
    me.require("admin")
    ns = container().registry.create_namespace(
        new_namespace(me.tenant_id, body.namespace_id, body.description, body.default)
    )
    return Response(201, "application/json", ns_view(ns))


@app.get("/v1/namespaces/<namespace>")
def get_namespace(namespace: str) -> dict[str, Any]:
    me = caller()
    me.require_any(("chat", "search", "ingest", "admin"), namespace)
    return ns_view(container().registry.get_namespace(me.tenant_id, namespace))


@app.patch("/v1/namespaces/<namespace>")
def update_namespace(namespace: str, body: NamespacePatch) -> dict[str, Any]:
    me = caller()
    me.require("admin", namespace)
    registry = container().registry
    ns = registry.get_namespace(me.tenant_id, namespace)
    settings = ns.settings
    if body.system_prompt is not None:
        settings = settings.model_copy(update={"system_prompt": body.system_prompt})
    changed = ns.model_copy(
        update={
            "description": ns.description if body.description is None else body.description,
            "default": ns.default if body.default is None else body.default,
            "settings": settings,
        }
    )
    return ns_view(registry.update_namespace(changed))


@app.delete("/v1/namespaces/<namespace>")
def delete_namespace(namespace: str) -> dict[str, Any]:
    me = caller()
    me.require("admin", namespace)
    c = container()
    c.registry.get_namespace(me.tenant_id, namespace)
    live = [d for d in c.documents.list(me.tenant_id, namespace) if d.status != "deleted"]
    if live:
        raise errors.Conflict(
            "the namespace still holds documents; delete them first", documents=len(live), namespace=namespace
        )
    c.registry.delete_namespace(me.tenant_id, namespace)
    return {"namespaceId": namespace, "deleted": True}


@app.get("/v1/keys")
def list_keys() -> dict[str, Any]:
    me = caller()
    me.require("admin")
    return {"keys": [key_view(k) for k in container().tenancy.list_keys(me.tenant_id)]}


@app.post("/v1/keys")
def create_key(body: NewKey) -> Response[dict[str, Any]]:
    me = caller()
    me.require("admin")
    plaintext, record = container().tenancy.create_key(
        me.tenant_id, name=body.name, scopes=body.scopes, namespaces=body.namespaces
    )
    return Response(201, "application/json", {**key_view(record), "apiKey": plaintext})


@app.delete("/v1/keys/<key_id>")
def revoke_key(key_id: str) -> dict[str, Any]:
    me = caller()
    me.require("admin")
    return key_view(container().tenancy.revoke_key(me.tenant_id, key_id))


@app.get("/v1/usage")
def usage(period: Annotated[str | None, Query(pattern=r"^\d{4}-\d{2}$")] = None) -> dict[str, Any]:
    me = caller()
    me.require("admin")
    period = period or datetime.now(UTC).strftime("%Y-%m")
    ledger = container().ledger
    return {
        "period": period,
        "runs": ledger.period_runs(me.tenant_id, period),
        "usage": ledger.period_usage(me.tenant_id, period).model_dump(),
    }


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
