"""``POST /v1/namespaces/{ns}/documents`` with the same text again costs nothing: the usage report
(``GET /v1/usage``) reads the same after it, and the document is served as before. Text that changed
is charged; a document view names the file sent, never an internal source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragline.wiring import Container
from tests.support.lambda_harness import authorizer_context, call_rest, load_handler
from tests.support.serving import acme_docs

pytestmark = pytest.mark.unit
DOCUMENTS = load_handler("documents")
KEYS = load_handler("keys")
NOTE = {"filename": "notes/pump.md", "text": "# Pump\n\nPrime the pump before use. Open the valve slowly."}


@pytest.fixture
def container(tmp_path: Path) -> Container:
    return acme_docs(tmp_path)


def add(container: Container, body: dict[str, Any]) -> dict[str, Any]:
    status, doc = call_rest(
        DOCUMENTS,
        container,
        "POST",
        "/v1/namespaces/docs/documents",
        resource="/v1/namespaces/{namespace}/documents",
        authorizer=authorizer_context("acme", scopes="ingest"),
        body=body,
    )
    assert status == 201, doc
    return dict(doc)


def ingestion(container: Container) -> dict[str, Any]:
    status, usage = call_rest(
        KEYS, container, "GET", "/v1/usage", resource="/v1/usage", authorizer=authorizer_context("acme")
    )
    assert status == 200, usage
    return dict(usage["ingestion"])


def test_the_same_text_sent_twice_is_charged_once(container: Container) -> None:
    # Given a text document added once
    first = add(container, NOTE)
    once = ingestion(container)
    assert once["documents"] == 1 and once["embeddedTokens"] > 0

    # When the same text is sent again
    again = add(container, NOTE)

    # Then the usage report is the one after the first, and the document is served as it was
    assert ingestion(container) == once
    assert (again["status"], again["chunkCount"], again["contentHash"]) == (
        "ready",
        first["chunkCount"],
        first["contentHash"],
    )
    assert again["serving"] == "this_version"


def test_changed_text_is_charged(container: Container) -> None:
    add(container, NOTE)
    once = ingestion(container)
    add(container, NOTE | {"text": NOTE["text"] + " Drain it before the first frost."})
    twice = ingestion(container)
    assert twice["documents"] == 2 and twice["embeddedTokens"] > once["embeddedTokens"]


def test_a_text_documents_source_is_its_filename(container: Container) -> None:
    doc = add(container, NOTE | {"documentId": "kb-17"})
    assert (doc["documentId"], doc["source"]) == ("kb-17", "notes/pump.md")
