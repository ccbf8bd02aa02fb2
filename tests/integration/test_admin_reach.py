"""Issue 25 #3 and #4: an admin key hands on no more than it holds, and only an unrestricted admin
makes tenant-wide changes — through the services and through the real routes (a key resolved by the
real authorizer, the request answered by the function's handler), on SQLite and DynamoDB (moto).

The tenant: namespace ``main`` is the default, ``docs`` and ``private`` are not.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.aws.tenants import DynamoDbTenantRegistry
from ragline.cli.serve import LambdaContext
from ragline.config import Settings
from ragline.domain.api import NamespacePatch, NewKey, NewNamespace
from ragline.services.authentication import Principal
from ragline.services.namespaces import claim_embedding_space, new_namespace
from ragline.wiring import Container
from tests.support.cfn_tables import create_table_from_template
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import call_rest, load_handler

pytestmark = pytest.mark.integration
ARN = "arn:aws:execute-api:us-east-1:123456789012:abc123/dev/{method}{path}"
AUTHORIZER = load_handler("authorizer")
KEYS = load_handler("keys")
NAMESPACES = load_handler("namespaces")


@pytest.fixture(params=["sqlite", "dynamodb"])
def c(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Container]:
    parts: dict[str, Any] = {"embedder": BowEmbedder(), "tokenizer": BowEmbedder()}
    table = ""
    if request.param == "dynamodb":
        client = request.getfixturevalue("dynamodb_client")
        table = create_table_from_template(client, "TenantsTable", f"tenants-{uuid.uuid4().hex}")
        parts["registry"] = DynamoDbTenantRegistry(table, client=client)
    container = Container(Settings(home=tmp_path), **parts)
    container.tenancy.create_tenant("acme")
    container.registry.create_namespace(new_namespace("acme", "main", default=True))
    for ns in ("docs", "private"):
        container.registry.create_namespace(new_namespace("acme", ns))
    yield container
    if table:
        request.getfixturevalue("dynamodb_client").delete_table(TableName=table)


def admin(namespaces: tuple[str, ...] = (), scopes: tuple[str, ...] = ("admin",)) -> Principal:
    return Principal(tenant_id="acme", scopes=frozenset(scopes), namespaces=frozenset(namespaces))


def key(c: Container, scopes: list[str], namespaces: list[str] | None = None) -> str:
    return c.tenancy.create_key("acme", scopes=scopes, namespaces=namespaces or [])[0]


def call(c: Container, api_key: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """``Authorization: Bearer <api_key>`` through the real authorizer, then the route's handler."""
    event = {
        "type": "REQUEST",
        "methodArn": ARN.format(method=method, path=path),
        "headers": {"Authorization": f"Bearer {api_key}"},
    }
    context = AUTHORIZER.lambda_handler(event, LambdaContext(), container=c)["context"]
    fn, resource = (KEYS, "/v1/keys") if path == "/v1/keys" else (NAMESPACES, "/v1/namespaces")
    if path.count("/") > 2:
        resource += "/{namespace}"
    return call_rest(fn, c, method, path, resource=resource, authorizer=context, body=body)


def defaults(c: Container) -> list[str]:
    return [n.namespace_id for n in c.registry.list_namespaces("acme") if n.default]


# -- 3: issuance never widens ---------------------------------------------------------------------
WIDER = [["search"], ["chat"], ["ingest"], ["chat", "search", "ingest", "admin"]]


@pytest.mark.parametrize("scopes", WIDER)
@pytest.mark.parametrize("allow_list", [(), ("docs",)])
def test_an_admin_only_key_mints_no_scope_it_lacks(
    c: Container, scopes: list[str], allow_list: tuple[str, ...]
) -> None:
    # Given a key with only the admin scope (unrestricted, or allow-listed to docs)
    before = len(c.tenancy.list_keys("acme"))
    # When it asks for a key with a scope it does not hold (inside its own namespaces)
    body = NewKey(name="x", scopes=scopes, namespaces=list(allow_list))  # type: ignore[arg-type]
    with pytest.raises(errors.Forbidden) as refused:
        c.tenancy.issue_key(admin(allow_list), body)
    # Then 403, naming the scopes it lacks, and no key exists
    assert refused.value.details["scopes"] == sorted(set(scopes) - {"admin"})
    assert len(c.tenancy.list_keys("acme")) == before


@pytest.mark.parametrize("scopes", WIDER)
@pytest.mark.parametrize("allow_list", [[], ["docs"]])
def test_over_http_an_admin_only_key_mints_no_scope_it_lacks(
    c: Container, scopes: list[str], allow_list: list[str]
) -> None:
    issuer = key(c, ["admin"], allow_list)
    before = len(c.tenancy.list_keys("acme"))
    status, body = call(c, issuer, "POST", "/v1/keys", {"scopes": scopes, "namespaces": allow_list})
    assert status == 403 and body["error"]["code"] == "forbidden", body
    assert "does not hold" in body["error"]["message"]
    assert len(c.tenancy.list_keys("acme")) == before


def test_over_http_an_admin_hands_on_what_it_holds_and_no_more(c: Container) -> None:
    # Given an admin+search key allow-listed to docs and private
    issuer = key(c, ["admin", "search"], ["docs", "private"])
    # When it mints a search key for docs, or an admin key for private: Then 201, within its reach
    status, made = call(c, issuer, "POST", "/v1/keys", {"scopes": ["search"], "namespaces": ["docs"]})
    assert status == 201 and (made["scopes"], made["namespaces"]) == (["search"], ["docs"])
    status, made = call(c, issuer, "POST", "/v1/keys", {"scopes": ["admin"], "namespaces": ["private"]})
    assert status == 201 and made["scopes"] == ["admin"]
    # When it asks for every namespace, or chat: Then 403
    status, body = call(c, issuer, "POST", "/v1/keys", {"scopes": ["search"]})
    assert status == 403 and body["error"]["details"]["allowed"] == ["docs", "private"]
    status, body = call(c, issuer, "POST", "/v1/keys", {"scopes": ["chat"], "namespaces": ["docs"]})
    assert status == 403 and body["error"]["details"]["scopes"] == ["chat"]


# -- 4: tenant-wide changes need an unrestricted admin --------------------------------------------
def test_an_allow_listed_admin_creates_no_namespace(c: Container) -> None:
    for default in (True, False):
        with pytest.raises(errors.Forbidden):
            c.namespaces.create(
                admin(("docs",)),
                NewNamespace.model_validate({"namespaceId": f"new{int(default)}", "default": default}),
            )
    assert [n.namespace_id for n in c.registry.list_namespaces("acme")] == ["docs", "main", "private"]
    assert defaults(c) == ["main"]


def test_over_http_an_allow_listed_admin_cannot_create_a_second_default(c: Container) -> None:
    # Given an all-scope admin key allow-listed to docs
    issuer = key(c, ["chat", "search", "ingest", "admin"], ["docs"])
    # When it creates a default namespace: Then 403, and main is still the tenant's only default
    status, body = call(c, issuer, "POST", "/v1/namespaces", {"namespaceId": "mine", "default": True})
    assert status == 403 and body["error"]["code"] == "forbidden", body
    assert defaults(c) == ["main"]
    with pytest.raises(errors.NamespaceNotFound):
        c.registry.get_namespace("acme", "mine")


def test_over_http_an_allow_listed_admin_changes_its_own_namespace_but_not_the_default(c: Container) -> None:
    issuer = key(c, ["admin"], ["docs", "main"])
    # its own namespace's description and settings: yes
    status, view = call(
        c, issuer, "PATCH", "/v1/namespaces/docs", {"description": "manuals", "systemPrompt": "Be brief."}
    )
    assert status == 200 and (view["description"], view["systemPrompt"]) == ("manuals", "Be brief.")
    # moving or clearing the default, or deleting the default: no
    for method, path, body in (
        ("PATCH", "/v1/namespaces/docs", {"default": True}),
        ("PATCH", "/v1/namespaces/main", {"default": False}),
        ("DELETE", "/v1/namespaces/main", None),
    ):
        status, refused = call(c, issuer, method, path, body)
        assert status == 403 and refused["error"]["code"] == "forbidden", (method, path, refused)
    assert defaults(c) == ["main"]
    # restating the default it already has changes nothing and is allowed
    assert call(c, issuer, "PATCH", "/v1/namespaces/main", {"default": True})[0] == 200
    # deleting its own non-default namespace: yes
    assert call(c, issuer, "DELETE", "/v1/namespaces/docs")[0] == 200


def test_an_unrestricted_admin_moves_the_default_and_the_tenant_keeps_one(c: Container) -> None:
    everything = admin()
    c.namespaces.create(everything, NewNamespace.model_validate({"namespaceId": "fresh", "default": True}))
    assert defaults(c) == ["fresh"]
    c.namespaces.update(everything, "docs", NamespacePatch(default=True))
    assert defaults(c) == ["docs"]
    c.namespaces.update(everything, "docs", NamespacePatch(default=False))
    assert defaults(c) == []


def test_over_http_a_new_default_takes_over_from_the_old(c: Container) -> None:
    issuer = key(c, ["admin"])
    status, _ = call(c, issuer, "POST", "/v1/namespaces", {"namespaceId": "fresh", "default": True})
    assert status == 201 and defaults(c) == ["fresh"]
    status, _ = call(c, issuer, "PATCH", "/v1/namespaces/private", {"default": True})
    assert status == 200 and defaults(c) == ["private"]


def test_a_settings_write_racing_a_move_of_the_default_leaves_one_default(c: Container) -> None:
    # Given the default "main" read by a first ingest that is about to record its embedding space
    stale = c.registry.get_namespace("acme", "main")
    # When the default moves to "docs" meanwhile, and then that ingest writes what it read
    c.namespaces.update(admin(), "docs", NamespacePatch(default=True))
    claim_embedding_space(c.registry, stale, BowEmbedder())
    # Then the tenant still has exactly one default, and the claim was recorded
    assert len(defaults(c)) == 1
    assert c.registry.get_namespace("acme", "main").settings.embedding_model
