"""A tenant suspended or deleted while API Gateway still caches its authorizer answer (issue 25 #5).

API Gateway keeps the authorizer's context for up to 300 s. Given a tenant's admin context taken
from the real authorizer while the tenant was active, when the tenant is deleted (or suspended), then
that cached context can neither write (create a namespace, add a document, mint a key) nor run
(search, hosting search, chat): each is refused as the authorizer refuses the tenant, and nothing is
stored — on the embedded backend and on DynamoDB (moto).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from ragline import errors
from ragline.adapters.aws.documents import DynamoDbDocumentRegistry
from ragline.adapters.aws.ledger import DynamoDbUsageLedger
from ragline.adapters.aws.tenants import DynamoDbTenantRegistry
from ragline.cli.serve import LambdaContext
from ragline.config import Settings
from ragline.domain.models import TenantScope
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.cfn_tables import create_table_from_template
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import call_rest, chat_client, chat_headers, load_handler
from tests.support.moto_server import REGION

pytestmark = pytest.mark.e2e
NS = "/v1/namespaces/{namespace}"
TEXT = {"filename": "x.txt", "text": "hi"}
ASK = {"messages": [{"role": "user", "content": "rocket?"}], "stream": False}
# (function, method, path, resource, body): every write and every run a cached context could try.
WRITES_AND_RUNS = [
    ("namespaces", "POST", "/v1/namespaces", "/v1/namespaces", {"namespaceId": "docs", "default": True}),
    ("documents", "POST", "/v1/namespaces/docs/documents", NS + "/documents", TEXT),
    ("keys", "POST", "/v1/keys", "/v1/keys", {"scopes": ["admin", "search", "chat", "ingest"]}),
    ("search", "POST", "/v1/namespaces/docs/search", NS + "/search", {"query": "rocket"}),
    (
        "hosting_search",
        "POST",
        "/v1/hosting-search",
        "/v1/hosting-search",
        {"query": "rocket?", "namespaces": ["docs"]},
    ),
    ("chat", "POST", "/v1/chat", "/v1/chat", ASK),
]  # fmt: skip
FUNCTIONS = {name: load_handler(name) for name in ("authorizer", *{r[0] for r in WRITES_AND_RUNS})}


def embedded(tmp_path: Path) -> Container:
    return Container(Settings(home=tmp_path), embedder=BowEmbedder(), tokenizer=BowEmbedder())


@pytest.fixture(params=["sqlite", "dynamodb"])
def container(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Container]:
    if request.param == "sqlite":
        c = embedded(tmp_path)
    else:  # the registries and the ledger on DynamoDB (moto); chunks and objects stay local
        endpoint = request.getfixturevalue("moto_endpoint")
        request.getfixturevalue("moto_aws_env")
        ddb = boto3.session.Session(region_name=REGION).client("dynamodb", endpoint_url=endpoint)
        suffix = uuid.uuid4().hex[:8]
        tables = {
            logical: create_table_from_template(ddb, logical, f"{logical}-{suffix}")
            for logical in ("TenantsTable", "DocumentsTable", "UsageTable")
        }
        c = Container(
            Settings(home=tmp_path),
            registry=DynamoDbTenantRegistry(tables["TenantsTable"], client=ddb),
            documents=DynamoDbDocumentRegistry(tables["DocumentsTable"], client=ddb),
            ledger=DynamoDbUsageLedger(tables["UsageTable"], client=ddb),
            embedder=BowEmbedder(),
            tokenizer=BowEmbedder(),
        )
    yield c
    c.close()


def cached_admin_context(c: Container) -> dict[str, Any]:
    """Given an active tenant with a namespace and a document, its admin key's authorizer answer."""
    c.tenancy.create_tenant("acme")
    c.registry.create_namespace(new_namespace("acme", "docs", default=True))
    c.ingest.ingest(
        TenantScope(tenant_id="acme", namespace_id="docs"), filename="a.txt", data=b"Acme rocket."
    )
    key, _ = c.tenancy.create_key("acme", scopes=["chat", "search", "ingest", "admin"])
    event = {
        "type": "REQUEST",
        "methodArn": "arn:aws:execute-api:us-east-1:123456789012:abc123/dev/POST/v1/namespaces",
        "headers": {"Authorization": f"Bearer {key}"},
    }
    answer = FUNCTIONS["authorizer"].lambda_handler(event, LambdaContext(), container=c)
    return dict(answer["context"])


def call(c: Container, context: dict[str, Any], route: tuple[str, str, str, str, Any]) -> tuple[int, Any]:
    fn, method, path, resource, body = route
    if fn == "chat":
        with chat_client(FUNCTIONS["chat"], c) as client:
            resp = client.post(path, json=body, headers=chat_headers(context))
        return resp.status_code, resp.json()
    return call_rest(FUNCTIONS[fn], c, method, path, resource=resource, authorizer=context, body=body)


def test_a_deleted_tenants_cached_context_can_neither_write_nor_run(container: Container) -> None:
    context = cached_admin_context(container)
    container.tenant_deletion.delete("acme")  # When the tenant is deleted while its answer is cached

    for route in WRITES_AND_RUNS:  # Then every write and every run is refused as the authorizer would
        status, body = call(container, context, route)
        assert (status, body["error"]["code"]) == (401, "unauthorized"), (route[0], status, body)
    # and nothing was stored: no namespace came back, no key was minted, no run was recorded
    assert container.registry.list_namespaces("acme") == []
    assert container.registry.list_api_keys("acme") == []
    with pytest.raises(errors.NotFound):
        container.registry.get_namespace("acme", "docs")


def test_a_suspended_tenants_cached_context_can_neither_write_nor_run(container: Container) -> None:
    context = cached_admin_context(container)
    container.tenancy.set_status("acme", "suspended")

    for route in WRITES_AND_RUNS:
        status, body = call(container, context, route)
        assert (status, body["error"]["code"]) == (401, "unauthorized"), (route[0], status, body)
    assert [k.key_id for k in container.registry.list_api_keys("acme")] == [context["keyId"]]
    assert [d.document_id for d in container.documents.list("acme", "docs")] == ["a.txt"]
