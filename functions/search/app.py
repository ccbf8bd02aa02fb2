"""POST /v1/namespaces/{namespace}/search — one search over a tenant's namespace.

Thin by design: parse → one service call → response. The tenant comes only from the authorizer
context; nothing in the body or path can name another tenant.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, Field

from ragline.agents.tools import rich
from ragline.config import load_settings
from ragline.domain.models import RunUsage, TenantScope
from ragline.http import install_error_handlers
from ragline.services.search import SearchOutcome
from ragline.services.tenancy import Principal
from ragline.wiring import Container

logger = Logger()
app = APIGatewayRestResolver()


class SearchRequest(BaseModel):
    query: str = Field(min_length=1, max_length=4000)
    mode: Literal["semantic", "keyword", "hybrid"] = "hybrid"
    k: int = Field(default=10, ge=1, le=100)


@cache
def container() -> Container:
    return Container(load_settings())


def principal() -> Principal:
    return Principal.from_context(app.current_event.request_context.authorizer.raw_event)


@app.post("/v1/namespaces/<namespace>/search")
def search(namespace: str) -> dict[str, Any]:
    caller = principal()
    caller.require("search", namespace)
    body = SearchRequest.model_validate(app.current_event.json_body or {})
    scope = TenantScope(tenant_id=caller.tenant_id, namespace_id=namespace)
    event = app.current_event
    run_id = (
        event.headers.get("Idempotency-Key")
        or event.headers.get("idempotency-key")
        or event.request_context.request_id
    )

    def work(usage: RunUsage) -> SearchOutcome:
        outcome = container().search.search(scope, body.query, mode=body.mode, k=body.k)
        usage.add(outcome.usage)
        return outcome

    out = container().metering.run(caller.tenant_id, run_id, work)
    return {
        "mode": out.mode,
        "warnings": out.warnings,
        "hits": [rich(h.chunk, h) for h in out.hits],
        "usage": out.usage.model_dump(),
        "runId": run_id,
    }


install_error_handlers(app)


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
