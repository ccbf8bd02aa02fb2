"""End users (issue 29 #3): a key with the right names the user in ``Ragline-User-Id`` /
``Ragline-User-Groups``; a tenant identity provider's token is its user. Through the real authorizer
and handlers (REST and chat), with the authorizer's answer reused as API Gateway caches it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.domain.access import UserContext
from ragline.domain.identity import IdentityProvider
from ragline.domain.models import TenantScope
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from tests.support.cfn_tables import load_template
from tests.support.identity_tokens import SigningKey, claims
from tests.support.lambda_harness import call_rest, chat_client, chat_headers, load_handler
from tests.support.serving import Seen, embedded_container

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]
ISSUER = "https://idp.acme.test/"
IDP_KEY = SigningKey("acme-1")
FUNCTIONS = {name: load_handler(name) for name in ("authorizer", "search", "chat", "keys")}
SEARCH = "/v1/namespaces/{namespace}/search"
ASK = {"messages": [{"role": "user", "content": "rocket?"}], "stream": False}


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Any, dict[str, str], Seen]]:
    """Given tenant acme with a document, keys of each kind, an identity provider, and the users the
    search and chat services are called for."""
    c = embedded_container(tmp_path)
    c.tenancy.create_tenant("acme")
    c.registry.create_namespace(new_namespace("acme", "docs", default=True))
    c.ingest.ingest(
        TenantScope(tenant_id="acme", namespace_id="docs"), filename="a.txt", data=b"Acme rocket."
    )
    keys = {
        "plain": c.tenancy.create_key("acme", scopes=["chat", "search"])[0],
        "asserting": c.tenancy.create_key("acme", scopes=["chat", "search"], assert_user=True)[0],
        "requiring": c.tenancy.create_key("acme", scopes=["chat", "search"], require_user=True)[0],
        "admin": c.tenancy.create_key("acme", scopes=["admin"])[0],
    }
    idp = IdentityProvider(issuer=ISSUER, audiences=("app",), jwks=(IDP_KEY.jwk,), namespaces=("docs",))
    c.registry.put_identity_provider("acme", idp)
    seen = Seen.install(c)
    yield c, keys, seen
    c.close()


def authorize(c: Any, credential: str, **headers: str) -> dict[str, str]:
    """The real authorizer's answer: what API Gateway caches per Authorization header."""
    event = {
        "type": "REQUEST",
        "methodArn": "arn:aws:execute-api:us-east-1:123456789012:abc123/dev/POST/v1/namespaces/docs/search",
        "headers": {"Authorization": f"Bearer {credential}", **headers},
    }
    return dict(FUNCTIONS["authorizer"].lambda_handler(event, None, container=c)["context"])


def search(c: Any, context: dict[str, str], **headers: str) -> tuple[int, Any]:
    return call_rest(FUNCTIONS["search"], c, "POST", "/v1/namespaces/docs/search", resource=SEARCH,
                     authorizer=context, body={"query": "rocket"}, headers=headers)  # fmt: skip


def chat(c: Any, context: dict[str, str], **headers: str) -> tuple[int, Any]:
    with chat_client(FUNCTIONS["chat"], c) as client:
        response = client.post("/v1/chat", json=ASK, headers=chat_headers(context, **headers))
    return response.status_code, response.json()


ALICE = {"Ragline-User-Id": "alice", "Ragline-User-Groups": "hr, eng"}


def test_a_key_with_the_right_acts_for_the_user_it_names(world: Any) -> None:
    c, keys, seen = world
    context = authorize(c, keys["asserting"])
    assert search(c, context, **ALICE)[0] == 200
    assert chat(c, context, **ALICE)[0] == 200
    assert seen.users == [UserContext("alice", frozenset({"hr", "eng"}))] * 2
    assert search(c, context)[0] == 200  # naming no one: the key acts for the SaaS itself
    assert seen.users[-1] is None


@pytest.mark.parametrize("route", [search, chat])
def test_a_key_without_the_right_naming_a_user_is_forbidden(world: Any, route: Any) -> None:
    c, keys, seen = world
    status, body = route(c, authorize(c, keys["plain"]), **ALICE)
    assert (status, body["error"]["code"]) == (403, "forbidden")
    assert seen.users == []  # refused before any service ran


@pytest.mark.parametrize(
    "headers",
    [
        {"Ragline-User-Id": "a" * 257},
        {"Ragline-User-Id": "alice", "Ragline-User-Groups": ",".join(f"g{i}" for i in range(101))},
        {"Ragline-User-Groups": "hr"},
        {"Ragline-User-Id": " alice"},
    ],
)
def test_a_bad_user_context_is_a_bad_request(world: Any, headers: dict[str, str]) -> None:
    c, keys, seen = world
    status, body = search(c, authorize(c, keys["asserting"]), **headers)
    assert (status, body["error"]["code"]) == (400, "invalid_request")
    assert seen.users == []


def test_a_key_that_must_name_a_user_is_forbidden_without_one(world: Any) -> None:
    c, keys, seen = world
    context = authorize(c, keys["requiring"])
    assert search(c, context)[0] == 403
    assert chat(c, context)[0] == 403
    assert search(c, context, **{"Ragline-User-Id": "bob"})[0] == 200
    assert seen.users == [UserContext("bob")]


def test_an_identity_providers_token_is_its_user_and_cannot_name_another(world: Any) -> None:
    c, _, seen = world
    token = IDP_KEY.token(claims(ISSUER, user="carol", groups=["hr"]))
    context = authorize(c, token)
    assert Principal.from_context(context).user == UserContext("carol", frozenset({"hr"}))
    assert search(c, context)[0] == 200
    assert chat(c, context)[0] == 200
    assert seen.users == [UserContext("carol", frozenset({"hr"}))] * 2
    status, body = search(c, context, **{"Ragline-User-Id": "root"})
    assert (status, body["error"]["code"]) == (403, "forbidden")


def test_a_cached_answer_never_carries_one_users_context_into_anothers_request(world: Any) -> None:
    """API Gateway caches the authorizer's answer per its identity sources (template.yaml): Given
    the answer to alice's request, when bob's request with the same key reuses it, it acts for bob."""
    c, keys, seen = world
    authorizer = load_template()["Resources"]["RaglineApi"]["Properties"]["Auth"]["Authorizers"][
        "ApiKeyAuthorizer"
    ]
    assert authorizer["Identity"]["Headers"] == ["Authorization"]  # cached per key alone...
    alices = authorize(c, keys["asserting"], **ALICE)
    assert alices == authorize(c, keys["asserting"])  # ...so the answer must not depend on the user
    assert search(c, alices, **{"Ragline-User-Id": "bob"})[0] == 200
    assert chat(c, alices)[0] == 200
    assert seen.users == [UserContext("bob"), None]


def test_a_cached_answer_does_not_outlive_its_token(world: Any) -> None:
    c, _, seen = world
    now = int(time.time())
    context = authorize(c, IDP_KEY.token(claims(ISSUER) | {"iat": now - 100, "exp": now + 2}))
    context["expiresAt"] = str(now - 1)  # the same answer, replayed by the cache after the token's exp
    status, body = search(c, context)
    assert (status, body["error"]["code"]) == (401, "unauthorized")
    assert chat(c, context)[0] == 401
    assert seen.users == []


def test_the_authorizer_context_carries_the_user_and_the_keys_right() -> None:
    user = UserContext("u-1", frozenset({"hr", "a b", 'quote"d'}))
    token_user = Principal(
        tenant_id="acme",
        scopes=frozenset({"chat"}),
        namespaces=frozenset({"docs"}),
        user=user,
        expires_at=1_900_000_000,
    )
    context = token_user.to_context()
    assert all(isinstance(v, str) for v in context.values())
    assert Principal.from_context(context) == token_user
    for right in ({"may_assert_user": True}, {"may_assert_user": True, "requires_user": True}, {}):
        key = Principal(tenant_id="acme", scopes=frozenset({"search"}), key_id="key_1", **right)
        assert Principal.from_context(key.to_context()) == key


def test_one_users_idempotency_key_never_replays_their_result_to_another(world: Any) -> None:
    c, keys, _ = world
    context = authorize(c, keys["asserting"])
    alice = {**ALICE, "Idempotency-Key": "run-1"}
    status, first = search(c, context, **alice)
    assert status == 200
    replayed = search(c, context, **alice)[1]
    assert replayed["replayed"] is True and replayed["hits"] == first["hits"]
    status, body = search(c, context, **{"Ragline-User-Id": "bob", "Idempotency-Key": "run-1"})
    assert (status, body["error"]["code"]) == (422, "idempotency_key_reused")
    status, body = search(c, context, **{**alice, "Ragline-User-Groups": "hr, eng, payroll"})
    assert (status, body["error"]["code"]) == (422, "idempotency_key_reused")
