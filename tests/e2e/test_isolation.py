"""Tenant isolation through every route, with real keys through the real authorizer.

Each request goes the way it does in AWS: the authorizer turns ``Authorization: Bearer rl_…`` into a
context, and the route's handler receives a REST proxy event carrying that context. Table-driven over
every route: another tenant's key never reads, searches, chats over, lists or deletes what is not its
own; a revoked key is refused; a key without ``admin`` cannot manage; an allow-list holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.cli.serve import LambdaContext
from ragline.config import Settings
from ragline.domain.models import TenantScope
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import call_rest, chat_client, chat_headers, load_handler

pytestmark = pytest.mark.e2e
ARN = "arn:aws:execute-api:us-east-1:123456789012:abc123/dev/{method}{path}"


class Api:
    def __init__(self, home: Path) -> None:
        c = Container(Settings(home=home), embedder=BowEmbedder(), tokenizer=BowEmbedder())
        self.c = c
        for tenant in ("acme", "globex"):
            c.tenancy.create_tenant(tenant)
            c.registry.create_namespace(new_namespace(tenant, "docs", default=True))
        c.registry.create_namespace(new_namespace("acme", "private"))
        for tenant, ns, text in (
            ("acme", "docs", "Acme rocket plans."),
            ("acme", "private", "Acme payroll."),
            ("globex", "docs", "Globex tulip notes."),
        ):
            c.ingest.ingest(
                TenantScope(tenant_id=tenant, namespace_id=ns),
                filename=f"{tenant}-{ns}.txt",
                data=text.encode(),
            )
        all_scopes = ["chat", "search", "ingest", "admin"]
        self.keys = {
            "acme_admin": c.tenancy.create_key("acme", scopes=all_scopes)[0],
            "acme_reader": c.tenancy.create_key("acme", scopes=["chat", "search"], namespaces=["docs"])[0],
            "globex_admin": c.tenancy.create_key("globex", scopes=all_scopes)[0],
        }
        revoked, record = c.tenancy.create_key("acme", scopes=all_scopes)
        c.tenancy.revoke_key("acme", record.key_id)
        self.keys["revoked"] = revoked
        self.acme_key_id = record.key_id
        self.authorizer = load_handler("authorizer")
        self.fns = {
            name: load_handler(name) for name in ("search", "documents", "namespaces", "keys", "chat")
        }

    def context(self, key: str, method: str, path: str) -> dict[str, Any]:
        """What the real authorizer resolves ``Authorization: Bearer <key>`` to (or raises)."""
        event = {
            "type": "REQUEST",
            "methodArn": ARN.format(method=method, path=path),
            "headers": {"Authorization": f"Bearer {key}"},
        }
        return dict(self.authorizer.lambda_handler(event, LambdaContext(), container=self.c)["context"])

    def call(
        self, key: str, fn: str, method: str, path: str, resource: str, body: Any = None
    ) -> tuple[int, Any]:
        context = self.context(key, method, path)
        if fn == "chat":
            with chat_client(self.fns["chat"], self.c) as client:
                resp = client.post(path, json=body, headers=chat_headers(context))
            return resp.status_code, resp.json()
        return call_rest(self.fns[fn], self.c, method, path, resource=resource, authorizer=context, body=body)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    yield Api(tmp_path_factory.mktemp("iso"))


NS = "/v1/namespaces/{namespace}"
# (function, method, path template, resource, body) — every route that names a namespace.
NAMESPACE_ROUTES = [
    ("search", "POST", NS + "/search", NS + "/search", {"query": "plans payroll rocket"}),
    ("documents", "GET", NS + "/documents", NS + "/documents", None),
    ("documents", "GET", NS + "/documents/acme-private.txt", NS + "/documents/{document_id}", None),
    ("documents", "DELETE", NS + "/documents/acme-private.txt", NS + "/documents/{document_id}", None),
    ("documents", "POST", NS + "/documents", NS + "/documents", {"filename": "x.txt", "text": "hi"}),
    ("namespaces", "GET", NS, NS, None),
    ("namespaces", "PATCH", NS, NS, {"description": "taken over"}),
    ("namespaces", "DELETE", NS, NS, None),
    (
        "chat",
        "POST",
        "/v1/chat",
        "/v1/chat",
        {
            "messages": [{"role": "user", "content": "payroll?"}],
            "namespaces": ["{namespace}"],
            "stream": False,
        },
    ),
]


def fill(value: Any, namespace: str) -> Any:
    return json.loads(json.dumps(value).replace("{namespace}", namespace)) if value is not None else None


@pytest.mark.parametrize(("fn", "method", "path", "resource", "body"), NAMESPACE_ROUTES)
def test_another_tenants_namespace_is_invisible_through_every_route(
    api: Api, fn: str, method: str, path: str, resource: str, body: Any
) -> None:
    status, payload = api.call(
        api.keys["globex_admin"],
        fn,
        method,
        path.replace("{namespace}", "private"),
        resource,
        fill(body, "private"),
    )
    assert status == 404, payload
    assert payload["error"]["code"] == "namespace_not_found"
    assert "payroll" not in json.dumps(payload).lower()
    # and acme's data is untouched
    assert api.c.registry.get_namespace("acme", "private").description == ""
    assert api.c.stores.scoped(TenantScope(tenant_id="acme", namespace_id="private")).count() == 1


def test_same_namespace_name_shows_each_tenant_only_its_own(api: Api) -> None:
    for key, own, other in (("globex_admin", "tulip", "rocket"), ("acme_admin", "rocket", "tulip")):
        status, hits = api.call(
            api.keys[key],
            "search",
            "POST",
            "/v1/namespaces/docs/search",
            NS + "/search",
            {"query": "rocket tulip plans notes"},
        )
        text = json.dumps(hits).lower()
        assert status == 200 and own in text and other not in text
        status, docs = api.call(
            api.keys[key], "documents", "GET", "/v1/namespaces/docs/documents", NS + "/documents"
        )
        assert [d["documentId"] for d in docs["documents"]] == [
            f"{'globex' if own == 'tulip' else 'acme'}-docs.txt"
        ]


def test_another_tenants_key_cannot_be_revoked(api: Api) -> None:
    status, _payload = api.call(
        api.keys["globex_admin"], "keys", "DELETE", f"/v1/keys/{api.acme_key_id}", "/v1/keys/{key_id}"
    )
    assert status == 404
    listing = api.call(api.keys["globex_admin"], "keys", "GET", "/v1/keys", "/v1/keys")[1]["keys"]
    assert api.acme_key_id not in json.dumps(listing)


def test_revoked_and_bogus_keys_are_refused_by_the_authorizer(api: Api) -> None:
    for key in (api.keys["revoked"], "rl_" + "x" * 43, "not-a-key", ""):
        with pytest.raises(Exception, match=r"^Unauthorized$"):
            api.context(key, "POST", "/v1/chat")


@pytest.mark.parametrize(
    ("fn", "method", "path", "resource", "body"),
    [
        ("keys", "GET", "/v1/keys", "/v1/keys", None),
        ("keys", "POST", "/v1/keys", "/v1/keys", {"scopes": ["admin"]}),
        ("namespaces", "POST", "/v1/namespaces", "/v1/namespaces", {"namespaceId": "new"}),
        ("keys", "GET", "/v1/usage", "/v1/usage", None),
        ("keys", "GET", "/v1/tenant/identity-provider", "/v1/tenant/identity-provider", None),
        (
            "keys",
            "PUT",
            "/v1/tenant/identity-provider",
            "/v1/tenant/identity-provider",
            {"issuer": "https://idp.test/", "audiences": ["app"], "jwksUri": "https://idp.test/jwks"},
        ),
        ("keys", "DELETE", "/v1/tenant/identity-provider", "/v1/tenant/identity-provider", None),
    ],
)
def test_a_key_without_admin_cannot_manage(
    api: Api, fn: str, method: str, path: str, resource: str, body: Any
) -> None:
    status, payload = api.call(api.keys["acme_reader"], fn, method, path, resource, body)
    assert status == 403 and payload["error"]["code"] == "forbidden"


@pytest.mark.parametrize(
    ("fn", "method", "path", "resource", "body"), [NAMESPACE_ROUTES[0], NAMESPACE_ROUTES[-1]]
)
def test_a_namespace_outside_the_allow_list_is_refused(
    api: Api, fn: str, method: str, path: str, resource: str, body: Any
) -> None:
    # Given a key allowed only "docs"; When it names another namespace, existing or not,
    # Then both get the same 404 (a 403 for one and a 404 for the other would confirm it exists)
    for outside in ("private", "ghost"):
        status, payload = api.call(
            api.keys["acme_reader"],
            fn,
            method,
            path.replace("{namespace}", outside),
            resource,
            fill(body, outside),
        )
        assert status == 404 and payload["error"]["code"] == "namespace_not_found", (outside, payload)
        assert payload["error"]["message"] == f"namespace {outside!r} does not exist"
    # and the namespace it is allowed answers
    ok, _ = api.call(
        api.keys["acme_reader"], fn, method, path.replace("{namespace}", "docs"), resource, fill(body, "docs")
    )
    assert ok == 200


def test_admin_creates_a_key_that_works_once_shown(api: Api) -> None:
    status, created = api.call(
        api.keys["acme_admin"], "keys", "POST", "/v1/keys", "/v1/keys", {"name": "ci", "scopes": ["search"]}
    )
    assert status == 201 and created["apiKey"].startswith("rl_")
    listing = api.call(api.keys["acme_admin"], "keys", "GET", "/v1/keys", "/v1/keys")[1]
    assert created["apiKey"] not in json.dumps(listing)
    assert api.context(created["apiKey"], "POST", "/v1/namespaces/docs/search")["tenantId"] == "acme"
