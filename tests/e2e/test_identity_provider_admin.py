"""Setting a tenant's identity provider and issuing keys that act for end users, through the keys
function (as API Gateway calls it) and through ``ragline serve`` with real keys and tokens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from ragline.cli.serve import build_app
from ragline.domain.access import UserContext
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.identity_tokens import JwksServer, SigningKey, claims
from tests.support.lambda_harness import FUNCTIONS, call_rest, load_handler
from tests.support.serving import Seen, embedded_container

pytestmark = pytest.mark.e2e
KEYS = load_handler("keys")
IDP = "/v1/tenant/identity-provider"
ISSUER = "https://idp.acme.test/"
SIGNER = SigningKey("acme-1")
BODY = {"issuer": ISSUER, "audiences": ["app"], "jwks": [SIGNER.jwk], "groupsClaim": "cognito:groups"}


def admin(c: Container, tenant: str = "acme", **kw: Any) -> dict[str, str]:
    """The authorizer's answer for a new admin key of ``tenant`` (``kw``: its allow-list and rights)."""
    plaintext, _ = c.tenancy.create_key(tenant, scopes=["admin", "chat", "search"], **kw)
    return c.tenancy.authenticate(f"Bearer {plaintext}").to_context()


@pytest.fixture
def c(tmp_path: Path) -> Iterator[Container]:
    container = embedded_container(tmp_path)
    for tenant in ("acme", "globex"):
        container.tenancy.create_tenant(tenant)
        container.registry.create_namespace(new_namespace(tenant, "docs", default=True))
    yield container
    container.close()


def idp(c: Container, context: dict[str, str], method: str, body: Any = None) -> tuple[int, Any]:
    return call_rest(KEYS, c, method, IDP, resource=IDP, authorizer=context, body=body)


def test_an_admin_sets_shows_and_removes_its_tenants_provider(c: Container) -> None:
    context = admin(c)
    assert idp(c, context, "GET")[0] == 404
    status, view = idp(c, context, "PUT", BODY)
    assert status == 200
    assert (view["issuer"], view["groupsClaim"], view["userClaim"]) == (ISSUER, "cognito:groups", "sub")
    assert (view["algorithms"], view["scopes"], view["namespaces"]) == (["RS256"], ["chat", "search"], [])
    assert idp(c, context, "GET") == (200, view)
    assert idp(c, context, "DELETE") == (200, {"deleted": True})
    assert c.registry.find_identity_provider(ISSUER) is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"algorithms": ["HS256"]}, "algorithms"),
        ({"algorithms": ["none"]}, "algorithms"),
        ({"jwks": [{"kty": "oct", "k": "c2VjcmV0"}]}, "jwks"),
        ({"jwks": [SIGNER.jwk | {"d": "private"}]}, "jwks"),
        ({"jwks": [], "jwksUri": "http://idp.acme.test/jwks"}, "jwksUri"),
        ({"jwks": [], "jwksUri": "http://127.0.0.1:9001/jwks"}, "jwksUri"),
        ({"jwks": [], "jwksUri": "https://169.254.169.254/latest"}, "jwksUri"),
        ({"jwks": []}, "jwks"),
        ({"scopes": ["admin"]}, None),
        ({"leeway": 3600}, "leeway"),
        ({"namespaces": ["nope"]}, None),
    ],
)
def test_a_provider_that_cannot_be_right_is_refused(
    c: Container, change: dict[str, Any], field: str | None
) -> None:
    status, body = idp(c, admin(c), "PUT", BODY | change)
    assert status in (400, 404), body
    if field:
        assert body["error"]["details"]["field"] == field
    assert c.registry.get_identity_provider("acme") is None


def test_another_tenants_issuer_is_a_conflict_and_a_narrow_admin_is_forbidden(c: Container) -> None:
    assert idp(c, admin(c), "PUT", BODY)[0] == 200
    status, body = idp(c, admin(c, "globex"), "PUT", BODY)
    assert (status, body["error"]["code"]) == (409, "conflict")
    # and Globex's admin neither sees nor removes Acme's provider
    assert idp(c, admin(c, "globex"), "GET")[0] == 404
    assert idp(c, admin(c, "globex"), "DELETE") == (200, {"deleted": False})
    assert idp(c, admin(c, namespaces=("docs",)), "PUT", BODY | {"issuer": "https://other.test/"})[0] == 403
    assert c.registry.find_identity_provider(ISSUER)[0] == "acme"  # type: ignore[index]


def test_keys_are_issued_with_the_right_and_a_request_acting_for_a_user_mints_none(c: Container) -> None:
    """Issue 37 #11: a request acting for an end user manages nothing, keys included (it used to
    mint keys that must name a user too)."""
    status, key = call_rest(KEYS, c, "POST", "/v1/keys", resource="/v1/keys", authorizer=admin(c),
                            body={"scopes": ["search"], "assertUser": True})  # fmt: skip
    assert status == 201 and (key["assertUser"], key["requireUser"]) == (True, False)
    body = {"scopes": ["search"], "requireUser": True}
    status, key = call_rest(KEYS, c, "POST", "/v1/keys", resource="/v1/keys", authorizer=admin(c),
                            body=body)  # fmt: skip
    assert status == 201 and (key["assertUser"], key["requireUser"]) == (True, True)
    asserting = admin(c, assert_user=True)
    status, refused = call_rest(KEYS, c, "POST", "/v1/keys", resource="/v1/keys", authorizer=asserting,
                                body=body, headers={"Ragline-User-Id": "ops"})  # fmt: skip
    assert (status, refused["error"]["code"]) == (403, "user_context_forbidden")


def test_serve_takes_keys_with_users_and_tokens_from_a_jwks_uri(tmp_path: Path) -> None:
    """``ragline serve --api-keys``: the local server's one path for keys, asserted users and tokens
    (the provider's keys fetched from a JWKS server on 127.0.0.1, allowed by the operator's setting)."""
    c = embedded_container(tmp_path, identity_loopback_http=True)
    c.tenancy.create_tenant("acme")
    c.registry.create_namespace(new_namespace("acme", "docs", default=True))
    plain = c.tenancy.create_key("acme", scopes=["search", "chat"])[0]
    asserting = c.tenancy.create_key("acme", scopes=["search", "chat"], assert_user=True)[0]
    admin_key = c.tenancy.create_key("acme", scopes=["admin"])[0]
    seen = Seen.install(c)
    with (
        JwksServer().running() as jwks,
        TestClient(build_app(FUNCTIONS, "local", c, api_keys=True), base_url="http://localhost") as client,
    ):
        jwks.keys = [SIGNER.jwk]

        def post(path: str, credential: str, body: dict[str, Any], **headers: str) -> Any:
            return client.post(path, json=body, headers={"Authorization": f"Bearer {credential}", **headers})

        body = BODY | {"jwks": [], "jwksUri": jwks.uri}
        response = client.put(IDP, json=body, headers={"Authorization": f"Bearer {admin_key}"})
        assert response.status_code == 200, response.text
        search, ask = (
            "/v1/namespaces/docs/search",
            {"messages": [{"role": "user", "content": "hi"}], "stream": False},
        )
        assert post(search, asserting, {"query": "x"}, **{"Ragline-User-Id": "dan"}).status_code == 200
        refused = post(search, plain, {"query": "x"}, **{"Ragline-User-Id": "dan"})
        assert (refused.status_code, refused.json()["error"]["code"]) == (403, "forbidden")
        token = SIGNER.token(claims(ISSUER, user="erin", **{"cognito:groups": ["ops"]}))
        assert post(search, token, {"query": "x"}).status_code == 200
        assert post("/v1/chat", token, ask).status_code == 200
        wrong = post(search, SIGNER.token(claims(ISSUER, audience="elsewhere")), {"query": "x"})
        assert (wrong.status_code, wrong.json()["error"]["details"]) == (401, {"reason": "audience"})
    assert seen.users == [UserContext("dan"), *[UserContext("erin", frozenset({"ops"}))] * 2]
    c.close()


def test_serve_without_keys_lets_the_operator_act_as_an_end_user(tmp_path: Path) -> None:
    c = embedded_container(tmp_path)
    c.registry.create_namespace(new_namespace("local", "docs", default=True))
    seen = Seen.install(c)
    with TestClient(build_app(FUNCTIONS, "local", c), base_url="http://localhost") as client:
        found = client.post(
            "/v1/namespaces/docs/search", json={"query": "x"}, headers={"Ragline-User-Id": "fay"}
        )
        assert found.status_code == 200, found.text
        assert client.post("/v1/namespaces/docs/search", json={"query": "x"}).status_code == 200
    assert seen.users == [UserContext("fay"), None]
    c.close()
