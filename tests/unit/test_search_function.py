"""The search Lambda handler: tenant only from the authorizer, one JSON error shape."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.config import Settings
from ragline.domain.models import TenantScope
from ragline.services.namespaces import new_namespace
from ragline.services.search import SearchService
from ragline.wiring import Container
from tests.contract.vector_store_contract import make_chunks
from tests.support.fakes import BowEmbedder
from tests.support.vectors import DIM

pytestmark = pytest.mark.unit
APP = Path(__file__).parents[2] / "functions" / "search" / "app.py"


class Ctx:
    function_name = "search"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:search"
    aws_request_id = "req-1"


@pytest.fixture
def handler(tmp_path: Path) -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("search_app", APP)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as the Lambda runtime imports it
    spec.loader.exec_module(module)
    registry = SqliteTenantRegistry(tmp_path / "t.sqlite")
    stores = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    for tenant, text in (("acme", "Acme rockets launch at dawn."), ("globex", "Globex rockets are secret.")):
        registry.create_namespace(new_namespace(tenant, "docs"))
        stores.scoped(TenantScope(tenant_id=tenant, namespace_id="docs")).upsert(make_chunks("d", [text]))
    container = Container(Settings(home=tmp_path))
    container.__dict__["search"] = SearchService(registry=registry, stores=stores, embedder=BowEmbedder())
    module.container = lambda: container
    yield module
    stores.close()


def event(body: Any, namespace: str = "docs", tenant: str | None = "acme") -> dict[str, Any]:
    return {
        "resource": "/v1/namespaces/{namespace}/search",
        "path": f"/v1/namespaces/{namespace}/search",
        "httpMethod": "POST",
        "headers": {"content-type": "application/json"},
        "pathParameters": {"namespace": namespace},
        "requestContext": {
            "requestId": "gw-1",
            "authorizer": {"tenantId": tenant, "scopes": "search"} if tenant else {},
            "resourcePath": "/v1/namespaces/{namespace}/search",
            "httpMethod": "POST",
        },
        "body": body if isinstance(body, str) else json.dumps(body),
        "isBase64Encoded": False,
    }


def call(handler: ModuleType, ev: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    resp = handler.lambda_handler(ev, Ctx())
    return resp["statusCode"], json.loads(resp["body"])


def test_search_returns_the_callers_hits_only(handler: ModuleType) -> None:
    status, body = call(handler, event({"query": "rockets", "mode": "hybrid", "k": 5}))
    assert status == 200
    assert [h["text"] for h in body["hits"]] == ["Acme rockets launch at dawn."]
    assert body["hits"][0]["scores"]["keyword_rank"] == 1


def test_body_cannot_choose_the_tenant(handler: ModuleType) -> None:
    status, body = call(handler, event({"query": "rockets", "tenant_id": "globex", "tenantId": "globex"}))
    assert status == 200 and all("Globex" not in h["text"] for h in body["hits"])


@pytest.mark.parametrize(
    ("ev", "status", "code"),
    [
        (event({"query": "rockets"}, tenant=None), 401, "unauthorized"),
        (event({"query": "rockets"}, namespace="missing"), 404, "namespace_not_found"),
        (event({"query": ""}), 400, "invalid_request"),
        (event({"query": "x", "mode": "fuzzy"}), 400, "invalid_request"),
        (event("{not json"), 400, "invalid_request"),
    ],
)
def test_errors_have_one_json_shape(handler: ModuleType, ev: dict[str, Any], status: int, code: str) -> None:
    got_status, body = call(handler, ev)
    assert got_status == status
    assert body["error"]["code"] == code and body["error"]["message"]


def test_a_search_is_charged_once_per_request_id_and_refused_at_quota(handler: ModuleType) -> None:
    from ragline.adapters.embedded.ledger import current_period
    from ragline.domain.tenancy import Tenant

    c = handler.container()
    c.registry.create_tenant(Tenant(tenant_id="acme", max_runs_per_period=2))
    first = event({"query": "rockets"})
    assert call(handler, first)[0] == 200
    assert call(handler, first)[0] == 200  # a Lambda/client retry of the same request id
    assert c.ledger.period_runs("acme", current_period()) == 1
    second = event({"query": "rockets"})
    second["requestContext"]["requestId"] = "gw-2"
    assert call(handler, second)[0] == 200
    third = event({"query": "rockets"})
    third["requestContext"]["requestId"] = "gw-3"
    status, body = call(handler, third)
    assert status == 429 and body["error"]["code"] == "quota_exceeded"
    assert body["error"]["details"]["limit"] == 2 and body["error"]["details"]["used"] == 2
    assert c.ledger.period_usage("acme", current_period()).retrievals == 2
