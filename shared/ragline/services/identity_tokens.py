"""A tenant identity provider's token (a JWT) → the end user it names, or 401.

Checked with PyJWT (``jwt``, imported on the first token: the authorizer's cold start stays small)
in this order, each refusal an ``Unauthorized`` whose only detail is a ``reason`` code:

1. shape and size (``malformed``, ``too_large``); the unverified ``iss`` picks the provider, and an
   issuer no tenant named is ``issuer`` — so a token is only ever checked against its own tenant's
   settings;
2. the header's ``alg`` must be one the provider allows (asymmetric only: never ``none`` or HS*), and
   the key is the provider's key with the header's ``kid`` whose type fits that algorithm
   (``algorithm``, ``key``) — an HS256 token "signed" with the RSA public key as secret never meets
   a verifier that would accept it;
3. signature, ``iss``, ``aud``, ``exp`` (required), ``nbf``, ``iat`` with the provider's leeway, and a
   lifetime no longer than the provider allows (``signature``, ``audience``, ``expired``,
   ``not_yet_valid``, ``lifetime``, ``claims``).

The provider's ``jwks_uri`` is fetched with a bounded GET (:data:`FETCH_TIMEOUT`, :data:`MAX_JWKS_BYTES`,
no redirects, a public address only — checked as the connection is made) and cached per process for
:data:`JWKS_TTL`; an unknown ``kid`` refetches at most once per :data:`REFETCH_INTERVAL` (a key
rotation is picked up, a flood of made-up ``kid`` s is not a flood of fetches).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from ragline import errors

if TYPE_CHECKING:
    from ragline.domain.access import UserContext
    from ragline.domain.identity import IdentityProvider

MAX_TOKEN_BYTES = 8192
MAX_JWKS_BYTES = 64 * 1024
FETCH_TIMEOUT = 3.0
JWKS_TTL = 600.0
REFETCH_INTERVAL = 30.0
_KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}


class VerifiedToken(NamedTuple):
    user: UserContext
    expires_at: int


def refused(reason: str) -> errors.Unauthorized:
    return errors.Unauthorized("invalid identity token", reason=reason)


def looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2 and token.startswith("eyJ")


def unverified_issuer(token: str) -> str:
    """The ``iss`` of a token not yet checked: only to choose whose settings check it."""
    import jwt

    if len(token) > MAX_TOKEN_BYTES:
        raise refused("too_large")
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        raise refused("malformed") from None
    issuer = claims.get("iss")
    if not isinstance(issuer, str) or not issuer:
        raise refused("issuer")
    return issuer


def fetch_jwks(uri: str, *, allow_loopback: bool = False) -> list[dict[str, Any]]:
    """One bounded GET of a JWKS document, to a public address only (checked as it connects: a
    name that resolves to a private address is refused, :mod:`ragline.outbound`), no redirects."""
    from ragline import outbound

    response = outbound.request(
        "GET",
        uri,
        headers={"Accept": "application/json"},
        timeout=FETCH_TIMEOUT,
        max_bytes=MAX_JWKS_BYTES,
        allow_loopback=allow_loopback,
    )
    if response.status != 200:
        raise errors.DependencyUnavailable(
            f"the identity provider's keys could not be fetched (HTTP {response.status})"
        )
    try:
        keys = json.loads(response.body).get("keys")
    except (ValueError, AttributeError) as exc:
        raise errors.DependencyFailed("the identity provider's key set is not a JWKS") from exc
    return [k for k in keys if isinstance(k, dict)] if isinstance(keys, list) else []


class TokenVerifier:
    """Checks tokens; holds the fetched key sets (one per process: the Lambda container keeps it)."""

    def __init__(
        self,
        *,
        fetch: Callable[[str], list[dict[str, Any]]] | None = None,
        clock: Callable[[], float] = time.time,
        loopback_http: bool = False,
    ) -> None:
        self._fetch = fetch or (lambda uri: fetch_jwks(uri, allow_loopback=loopback_http))
        self._clock = clock
        self.loopback_http = loopback_http
        self._sets: dict[str, tuple[list[dict[str, Any]], float]] = {}
        self._lock = threading.Lock()

    def verify(self, token: str, provider: IdentityProvider) -> VerifiedToken:
        import jwt

        from ragline.domain.access import UserContext
        from ragline.domain.identity import token_groups

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise refused("malformed") from None
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in provider.algorithms:
            raise refused("algorithm")
        jwk = self._key(provider, header.get("kid"), alg)
        try:
            key = jwt.PyJWK(jwk, algorithm=alg).key
            claims = jwt.decode(
                token,
                key,
                algorithms=[alg],
                audience=list(provider.audiences),
                issuer=provider.issuer,
                leeway=provider.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError:
            raise refused("expired") from None
        except jwt.ImmatureSignatureError:
            raise refused("not_yet_valid") from None
        except jwt.InvalidAudienceError:
            raise refused("audience") from None
        except jwt.InvalidIssuerError:
            raise refused("issuer") from None
        except (jwt.InvalidSignatureError, jwt.InvalidKeyError, jwt.InvalidAlgorithmError, jwt.PyJWKError):
            raise refused("signature") from None
        except jwt.PyJWTError:
            raise refused("claims") from None
        expires = claims["exp"]
        issued = claims.get("iat", self._clock())
        if not isinstance(expires, int | float) or not isinstance(issued, int | float):
            raise refused("claims")
        if expires - issued > provider.max_lifetime or expires - self._clock() > provider.max_lifetime:
            raise refused("lifetime")
        try:
            groups = token_groups(claims.get(provider.groups_claim))
            user = UserContext.of(claims.get(provider.user_claim), groups)
        except errors.InvalidRequest:
            raise refused("claims") from None
        return VerifiedToken(user=user, expires_at=int(expires))

    def _key(self, provider: IdentityProvider, kid: object, alg: str) -> dict[str, Any]:
        """The provider's key for ``kid`` (or its only key when the token names none) of ``alg``'s type."""
        kty = _KEY_TYPES[alg[:2]]

        def pick(keys: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> dict[str, Any] | None:
            fits = [
                k
                for k in keys
                if k.get("kty") == kty
                and k.get("use", "sig") == "sig"
                and k.get("alg", alg) == alg
                and (kid is None or k.get("kid") == kid)
            ]
            return fits[0] if len(fits) == 1 else None

        found = pick(provider.jwks)
        if found is None and provider.jwks_uri:
            found = pick(self._jwks(provider.jwks_uri, refresh=False))
            if found is None:
                found = pick(self._jwks(provider.jwks_uri, refresh=True))
        if found is None:
            raise refused("key")
        return found

    def _jwks(self, uri: str, *, refresh: bool) -> list[dict[str, Any]]:
        from ragline.domain.identity import check_jwks_uri

        now = self._clock()
        with self._lock:
            cached = self._sets.get(uri)
        if cached is not None:
            keys, fetched_at = cached
            fresh = now - fetched_at < (REFETCH_INTERVAL if refresh else JWKS_TTL)
            if fresh:
                return keys
        try:
            check_jwks_uri(uri, loopback_http=self.loopback_http)
        except errors.InvalidRequest:
            raise refused("key") from None
        keys = self._fetch(uri)
        with self._lock:
            self._sets[uri] = (keys, now)
        return keys
