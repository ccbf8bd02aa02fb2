"""Issue 37 #11: a request acting for an end user is a reader, whatever made it one.

Every route of the API (read from ``docs/openapi.json``, so a new route is covered the day it is
documented) is called through ``ragline serve --api-keys`` — the real key check and handlers — by three
kinds of end-user requests: an ``assertUser`` key holding every scope that names the user in
``Ragline-User-Id``, a ``requireUser`` key, and the tenant's identity provider's token. A route that
manages the tenant (keys, usage, webhooks, the identity provider, creating, changing, reindexing or
deleting namespaces) answers each with one 403 ``user_context_forbidden`` and changes nothing; the
routes an end user reads and writes documents by never answer it. Only the routes listed in
``END_USER_ROUTES`` are an end user's: every other documented route is management, so a new one is
refused unless it is deliberately made a reader's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from ragline.adapters.embedded.step_queue import InlineStepQueue
from ragline.cli.serve import build_app
from ragline.domain.access import UserContext
from ragline.domain.api import AddText, ChatRequest
from ragline.domain.document_metadata import MetadataInput
from ragline.domain.evaluations import EvaluationRequest
from ragline.domain.identity import IdentityProvider
from ragline.domain.models import TenantScope
from ragline.domain.source_api import NewSource
from ragline.domain.tenancy import ALL_SCOPES
from ragline.domain.webhook_api import NewWebhook
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.identity_tokens import SigningKey, claims
from tests.support.lambda_harness import FUNCTIONS
from tests.support.serving import embedded_container

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]
CODE = "user_context_forbidden"
ISSUER = "https://idp.acme.test/"
IDP_KEY = SigningKey("acme-reach")
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")

END_USER_ROUTES = {
    ("POST", "/v1/chat"),
    ("POST", "/v1/hosting-search"),
    ("POST", "/v1/namespaces/{namespace}/search"),
    ("GET", "/v1/namespaces"),
    ("GET", "/v1/namespaces/{namespace}"),
    ("GET", "/v1/namespaces/{namespace}/documents"),
    ("POST", "/v1/namespaces/{namespace}/documents"),
    ("GET", "/v1/namespaces/{namespace}/documents/{document_id}"),
    ("PATCH", "/v1/namespaces/{namespace}/documents/{document_id}"),
    ("DELETE", "/v1/namespaces/{namespace}/documents/{document_id}"),
    ("GET", "/v1/runs/{run_id}"),
    ("GET", "/v1/runs/{run_id}/events"),
    ("POST", "/v1/runs/{run_id}/cancel"),
    ("GET", "/v1/conversations"),
    ("GET", "/v1/conversations/{conversation_id}"),
    ("DELETE", "/v1/conversations/{conversation_id}"),
}
"""The routes a request acting for an end user may use: it reads (and, with ``ingest``, writes) the
documents it may read, reads its namespaces' settings, and reads, cancels and deletes its own runs and
conversations (tests/e2e/test_resumable_runs.py and test_conversations.py: nobody else's). Evaluation
jobs are the tenant's developers' (tests/e2e/test_evaluations_http.py): an end user's request is refused
there as on a route that manages the tenant."""

BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/v1/chat"): {"messages": [{"role": "user", "content": "rocket?"}], "stream": False},
    ("POST", "/v1/hosting-search"): {"query": "rocket"},
    ("POST", "/v1/namespaces/{namespace}/search"): {"query": "rocket"},
    ("POST", "/v1/namespaces/{namespace}/documents"): {"filename": "mine.txt", "text": "My rocket."},
    ("PATCH", "/v1/namespaces/{namespace}/documents/{document_id}"): {"metadata": {"team": "eng"}},
    ("POST", "/v1/keys"): {"scopes": ["search"]},
    ("POST", "/v1/namespaces"): {"namespaceId": "fresh"},
    ("PATCH", "/v1/namespaces/{namespace}"): {"description": "renamed by a user"},
    ("POST", "/v1/namespaces/{namespace}/reindex"): {},
    ("PUT", "/v1/tenant/identity-provider"): {
        "issuer": "https://other-idp.acme.test/",
        "audiences": ["app"],
        "jwks": [IDP_KEY.jwk],
    },
    ("POST", "/v1/webhooks"): {"url": "https://hooks.example.com/ragline"},
    ("POST", "/v1/namespaces/{namespace}/sources"): {
        "kind": "web",
        "web": {"seeds": ["https://example.com/"]},
    },
    ("PATCH", "/v1/namespaces/{namespace}/sources/{source_id}"): {"name": "renamed by a user"},
    ("POST", "/v1/namespaces/{namespace}/sources/{source_id}/sync"): {},
    ("POST", "/v1/evaluations"): {"questions": [{"id": "q", "question": "rocket?"}]},
}
"""A valid body for each route that takes one (the refusal must not hide behind a 400)."""


def documented_routes() -> list[tuple[str, str]]:
    document = json.loads((ROOT / "docs" / "openapi.json").read_text())
    methods = {"get", "post", "put", "patch", "delete"}
    return sorted(
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
        if method in methods
    )


ROUTES = documented_routes()
MANAGEMENT = [route for route in ROUTES if route not in END_USER_ROUTES]
KINDS = ["asserted", "required", "token"]


class World:
    """Given tenant acme with namespace ``docs`` (one document open to all, one only bob reads), a
    webhook, an identity provider and keys of each kind; each kind of end-user request as headers."""

    def __init__(self, c: Container) -> None:
        self.c = c
        c.tenancy.create_tenant("acme")
        c.registry.create_namespace(new_namespace("acme", "docs", default=True))
        c.registry.create_namespace(new_namespace("acme", "spare"))
        c.registry.create_namespace(new_namespace("acme", "feeds"))  # the data sources' (spare is deleted)
        c.ingest.ingest(SCOPE, filename="open.txt", data=b"Acme rocket manual.")
        c.ingest.ingest(
            SCOPE, filename="bobs.txt", data=b"Bob's rocket notes.", metadata=MetadataInput(users=["bob"])
        )
        operator = Principal.operator("acme")
        self.webhook = c.webhooks.create(operator, NewWebhook(url="https://hooks.example.com/a")).webhook_id
        web = NewSource.model_validate({"kind": "web", "web": {"seeds": ["https://example.com/"]}})
        self.source = c.source_service.create(operator, "feeds", web).source_id
        c.registry.put_identity_provider(
            "acme", IdentityProvider(issuer=ISSUER, audiences=("app",), jwks=(IDP_KEY.jwk,))
        )
        self.asserting = c.tenancy.create_key("acme", scopes=list(ALL_SCOPES), assert_user=True)[0]
        self.requiring, record = c.tenancy.create_key(
            "acme", scopes=["chat", "search", "ingest"], require_user=True
        )
        self.key_id = record.key_id
        alice = Principal(
            tenant_id="acme", scopes=frozenset({"chat"}), user=UserContext("alice", frozenset({"eng"}))
        )
        ask = ChatRequest.model_validate(
            {"messages": [{"role": "user", "content": "rocket?"}], "stream": False}
        )
        final = list(c.chat.answer_chat(alice, ask))[-1]  # alice's run and conversation
        assert final.type == "final" and final.conversation_id
        self.run, self.conversation = final.run_id, final.conversation_id
        job = EvaluationRequest.model_validate({"questions": [{"id": "q", "question": "rocket?"}]})
        self.evaluation = c.evaluations.run(operator, job).evaluation.evaluation_id  # the tenant's own

    def headers(self, kind: str) -> dict[str, str]:
        user = {"Ragline-User-Id": "alice", "Ragline-User-Groups": "eng"}
        if kind == "asserted":
            return {"Authorization": f"Bearer {self.asserting}", **user}
        if kind == "required":
            return {"Authorization": f"Bearer {self.requiring}", **user}
        token = IDP_KEY.token(claims(ISSUER, user="alice", groups=["eng"]))
        return {"Authorization": f"Bearer {token}"}

    def path(self, route: tuple[str, str]) -> str:
        """The route's path: an end user's in ``docs``; a management route's in the empty ``spare``
        (deleting ``docs``, the default holding documents, would be refused for other reasons)."""
        namespace = "docs" if route in END_USER_ROUTES else "feeds" if "/sources" in route[1] else "spare"
        return (
            route[1]
            .replace("{namespace}", namespace)
            .replace("{document_id}", "open.txt")
            .replace("{key_id}", self.key_id)
            .replace("{webhook_id}", self.webhook)
            .replace("{source_id}", self.source)
            .replace("{run_id}", self.run)
            .replace("{conversation_id}", self.conversation)
            .replace("{evaluation_id}", self.evaluation)
        )

    def state(self) -> Any:
        """Everything a management route could change."""
        c = self.c
        return (
            [(k.key_id, k.active) for k in c.tenancy.list_keys("acme")],
            [n.model_dump(mode="json") for n in c.registry.list_namespaces("acme")],
            c.registry.get_identity_provider("acme"),
            [(w.id, w.secret) for w in c.webhook_store.list("acme")],
            [(r.source_id, r.name, r.removing) for r in c.sources.list("acme", "feeds")],
            len(c.step_queue.steps),  # type: ignore[attr-defined]
        )


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[World, TestClient]]:
    # steps are kept, not run: a data source's sync would reach its (made-up) site
    c = embedded_container(tmp_path, step_queue=InlineStepQueue())
    app = build_app(FUNCTIONS, "local", c, api_keys=True)
    with TestClient(app, base_url="http://localhost") as client:
        yield World(c), client
    c.close()


def call(world: World, client: TestClient, route: tuple[str, str], headers: dict[str, str]) -> Any:
    return client.request(route[0], world.path(route), headers=headers, json=BODIES.get(route))


def test_every_route_that_takes_a_body_has_one_here_and_every_reader_route_is_documented() -> None:
    document = json.loads((ROOT / "docs" / "openapi.json").read_text())
    with_body = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        if isinstance(operation, dict) and "requestBody" in operation
    }
    assert with_body == set(BODIES)
    assert set(ROUTES) >= END_USER_ROUTES
    assert AddText.model_validate(BODIES[("POST", "/v1/namespaces/{namespace}/documents")])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("route", MANAGEMENT, ids=lambda r: f"{r[0]} {r[1]}")
def test_a_request_acting_for_an_end_user_manages_nothing(
    world: tuple[World, TestClient], route: tuple[str, str], kind: str
) -> None:
    w, client = world
    before = w.state()
    response = call(w, client, route, w.headers(kind))
    assert response.status_code == 403, response.text
    assert response.json()["error"]["code"] == CODE
    assert w.state() == before


@pytest.mark.parametrize("route", MANAGEMENT, ids=lambda r: f"{r[0]} {r[1]}")
def test_the_same_key_without_a_user_manages_the_tenant(
    world: tuple[World, TestClient], route: tuple[str, str]
) -> None:
    """The refusal is the user context's: the asserting key, naming no one, is the SaaS's admin."""
    w, client = world
    response = call(w, client, route, {"Authorization": f"Bearer {w.asserting}"})
    assert response.status_code < 300, response.text


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("route", sorted(END_USER_ROUTES), ids=lambda r: f"{r[0]} {r[1]}")
def test_an_end_user_reads_and_writes_its_documents(
    world: tuple[World, TestClient], route: tuple[str, str], kind: str
) -> None:
    w, client = world
    response = call(w, client, route, w.headers(kind))
    if kind == "token" and route[0] != "GET" and "documents" in route[1]:
        # the provider grants chat and search only: ingest is a scope refusal, not the user's
        assert (response.status_code, response.json()["error"]["code"]) == (403, "forbidden")
        return
    assert response.status_code < 300, response.text


def test_a_key_that_must_act_for_an_end_user_cannot_hold_admin(tmp_path: Path) -> None:
    """Its admin scope could never be used: refused when the key is made, through the API and the
    service the CLI calls."""
    c = embedded_container(tmp_path)
    c.tenancy.create_tenant("acme")
    admin = c.tenancy.create_key("acme", scopes=list(ALL_SCOPES))[0]
    with TestClient(build_app(FUNCTIONS, "local", c, api_keys=True), base_url="http://localhost") as client:
        response = client.post(
            "/v1/keys",
            headers={"Authorization": f"Bearer {admin}"},
            json={"scopes": ["admin", "search"], "requireUser": True},
        )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["details"]["field"] == "requireUser"
    assert [k.requires_user for k in c.tenancy.list_keys("acme")] == [False]
    c.close()
