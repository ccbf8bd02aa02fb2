"""The token probe: a tenant identity provider's token is refused for every way it can be wrong — issuer,
audience, signature, expiry, algorithm (``none``, HS/RS confusion, one the provider does not allow),
unknown key, size — each a 401 with only a reason code; a good one is its tenant's end user with the
provider's scopes and namespaces, and never another tenant's."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.domain.access import UserContext
from ragline.domain.identity import IdentityProvider
from ragline.domain.tenancy import Tenant
from ragline.services.authentication import Principal, RegistryKeys, authenticate
from ragline.services.identity_tokens import MAX_TOKEN_BYTES, TokenVerifier
from tests.support.identity_tokens import JwksServer, SigningKey, claims, unsigned

pytestmark = pytest.mark.unit
ACME, GLOBEX = "https://idp.acme.test/", "https://login.globex.test"
KEY = SigningKey("acme-1")
OTHER = SigningKey("acme-1")  # same kid, another key: a forged signature
EC_KEY = SigningKey("acme-ec", kind="EC")
GLOBEX_KEY = SigningKey("globex-1")


@pytest.fixture
def keys(tmp_path: Path) -> RegistryKeys:
    """Given two tenants, each with its own identity provider."""
    registry = SqliteTenantRegistry(tmp_path / "tenants.sqlite")
    for tenant in ("acme", "globex"):
        registry.create_tenant(Tenant(tenant_id=tenant))
    registry.put_identity_provider(
        "acme",
        IdentityProvider(
            issuer=ACME, audiences=("app", "web"), jwks=(KEY.jwk, EC_KEY.jwk),
            groups_claim="cognito:groups", namespaces=("hr",), leeway=30, max_lifetime=3600,
        ),
    )  # fmt: skip
    registry.put_identity_provider(
        "globex",
        IdentityProvider(issuer=GLOBEX, audiences=("app",), jwks=(GLOBEX_KEY.jwk,), scopes=("search",)),
    )
    return RegistryKeys(registry)


def login(keys: RegistryKeys, token: str, verifier: TokenVerifier | None = None) -> Principal:
    return authenticate(keys, f"Bearer {token}", verifier or TokenVerifier())


def reason(keys: RegistryKeys, token: str, verifier: TokenVerifier | None = None) -> str:
    with pytest.raises(errors.Unauthorized) as refused:
        login(keys, token, verifier)
    body = refused.value.to_dict()["error"]
    assert (body["code"], body["message"]) == ("unauthorized", "invalid identity token")
    assert set(body["details"]) == {"reason"}  # nothing else that helps an attacker
    return str(body["details"]["reason"])


def test_a_good_token_is_its_tenants_end_user_with_the_providers_reach(keys: RegistryKeys) -> None:
    token = KEY.token(claims(ACME, user="alice", **{"cognito:groups": ["hr", "eng"]}))
    principal = login(keys, token)
    assert principal.tenant_id == "acme"
    assert principal.user == UserContext("alice", frozenset({"hr", "eng"}))
    assert (principal.scopes, principal.namespaces) == (frozenset({"chat", "search"}), frozenset({"hr"}))
    assert principal.key_id == "" and not principal.may_assert_user
    # any of the audiences; an ES256 token where the provider allows it is checked with its EC key
    assert login(keys, KEY.token(claims(ACME, audience="web"))).user == UserContext("alice")
    ec_only = IdentityProvider(issuer=ACME, audiences=("app",), jwks=(EC_KEY.jwk,), algorithms=("ES256",))
    keys._registry.put_identity_provider("acme", ec_only)
    assert login(keys, EC_KEY.token(claims(ACME), alg="ES256")).tenant_id == "acme"


def test_a_token_is_checked_against_its_own_tenants_provider_only(keys: RegistryKeys) -> None:
    # Globex's token is Globex's user with Globex's reach
    globex = login(keys, GLOBEX_KEY.token(claims(GLOBEX, user="bob")))
    assert (globex.tenant_id, globex.scopes, globex.user) == (
        "globex",
        frozenset({"search"}),
        UserContext("bob"),
    )
    # a token naming Acme's issuer but signed with Globex's key (same kid as Acme's) is not Acme's
    forged = SigningKey("acme-1")
    forged.private = GLOBEX_KEY.private
    assert reason(keys, forged.token(claims(ACME))) == "signature"
    # and a token of Acme's key naming Globex's issuer does not find Acme's keys there
    assert reason(keys, KEY.token(claims(GLOBEX))) == "key"


def now() -> int:
    return int(time.time())


def tampered() -> str:
    """A good token's header and signature around another user's payload."""
    head, _, signature = KEY.token(claims(ACME)).split(".")
    return ".".join([head, KEY.token(claims(ACME, user="root")).split(".")[1], signature])


HOSTILE: dict[str, Any] = {
    "unknown issuer": (lambda: KEY.token(claims("https://evil.test/")), "issuer"),
    "no issuer": (lambda: KEY.token({k: v for k, v in claims(ACME).items() if k != "iss"}), "issuer"),
    "wrong audience": (lambda: KEY.token(claims(ACME, audience="other-app")), "audience"),
    "bad signature": (lambda: OTHER.token(claims(ACME)), "signature"),
    "tampered payload": (tampered, "signature"),
    "expired": (lambda: KEY.token(claims(ACME) | {"iat": now() - 300, "exp": now() - 31}), "expired"),
    "not yet valid": (lambda: KEY.token(claims(ACME) | {"nbf": now() + 120}), "not_yet_valid"),
    "missing exp": (lambda: KEY.token({k: v for k, v in claims(ACME).items() if k != "exp"}), "claims"),
    "too long a lifetime": (lambda: KEY.token(claims(ACME, lifetime=7200)), "lifetime"),
    "no user": (lambda: KEY.token({k: v for k, v in claims(ACME).items() if k != "sub"}), "claims"),
    "alg none": (lambda: unsigned({"alg": "none", "kid": "acme-1"}, claims(ACME)), "algorithm"),
    "HS256 with the RSA public key as secret": (
        lambda: unsigned({"alg": "HS256", "kid": "acme-1", "typ": "JWT"}, claims(ACME), KEY.public_pem),
        "algorithm",
    ),
    "an algorithm the provider does not allow": (lambda: KEY.token(claims(ACME), alg="RS512"), "algorithm"),
    "unknown kid": (lambda: KEY.token(claims(ACME), kid="rotated-away"), "key"),
    "oversized": (lambda: KEY.token(claims(ACME, pad="x" * MAX_TOKEN_BYTES)), "too_large"),
    "garbage": (lambda: "eyJhbGciOi.not-a-token.x", "malformed"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_or_broken_token_is_refused_with_its_reason(keys: RegistryKeys, case: str) -> None:
    make, why = HOSTILE[case]
    assert reason(keys, make()) == why


def test_expiry_and_not_before_allow_the_providers_leeway_only(keys: RegistryKeys) -> None:
    just_expired = KEY.token(claims(ACME) | {"iat": now() - 300, "exp": now() - 10})
    assert login(keys, just_expired).user == UserContext("alice")  # within 30 s of skew
    assert login(keys, KEY.token(claims(ACME) | {"nbf": now() + 10})).tenant_id == "acme"


def test_a_suspended_tenants_tokens_are_refused(keys: RegistryKeys) -> None:
    tenant = keys._registry.get_tenant("acme")
    keys._registry.update_tenant(tenant.model_copy(update={"status": "suspended"}))
    with pytest.raises(errors.Unauthorized):
        login(keys, KEY.token(claims(ACME)))


@pytest.fixture
def jwks() -> Iterator[JwksServer]:
    with JwksServer().running() as server:
        yield server


def test_keys_from_the_jwks_uri_are_cached_and_a_rotation_is_picked_up(
    keys: RegistryKeys, jwks: JwksServer
) -> None:
    keys._registry.put_identity_provider(
        "acme", IdentityProvider(issuer=ACME, audiences=("app",), jwks_uri=jwks.uri)
    )
    clock = [1_000_000.0]
    verifier = TokenVerifier(loopback_http=True, clock=lambda: clock[0])
    jwks.keys = [KEY.jwk]
    wall = int(time.time())
    token = KEY.token(claims(ACME) | {"iat": wall, "exp": wall + 600})
    clock[0] = wall
    assert login(keys, token, verifier).user == UserContext("alice")
    assert login(keys, token, verifier).tenant_id == "acme"
    assert jwks.fetches == 1  # cached
    rotated = SigningKey("acme-2")
    jwks.keys = [KEY.jwk, rotated.jwk]
    clock[0] += 31  # past the refetch interval: an unknown kid refetches once
    assert (
        login(keys, rotated.token(claims(ACME) | {"iat": wall, "exp": wall + 600}), verifier).tenant_id
        == "acme"
    )
    assert jwks.fetches == 2
    for _ in range(5):  # made-up kids within the interval are refused without a fetch each
        assert (
            reason(keys, KEY.token(claims(ACME) | {"iat": wall, "exp": wall + 600}, kid="nope"), verifier)
            == "key"
        )
    assert jwks.fetches == 2


def test_a_plain_http_jwks_uri_is_never_fetched_without_the_loopback_allowance(
    keys: RegistryKeys, jwks: JwksServer
) -> None:
    keys._registry.put_identity_provider(
        "acme", IdentityProvider(issuer=ACME, audiences=("app",), jwks_uri=jwks.uri)
    )
    jwks.keys = [KEY.jwk]
    assert reason(keys, KEY.token(claims(ACME)), TokenVerifier()) == "key"
    assert jwks.fetches == 0
