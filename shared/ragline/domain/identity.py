"""A tenant's own identity provider: whose signed tokens act as end users of that tenant.

A tenant may name one OpenID Connect-style issuer. A token it signed (a JWT) authenticates a request
with no Ragline key: the authorizer finds the tenant by the token's ``iss`` (an issuer belongs to at
most one tenant, so a token can never be checked against another tenant's settings), checks the
signature against the provider's keys (inline JWKs and/or a ``jwks_uri``), the audience, the times
and the algorithm, and gives the request the provider's scopes and namespaces, acting for the user
the token names.

Standard library only, and no pydantic: the authorizer reads a provider through this module. The
admin route's body (:class:`ragline.domain.api.IdentityProviderBody`) is checked by :func:`checked`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from ragline import errors

ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA")
"""Asymmetric signatures only: a shared secret (HS*) would have to be stored here, and ``none`` is
no signature. A token whose header names anything else is refused before any key is read."""
DEFAULT_ALGORITHMS = ("RS256",)
DEFAULT_SCOPES = ("chat", "search")
TOKEN_SCOPES = frozenset({"chat", "search"})
"""The scopes a token may get: an end user reads; writing and administration stay with keys."""
MAX_AUDIENCES = 10
MAX_JWKS_KEYS = 20
MAX_LIFETIME = 86_400
"""Longest token lifetime (``exp`` - ``iat``) accepted by default, in seconds (Auth0's default)."""
MAX_LEEWAY = 300
DEFAULT_LEEWAY = 60


class IdentityProvider(NamedTuple):
    """A tenant's token issuer as stored and as the authorizer reads it (a named tuple: no pydantic)."""

    issuer: str
    audiences: tuple[str, ...]
    jwks: tuple[dict[str, Any], ...] = ()
    """Inline public keys (JWKs); searched before ``jwks_uri``'s."""
    jwks_uri: str = ""
    user_claim: str = "sub"
    groups_claim: str = "groups"
    algorithms: tuple[str, ...] = DEFAULT_ALGORITHMS
    scopes: tuple[str, ...] = DEFAULT_SCOPES
    namespaces: tuple[str, ...] = ()
    """Allow-list of the tokens' requests; empty: every namespace of the tenant."""
    max_lifetime: int = MAX_LIFETIME
    leeway: int = DEFAULT_LEEWAY
    """Clock skew tolerated on ``exp``, ``nbf`` and ``iat``, in seconds."""

    def to_json(self) -> str:
        return json.dumps(self._asdict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> IdentityProvider:
        data = json.loads(text)
        return cls(
            issuer=str(data["issuer"]),
            audiences=tuple(data.get("audiences") or ()),
            jwks=tuple(data.get("jwks") or ()),
            jwks_uri=str(data.get("jwks_uri") or ""),
            user_claim=str(data.get("user_claim") or "sub"),
            groups_claim=str(data.get("groups_claim") or "groups"),
            algorithms=tuple(data.get("algorithms") or DEFAULT_ALGORITHMS),
            scopes=tuple(data.get("scopes") or DEFAULT_SCOPES),
            namespaces=tuple(data.get("namespaces") or ()),
            max_lifetime=int(data.get("max_lifetime") or MAX_LIFETIME),
            leeway=int(data.get("leeway") if data.get("leeway") is not None else DEFAULT_LEEWAY),
        )


def issuer_digest(issuer: str) -> str:
    """The index key of an issuer (fixed length, whatever the issuer's text)."""
    return hashlib.sha256(issuer.encode()).hexdigest()


def _invalid(message: str, field: str) -> errors.InvalidRequest:
    return errors.InvalidRequest(message, field=field)


def check_jwks_uri(uri: str, *, loopback_http: bool = False) -> str:
    """``https://`` only, to a name or a public address: never the link-local metadata service or
    another private address by literal. Plain ``http://`` to a loopback host only where the operator
    allows loopback HTTP (tests, a local server), never elsewhere."""
    from ragline.domain.urls import check_public_url  # not on a key's path through the authorizer

    return check_public_url(uri, field="jwksUri", loopback_http=loopback_http)


def checked(provider: IdentityProvider, *, loopback_http: bool = False) -> IdentityProvider:
    """The provider, or ``InvalidRequest`` naming the first field that cannot be right."""
    from urllib.parse import urlsplit

    issuer = urlsplit(provider.issuer)
    if issuer.scheme not in ("https", "http") or not issuer.hostname or len(provider.issuer) > 512:
        raise _invalid("issuer must be the provider's URL exactly as its tokens' iss claim", "issuer")
    if not provider.audiences or len(provider.audiences) > MAX_AUDIENCES:
        raise _invalid(f"name 1-{MAX_AUDIENCES} audiences (the tokens' aud)", "audiences")
    if any(not isinstance(a, str) or not a or len(a) > 512 for a in provider.audiences):
        raise _invalid("audiences must be non-empty text", "audiences")
    if not provider.jwks and not provider.jwks_uri:
        raise _invalid("name the provider's public keys: jwks, jwksUri or both", "jwks")
    if len(provider.jwks) > MAX_JWKS_KEYS:
        raise _invalid(f"at most {MAX_JWKS_KEYS} inline keys", "jwks")
    for key in provider.jwks:
        check_public_jwk(key)
    if provider.jwks_uri:
        check_jwks_uri(provider.jwks_uri, loopback_http=loopback_http)
    unknown = [a for a in provider.algorithms if a not in ALGORITHMS]
    if unknown or not provider.algorithms:
        raise errors.InvalidRequest(
            f"algorithms must be some of {', '.join(ALGORITHMS)}", field="algorithms", unknown=unknown
        )
    if not set(provider.scopes) <= TOKEN_SCOPES or not provider.scopes:
        raise _invalid("a token's scopes are some of chat, search", "scopes")
    if not 60 <= provider.max_lifetime <= 7 * 86_400:
        raise _invalid("maxLifetime is 60-604800 seconds", "maxLifetime")
    if not 0 <= provider.leeway <= MAX_LEEWAY:
        raise _invalid(f"leeway is 0-{MAX_LEEWAY} seconds", "leeway")
    for name, claim in (("userClaim", provider.user_claim), ("groupsClaim", provider.groups_claim)):
        if not claim or len(claim) > 128:
            raise _invalid(f"{name} must be a claim name", name)
    return provider


def check_public_jwk(key: Mapping[str, Any]) -> None:
    """A public key of an asymmetric type: a symmetric (``oct``) key or a private part is refused."""
    if not isinstance(key, Mapping) or key.get("kty") not in ("RSA", "EC", "OKP"):
        raise _invalid("each inline key is a public JWK of kty RSA, EC or OKP", "jwks")
    if any(private in key for private in ("d", "p", "q", "dp", "dq", "qi", "k")):
        raise _invalid("an inline key must be a public key (no private parts)", "jwks")


def token_groups(claim: object) -> Iterable[object]:
    """A groups claim as a list: a JSON list, or one string naming one group; absent is none."""
    if claim is None:
        return ()
    if isinstance(claim, str):
        return (claim,)
    if isinstance(claim, list):
        return claim
    return (claim,)  # not text: refused by the principal check
