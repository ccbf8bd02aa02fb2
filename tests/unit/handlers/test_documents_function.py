"""The documents API handler: list, inspect, add text, delete — scoped to the authorizer's tenant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragline.config import Settings
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import authorizer_context, call_rest, load_handler

pytestmark = pytest.mark.unit
HANDLER = load_handler("documents")


@pytest.fixture
def container(tmp_path: Path) -> Container:
    c = Container(Settings(home=tmp_path), embedder=BowEmbedder(), tokenizer=BowEmbedder())
    for tenant in ("acme", "globex"):
        c.registry.create_namespace(new_namespace(tenant, "docs"))
    return c


def call(
    container: Container, method: str, path: str, body: Any = None, tenant: str = "acme"
) -> tuple[int, Any]:
    resource = "/v1/namespaces/{namespace}/documents" + ("/{document_id}" if path.count("/") > 4 else "")
    return call_rest(
        HANDLER,
        container,
        method,
        path,
        resource=resource,
        authorizer=authorizer_context(tenant, scopes="search,ingest"),
        body=body,
    )


def test_add_list_get_delete_text_document(container: Container) -> None:
    status, doc = call(
        container,
        "POST",
        "/v1/namespaces/docs/documents",
        {"filename": "notes/pump.md", "text": "# Pump\n\nPrime the pump before use."},
    )
    assert status == 201 and doc["status"] == "ready" and doc["chunkCount"] == 1
    assert doc["documentId"] == "notes/pump.md" and "tenant" not in json.dumps(doc).lower()
    status, listing = call(container, "GET", "/v1/namespaces/docs/documents")
    assert status == 200 and [d["documentId"] for d in listing["documents"]] == ["notes/pump.md"]
    status, one = call(container, "GET", "/v1/namespaces/docs/documents/notes%2Fpump.md")
    assert status == 200 and one["contentHash"] == doc["contentHash"]
    status, deleted = call(container, "DELETE", "/v1/namespaces/docs/documents/notes%2Fpump.md")
    assert status == 200 and deleted["status"] == "deleted" and deleted["documentId"] == "notes/pump.md"
    assert deleted["document"]["status"] == "deleted" and deleted["document"]["chunkCount"] == 0


def test_another_tenant_sees_nothing(container: Container) -> None:
    call(container, "POST", "/v1/namespaces/docs/documents", {"filename": "a.txt", "text": "Acme secret."})
    assert call(container, "GET", "/v1/namespaces/docs/documents", tenant="globex")[1] == {"documents": []}
    status, body = call(container, "GET", "/v1/namespaces/docs/documents/a.txt", tenant="globex")
    assert status == 404 and body["error"]["code"] == "not_found"
    assert call(container, "DELETE", "/v1/namespaces/docs/documents/a.txt", tenant="globex")[0] == 404


def test_bad_documents_fail_clearly_and_store_nothing(container: Container) -> None:
    status, body = call(
        container, "POST", "/v1/namespaces/docs/documents", {"filename": "x.exe", "text": "MZ"}
    )
    assert status == 422 and body["error"]["code"] == "unsupported_document"
    status, body = call(container, "POST", "/v1/namespaces/docs/documents", {"filename": "x.txt"})
    assert status == 400 and body["error"]["code"] == "invalid_request"
    status, body = call(
        container,
        "POST",
        "/v1/namespaces/docs/documents",
        {"filename": "y.txt", "text": "hi", "tenantId": "globex"},
    )
    assert status == 400 and body["error"]["code"] == "invalid_request"  # unknown fields are refused
    status, body = call(container, "GET", "/v1/namespaces/nope/documents")
    assert status == 404 and body["error"]["code"] == "namespace_not_found"
    listing = call(container, "GET", "/v1/namespaces/docs/documents")[1]["documents"]
    assert [(d["documentId"], d["status"]) for d in listing] == [("x.exe", "failed")]


@pytest.mark.parametrize("document_id", ["x" * 241, "x" * 600, "x" * 1100, "a b", "a#1", "", "é"])
def test_an_unusable_document_id_is_a_400_and_nothing_is_stored(
    container: Container, document_id: str
) -> None:
    """Issue 11 #9: 600 bytes broke OpenSearch's `_id` (502), 1,100 DynamoDB's key (502)."""
    body = {"filename": "n.md", "text": "# N\n\nSome text.", "documentId": document_id}
    status, error = call(container, "POST", "/v1/namespaces/docs/documents", body)
    assert status == 400 and error["error"]["code"] == "invalid_request"
    assert call(container, "GET", "/v1/namespaces/docs/documents")[1]["documents"] == []


def test_the_longest_document_id_is_accepted(container: Container) -> None:
    body = {"filename": "n.md", "text": "# N\n\nSome text.", "documentId": "d/" + "x" * 238}
    status, doc = call(container, "POST", "/v1/namespaces/docs/documents", body)
    assert status == 201 and doc["documentId"] == "d/" + "x" * 238 and doc["chunkCount"] == 1
