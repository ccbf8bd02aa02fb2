"""The documents API handler: list, inspect, add text, delete — scoped to the authorizer's tenant."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ragline.config import Settings
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder

pytestmark = pytest.mark.unit
APP = Path(__file__).parents[2] / "functions" / "documents" / "app.py"


class Ctx:
    function_name = "documents"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:documents"
    aws_request_id = "req-1"


@pytest.fixture
def handler(tmp_path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("documents_app", APP)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    c = Container(Settings(home=tmp_path))
    c.__dict__["embedder"] = BowEmbedder()
    c.__dict__["tokenizer"] = BowEmbedder()
    for tenant in ("acme", "globex"):
        c.registry.create_namespace(new_namespace(tenant, "docs"))
    module.container = lambda: c
    return module


def call(
    handler: ModuleType, method: str, path: str, body: Any = None, tenant: str = "acme"
) -> tuple[int, Any]:
    resource = "/v1/namespaces/{namespace}/documents" + ("/{document_id}" if path.count("/") > 4 else "")
    event = {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": {"content-type": "application/json"},
        "requestContext": {
            "requestId": "gw-1",
            "authorizer": {"tenantId": tenant, "scopes": "search,ingest"},
        },
        "body": None if body is None else json.dumps(body),
        "isBase64Encoded": False,
    }
    resp = handler.lambda_handler(event, Ctx())
    return resp["statusCode"], json.loads(resp["body"])


def test_add_list_get_delete_text_document(handler: ModuleType) -> None:
    status, doc = call(
        handler,
        "POST",
        "/v1/namespaces/docs/documents",
        {"filename": "notes/pump.md", "text": "# Pump\n\nPrime the pump before use."},
    )
    assert status == 201 and doc["status"] == "ready" and doc["chunkCount"] == 1
    assert doc["documentId"] == "notes/pump.md" and "tenant" not in json.dumps(doc).lower()
    status, listing = call(handler, "GET", "/v1/namespaces/docs/documents")
    assert status == 200 and [d["documentId"] for d in listing["documents"]] == ["notes/pump.md"]
    status, one = call(handler, "GET", "/v1/namespaces/docs/documents/notes%2Fpump.md")
    assert status == 200 and one["contentHash"] == doc["contentHash"]
    status, deleted = call(handler, "DELETE", "/v1/namespaces/docs/documents/notes%2Fpump.md")
    assert status == 200 and deleted["status"] == "deleted" and deleted["chunkCount"] == 0


def test_another_tenant_sees_nothing(handler: ModuleType) -> None:
    call(handler, "POST", "/v1/namespaces/docs/documents", {"filename": "a.txt", "text": "Acme secret."})
    assert call(handler, "GET", "/v1/namespaces/docs/documents", tenant="globex")[1] == {"documents": []}
    status, body = call(handler, "GET", "/v1/namespaces/docs/documents/a.txt", tenant="globex")
    assert status == 404 and body["error"]["code"] == "not_found"
    assert call(handler, "DELETE", "/v1/namespaces/docs/documents/a.txt", tenant="globex")[0] == 404


def test_bad_documents_fail_clearly_and_store_nothing(handler: ModuleType) -> None:
    status, body = call(handler, "POST", "/v1/namespaces/docs/documents", {"filename": "x.exe", "text": "MZ"})
    assert status == 422 and body["error"]["code"] == "unsupported_document"
    status, body = call(handler, "POST", "/v1/namespaces/docs/documents", {"filename": "x.txt"})
    assert status == 400 and body["error"]["code"] == "invalid_request"
    status, body = call(handler, "GET", "/v1/namespaces/nope/documents")
    assert status == 404 and body["error"]["code"] == "namespace_not_found"
    listing = call(handler, "GET", "/v1/namespaces/docs/documents")[1]["documents"]
    assert [(d["documentId"], d["status"]) for d in listing] == [("x.exe", "failed")]
