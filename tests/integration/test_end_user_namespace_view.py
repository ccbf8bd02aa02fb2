"""Issue 37 #10: a namespace's view never counts, for an end user, documents it may not read.

A rebuild's progress (``documentsDone`` / ``documentsTotal``) counts every document of the namespace,
and its ``error`` may be about any of them; so a request acting for an end user sees the namespace
without its ``rebuild`` — while it is built and after the switch — through ``GET /v1/namespaces/{ns}``,
the listing and the MCP namespace resource, and the SaaS's own key still sees the whole of it. On the
SQLite and DynamoDB (moto) tenant registries, which hold the namespace and its rebuild.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.aws.tenants import DynamoDbTenantRegistry
from ragline.adapters.embedded.step_queue import InlineStepQueue
from ragline.cli.mcp import read_namespace
from ragline.config import Settings
from ragline.domain.document_metadata import MetadataInput
from ragline.domain.models import TenantScope
from ragline.domain.tenancy import ALL_SCOPES
from ragline.services.authentication import Principal, with_asserted_user
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.cfn_tables import create_table_from_template
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import call_rest, load_handler

pytestmark = pytest.mark.integration
NAMESPACES = load_handler("namespaces")
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
ALICE = {"Ragline-User-Id": "alice"}


@pytest.fixture(params=["sqlite", "dynamodb"])
def c(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Container]:
    """Given namespace ``docs`` with six documents, one open to everyone and five only bob reads."""
    parts: dict[str, Any] = {"embedder": BowEmbedder(), "tokenizer": BowEmbedder()}
    table = ""
    if request.param == "dynamodb":
        client = request.getfixturevalue("dynamodb_client")
        table = create_table_from_template(client, "TenantsTable", f"tenants-{uuid.uuid4().hex}")
        parts["registry"] = DynamoDbTenantRegistry(table, client=client)
    container = Container(
        Settings(home=tmp_path, reindex_step_documents=2), step_queue=InlineStepQueue(), **parts
    )
    container.tenancy.create_tenant("acme")
    container.registry.create_namespace(new_namespace("acme", "docs", default=True))
    container.ingest.ingest(SCOPE, filename="open.txt", data=b"The rocket manual, for all.")
    for i in range(5):
        container.ingest.ingest(
            SCOPE,
            filename=f"bob{i}.txt",
            data=f"Bob's note {i}.".encode(),
            metadata=MetadataInput(users=["bob"]),
        )
    yield container
    container.close()
    if table:
        request.getfixturevalue("dynamodb_client").delete_table(TableName=table)


def context(c: Container, **rights: bool) -> dict[str, str]:
    """The authorizer's answer for a new key holding every scope."""
    plaintext = c.tenancy.create_key("acme", scopes=list(ALL_SCOPES), **rights)[0]
    return c.tenancy.authenticate(f"Bearer {plaintext}").to_context()


def get(c: Container, authorizer: dict[str, str], path: str, **headers: str) -> Any:
    resource = "/v1/namespaces/{namespace}" if path.count("/") > 2 else "/v1/namespaces"
    status, body = call_rest(
        NAMESPACES, c, "GET", path, resource=resource, authorizer=authorizer, headers=headers
    )
    assert status == 200, body
    return body


def run_steps(c: Container, count: int | None = None) -> None:
    """Run queued build steps (``count`` of them, else all); the delayed retire step is left."""
    queue = c.step_queue
    assert isinstance(queue, InlineStepQueue)
    while count != 0 and (item := queue.take()) is not None:
        step, _ = item
        if step.kind != "retire":
            c.reindex.run(step)
            count = None if count is None else count - 1


def views(c: Container, authorizer: dict[str, str], **headers: str) -> list[Any]:
    """The namespace as the route, the listing and the MCP resource show it."""
    principal = with_asserted_user(Principal.from_context(authorizer), headers)
    return [
        get(c, authorizer, "/v1/namespaces/docs", **headers),
        get(c, authorizer, "/v1/namespaces", **headers)["namespaces"][0],
        read_namespace(c, principal, "docs"),
    ]


def test_an_end_user_never_sees_a_rebuilds_counts(c: Container) -> None:
    saas, asserting = context(c), context(c, assert_user=True)
    reindex = "/v1/namespaces/{namespace}/reindex"
    status, _ = call_rest(
        NAMESPACES, c, "POST", "/v1/namespaces/docs/reindex", resource=reindex, authorizer=saas, body={}
    )
    assert status == 202
    run_steps(c, count=1)  # mid-build: two of six done

    # while it is built, and after the switch
    for finish in (False, True):
        if finish:
            run_steps(c)
        for view in views(c, asserting, **ALICE):
            assert view["rebuild"] is None
            assert "documentsTotal" not in str(view)
        assert views(c, asserting, **ALICE)[2]["documentCount"] == 1  # what alice may read
        for view in views(c, saas) + views(c, asserting):  # the SaaS itself: the whole rebuild
            assert view["rebuild"]["documentsTotal"] == 6
            assert view["rebuild"]["state"] == ("ready" if finish else "building")
