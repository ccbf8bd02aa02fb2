"""The search Lambda handler: tenant only from the authorizer, one JSON error shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.config import Settings
from ragline.domain.billing import current_period
from ragline.domain.models import RunUsage, TenantScope
from ragline.domain.retrieval import Reranked
from ragline.domain.tenancy import Tenant
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.contract.vector_store_contract import make_chunks
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import authorizer_context, call_rest, load_handler
from tests.support.vectors import DIM

pytestmark = pytest.mark.unit
HANDLER = load_handler("search")
RESOURCE = "/v1/namespaces/{namespace}/search"


class ReversingReranker:
    """Ranks the fused candidates backwards, so a reranked response is visibly different."""

    name = "reversing"

    def rerank(self, query: str, hits: Any, top_n: int) -> Reranked:
        ranked = [
            h.model_copy(update={"breakdown": h.breakdown.model_copy(update={"rerank_score": float(-i)})})
            for i, h in enumerate(reversed(list(hits)))
        ]
        return Reranked(hits=ranked[:top_n], usage=RunUsage(reranks=1))


@pytest.fixture
def container(tmp_path: Path) -> Iterator[Container]:
    stores = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    c = Container(
        Settings(home=tmp_path), stores=stores, embedder=BowEmbedder(), reranker=ReversingReranker()
    )
    for tenant, text in (("acme", "Acme rockets launch at dawn."), ("globex", "Globex rockets are secret.")):
        c.registry.create_namespace(new_namespace(tenant, "docs"))
        stores.scoped(TenantScope(tenant_id=tenant, namespace_id="docs")).upsert(make_chunks("d", [text]))
    stores.scoped(TenantScope(tenant_id="acme", namespace_id="docs")).upsert(
        make_chunks("more", ["Rockets need fuel.", "Rockets need fuel.", "Launch windows open at dawn."])
    )
    yield c
    stores.close()


def call(
    container: Container,
    body: Any,
    namespace: str = "docs",
    tenant: str | None = "acme",
    request_id: str = "gw-1",
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    return call_rest(
        HANDLER,
        container,
        "POST",
        f"/v1/namespaces/{namespace}/search",
        resource=RESOURCE,
        authorizer=authorizer_context(tenant, scopes="search") if tenant else None,
        body=body,
        request_id=request_id,
        headers=headers,
    )


def test_search_returns_the_callers_hits_only(container: Container) -> None:
    status, body = call(container, {"query": "rockets dawn", "mode": "hybrid", "k": 5})
    assert status == 200
    texts = [h["text"] for h in body["hits"]]
    assert texts[0] == "Acme rockets launch at dawn." and not any("Globex" in t for t in texts)
    assert body["hits"][0]["scores"]["keywordRank"] == 1 and body["hits"][0]["namespace"] == "docs"
    assert body["runId"] == "gw-1" and body["usage"]["retrievals"] == 1 and body["rerank"] is None


def test_the_same_passage_is_returned_once(container: Container) -> None:
    status, body = call(container, {"query": "rockets need fuel", "mode": "keyword", "k": 10})
    assert status == 200
    texts = [h["text"] for h in body["hits"]]
    assert texts.count("Rockets need fuel.") == 1


def test_rerank_is_opt_in_and_reported(container: Container) -> None:
    plain = call(container, {"query": "rockets dawn", "k": 3})[1]
    status, reranked = call(container, {"query": "rockets dawn", "k": 3, "rerank": True}, request_id="gw-2")
    assert status == 200 and reranked["rerank"] == {"reranker": "reversing", "fellBack": False}
    assert [h["id"] for h in reranked["hits"]] != [h["id"] for h in plain["hits"]]
    assert all(h["scores"]["rerankScore"] is not None for h in reranked["hits"])
    assert reranked["usage"]["reranks"] == 1
    status, keyword = call(
        container, {"query": "rockets", "mode": "keyword", "rerank": True}, request_id="gw-3"
    )
    assert status == 200 and keyword["rerank"] is None  # exact-term order is never reranked


def test_body_cannot_choose_the_tenant(container: Container) -> None:
    status, body = call(container, {"query": "rockets", "tenant_id": "globex", "tenantId": "globex"})
    assert status == 400 and body["error"]["code"] == "invalid_request"  # unknown fields are refused
    status, body = call(container, {"query": "rockets"})
    assert status == 200 and all("Globex" not in h["text"] for h in body["hits"])


@pytest.mark.parametrize(
    ("kwargs", "status", "code"),
    [
        ({"body": {"query": "rockets"}, "tenant": None}, 401, "unauthorized"),
        ({"body": {"query": "rockets"}, "namespace": "missing"}, 404, "namespace_not_found"),
        ({"body": {"query": ""}}, 400, "invalid_request"),
        ({"body": {"query": "   "}}, 400, "invalid_request"),
        ({"body": {"query": "x", "mode": "fuzzy"}}, 400, "invalid_request"),
        ({"body": {"query": "x", "k": 0}}, 400, "invalid_request"),
        ({"body": "{not json"}, 400, "invalid_request"),
    ],
)
def test_errors_have_one_json_shape(
    container: Container, kwargs: dict[str, Any], status: int, code: str
) -> None:
    got_status, body = call(container, **kwargs)
    assert got_status == status
    assert body["error"]["code"] == code and body["error"]["message"]
    assert container.ledger.period_runs("acme", current_period()) == 0  # refused requests are not charged


def test_a_search_is_charged_once_per_request_id_and_refused_at_quota(container: Container) -> None:
    c = container
    c.registry.create_tenant(Tenant(tenant_id="acme", max_runs_per_period=2))
    assert call(c, {"query": "rockets"})[0] == 200
    assert call(c, {"query": "rockets"})[0] == 200  # a Lambda/client retry of the same request id
    assert c.ledger.period_runs("acme", current_period()) == 1
    assert call(c, {"query": "rockets"}, request_id="gw-2")[0] == 200
    status, body = call(c, {"query": "rockets"}, request_id="gw-3")
    assert status == 429 and body["error"]["code"] == "quota_exceeded"
    assert body["error"]["details"]["limit"] == 2 and body["error"]["details"]["used"] == 2
    assert c.ledger.period_usage("acme", current_period()).retrievals == 2


def test_the_idempotency_key_names_the_run(container: Container) -> None:
    status, body = call(container, {"query": "rockets"}, headers={"Idempotency-Key": "client-7"})
    assert status == 200 and body["runId"] == "client-7"
    assert "tenant" not in json.dumps(body).lower()


def test_a_quota_refusal_is_counted_for_the_operators_alarm(
    container: Container, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given a tenant at its quota, when it searches, then the 429 leaves one ``QuotaExceeded`` EMF
    line (the metric and dimensions template.yaml's QuotaExceededAlarm watches, under the service
    name the template gives every function); an answered search leaves none."""
    from tests.support.cfn_tables import load_template

    template = load_template()
    service = template["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", service)
    alarm = template["Resources"]["QuotaExceededAlarm"]["Properties"]
    container.registry.create_tenant(Tenant(tenant_id="acme", max_runs_per_period=1))
    assert call(container, {"query": "rockets"}, request_id="q-1")[0] == 200
    assert "QuotaExceeded" not in capsys.readouterr().out
    assert call(container, {"query": "rockets"}, request_id="q-2")[0] == 429
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if '"QuotaExceeded"' in x]
    assert len(lines) == 1 and lines[0]["QuotaExceeded"] == [1.0]
    (declared,) = lines[0]["_aws"]["CloudWatchMetrics"]
    assert (declared["Namespace"], declared["Metrics"][0]["Name"]) == (
        alarm["Namespace"],
        alarm["MetricName"],
    )
    assert {d["Name"]: d["Value"] for d in alarm["Dimensions"]} == {"service": service}
    assert declared["Dimensions"] == [["service"]] and lines[0]["service"] == service
