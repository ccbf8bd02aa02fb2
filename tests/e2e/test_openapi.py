"""The OpenAPI document: generated from the handlers, committed fresh, served by ``ragline serve`` with
Swagger UI from a local package."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from ragline.cli.openapi import render
from ragline.cli.serve import build_app
from ragline.config import Settings
from ragline.wiring import Container

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]
FUNCTIONS = ROOT / "functions"


def test_the_committed_document_is_fresh() -> None:
    committed = (ROOT / "docs" / "openapi.json").read_text(encoding="utf-8")
    assert committed == render(FUNCTIONS), "docs/openapi.json is stale: run `make openapi`"


def test_every_route_is_documented_with_its_models_and_the_one_error_shape() -> None:
    doc = json.loads(render(FUNCTIONS))
    # a Ragline key, or the tenant identity provider's token (either one)
    assert doc["openapi"] == "3.1.0" and doc["security"] == [{"apiKey": []}, {"identityToken": []}]
    operations = {(m.upper(), p) for p, item in doc["paths"].items() for m in item}
    assert operations == {
        ("POST", "/v1/chat"),
        ("GET", "/v1/runs/{run_id}"),
        ("GET", "/v1/runs/{run_id}/events"),
        ("POST", "/v1/runs/{run_id}/cancel"),
        ("GET", "/v1/conversations"),
        ("GET", "/v1/conversations/{conversation_id}"),
        ("DELETE", "/v1/conversations/{conversation_id}"),
        ("POST", "/v1/evaluations"),
        ("GET", "/v1/evaluations"),
        ("GET", "/v1/evaluations/{evaluation_id}"),
        ("GET", "/v1/evaluations/{evaluation_id}/report"),
        ("POST", "/v1/hosting-search"),
        ("POST", "/v1/namespaces/{namespace}/search"),
        ("GET", "/v1/namespaces"),
        ("POST", "/v1/namespaces"),
        ("GET", "/v1/namespaces/{namespace}"),
        ("PATCH", "/v1/namespaces/{namespace}"),
        ("DELETE", "/v1/namespaces/{namespace}"),
        ("GET", "/v1/namespaces/{namespace}/sources"),
        ("POST", "/v1/namespaces/{namespace}/sources"),
        ("GET", "/v1/namespaces/{namespace}/sources/{source_id}"),
        ("PATCH", "/v1/namespaces/{namespace}/sources/{source_id}"),
        ("DELETE", "/v1/namespaces/{namespace}/sources/{source_id}"),
        ("POST", "/v1/namespaces/{namespace}/sources/{source_id}/sync"),
        ("POST", "/v1/namespaces/{namespace}/reindex"),
        ("GET", "/v1/namespaces/{namespace}/documents"),
        ("POST", "/v1/namespaces/{namespace}/documents"),
        ("GET", "/v1/namespaces/{namespace}/documents/{document_id}"),
        ("PATCH", "/v1/namespaces/{namespace}/documents/{document_id}"),
        ("DELETE", "/v1/namespaces/{namespace}/documents/{document_id}"),
        ("GET", "/v1/keys"),
        ("POST", "/v1/keys"),
        ("DELETE", "/v1/keys/{key_id}"),
        ("GET", "/v1/usage"),
        ("GET", "/v1/tenant/identity-provider"),
        ("PUT", "/v1/tenant/identity-provider"),
        ("DELETE", "/v1/tenant/identity-provider"),
        ("GET", "/v1/webhooks"),
        ("POST", "/v1/webhooks"),
        ("GET", "/v1/webhooks/{webhook_id}"),
        ("DELETE", "/v1/webhooks/{webhook_id}"),
        ("POST", "/v1/webhooks/{webhook_id}/rotate-secret"),
    }
    for path, item in doc["paths"].items():
        for method, op in item.items():
            for status in ("400", "401", "403", "404", "429", "500"):
                schema = op["responses"][status]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (method, path, status)
            metered = path in ("/v1/chat", "/v1/hosting-search", "/v1/namespaces/{namespace}/search")
            headers = [p["name"] for p in op.get("parameters", []) if p["in"] == "header"]
            user = ["Ragline-User-Id", "Ragline-User-Groups"]  # every route acts for the user they name
            own = ["Idempotency-Key"] if metered else ["Last-Event-ID"] if path.endswith("/events") else []
            assert sorted(headers) == sorted([*own, *user]), (method, path)
    for body in ("SearchRequest", "ChatRequest", "HostingSearchRequest"):
        ops = doc["components"]["schemas"][body]["properties"]["filter"]["anyOf"][0]["oneOf"]
        assert {next(iter(o["properties"])) for o in ops} >= {"andAll", "orAll", "not", "in", "equals"}
    chat = doc["paths"]["/v1/chat"]["post"]
    assert set(chat["responses"]["200"]["content"]) == {"text/event-stream", "application/json"}
    schemas = doc["components"]["schemas"]
    events = {ref["$ref"].rsplit("/", 1)[1] for ref in schemas["RunEvent"]["anyOf"]}
    assert events >= {
        "AnswerDelta",
        "ToolStarted",
        "ToolFinished",
        "Sources",
        "Warning",
        "Route",
        "Collections",
    }
    # camelCase on the wire, unknown fields refused
    assert "maxEvals" in schemas["HostingSearchRequest"]["properties"]
    assert schemas["ChatRequest"]["additionalProperties"] is False
    assert doc["components"]["securitySchemes"]["apiKey"]["scheme"] == "bearer"
    token = doc["components"]["securitySchemes"]["identityToken"]
    assert (token["scheme"], token["bearerFormat"]) == ("bearer", "JWT")
    assert {"assertUser", "requireUser"} <= set(schemas["NewKey"]["properties"])


def test_serve_serves_the_document_and_swagger_ui_offline(tmp_path: Path) -> None:
    container = Container(Settings(home=tmp_path))
    with TestClient(build_app(FUNCTIONS, "local", container), base_url="http://localhost") as client:
        doc = client.get("/openapi.json")
        assert doc.status_code == 200 and doc.json() == json.loads(render(FUNCTIONS))
        page = client.get("/docs")
        assert page.status_code == 200 and "SwaggerUIBundle" in page.text and "/openapi.json" in page.text
        assert "http" not in page.text.replace("http-equiv", "")  # no CDN: every asset is served here
        bundle = client.get("/docs/assets/swagger-ui-bundle.js")
        assert bundle.status_code == 200 and len(bundle.content) > 100_000
        assert client.get("/docs/assets/swagger-ui.css").status_code == 200
    container.close()
