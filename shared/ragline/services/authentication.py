"""Who is calling: an ``Authorization: Bearer rl_…`` header → the key's :class:`Principal`, or a
tenant identity provider's token (``Bearer eyJ…``) → that tenant's end user
(:mod:`ragline.services.identity_tokens`).

The end user a request acts for comes from the token, or from the ``Ragline-User-Id`` and
``Ragline-User-Groups`` headers of a key created with the right to assert one
(:func:`with_asserted_user`). The headers are applied where the request is handled, not by the
authorizer: API Gateway caches the authorizer's answer per ``Authorization`` header, so an answer
that depended on other headers would be replayed for another user's request.

The authorizer runs in front of every request, so this module and what it imports stay small: the
standard library, the error tree, the key rules (:mod:`ragline.domain.keys`) and a
:class:`~ragline.ports.ApiKeyLookup` — no pydantic model, no registry. :class:`RegistryKeys` answers
the same questions from a whole :class:`~ragline.ports.TenantRegistry`, so the CLI, the local server
and the tests authenticate by this one function too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import suppress
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from ragline import errors
from ragline.domain.keys import KeyGrant, hash_api_key, looks_like_api_key

if TYPE_CHECKING:
    from ragline.domain.access import UserContext
    from ragline.domain.identity import IdentityProvider
    from ragline.domain.tenancy import ApiKeyRecord, Scope
    from ragline.ports import ApiKeyLookup, TenantRegistry
    from ragline.services.identity_tokens import TokenVerifier


MANAGEMENT_SCOPE = "admin"
"""The scope of the routes that manage the tenant; never exercised for an end user."""


class Principal(NamedTuple):
    """Who calls: a tenant, the key's scopes and namespace allow-list (a named tuple, not a dataclass:
    this is the authorizer's import path, and ``dataclasses`` pulls in ``inspect``)."""

    tenant_id: str
    scopes: frozenset[str]
    namespaces: frozenset[str] = frozenset()
    """Empty: every namespace of the tenant."""
    key_id: str = ""
    user: UserContext | None = None
    """The end user the request acts for (an asserted user context or the tenant's identity
    provider's token); None: the key acts for the SaaS itself and reads every document it reaches."""
    may_assert_user: bool = False
    """The key may name the end user in the ``Ragline-User-*`` headers."""
    requires_user: bool = False
    """The key must name one on every request (a key meant only for end users' traffic)."""
    expires_at: int = 0
    """A token's ``exp`` (Unix seconds); 0: a key, which does not expire."""

    @classmethod
    def operator(cls, tenant_id: str) -> Principal:
        """The operator on the command line or a local server: every scope of one tenant."""
        from ragline.domain.tenancy import ALL_SCOPES  # the models: never on the authorizer's path

        return cls(tenant_id=tenant_id, scopes=frozenset(ALL_SCOPES))

    def require(self, scope: Scope, namespace: str | None = None) -> None:
        self.require_any((scope,), namespace)

    def require_any(self, scopes: tuple[Scope, ...], namespace: str | None = None) -> None:
        """A missing scope is 403; a namespace outside the allow-list is the *same* 404 as a missing
        one (an allow-listed key must not learn which other namespaces exist).

        ``admin`` alone is what every route that manages the tenant needs (keys, usage, webhooks,
        the identity provider, creating, changing, reindexing or deleting namespaces), and a request
        acting for an end user manages nothing: 403 ``user_context_forbidden``, checked first so it
        is the one answer whatever the key holds. A webhook or key made "for" a user would see past
        its permissions (a webhook gets every document's id), so there is no per-route exception."""
        if self.acts_for_user and set(scopes) == {MANAGEMENT_SCOPE}:
            raise errors.UserContextForbidden(
                "this request acts for an end user, and end users manage nothing: send it without "
                "Ragline-User-Id, with a key that does not require a user",
                header="Ragline-User-Id",
            )
        if not self.scopes & set(scopes):
            raise errors.Forbidden(
                f"this key needs one of the scopes {', '.join(scopes)}", scopes=list(scopes)
            )
        if namespace is not None and not self.may_read(namespace):
            raise namespace_not_found(namespace)

    @property
    def acts_for_user(self) -> bool:
        """The request is an end user's: a token's, an asserted user's, or a key's that must name one."""
        return self.user is not None or self.requires_user

    def may_read(self, namespace: str) -> bool:
        return not self.namespaces or namespace in self.namespaces

    @property
    def unrestricted(self) -> bool:
        """No allow-list: the key reaches every namespace of its tenant."""
        return not self.namespaces

    def reaches(self, key: ApiKeyRecord) -> bool:
        """Whether this key may see or revoke ``key``: an unrestricted key reaches every key of its
        tenant; an allow-listed one only keys whose namespaces all lie inside its own list."""
        if self.unrestricted:
            return True
        return bool(key.namespaces) and set(key.namespaces) <= self.namespaces

    def to_context(self) -> dict[str, str]:
        """The API Gateway authorizer context (string values only; the user's groups as JSON text)."""
        context = {
            "tenantId": self.tenant_id,
            "scopes": ",".join(sorted(self.scopes)),
            "namespaces": ",".join(sorted(self.namespaces)),
            "keyId": self.key_id,
            "assertUser": "required" if self.requires_user else "allowed" if self.may_assert_user else "",
        }
        if self.user is not None:
            context |= {
                "userId": self.user.user_id,
                "groups": json.dumps(sorted(self.user.groups)),
                "expiresAt": str(self.expires_at),
            }
        return context

    @classmethod
    def from_context(cls, context: dict[str, object] | None) -> Principal:
        ctx = context or {}
        tenant = str(ctx.get("tenantId") or "")
        if not tenant:
            raise errors.Unauthorized("no tenant in the authorizer context")
        assertion = str(ctx.get("assertUser") or "")
        user = None
        if ctx.get("userId"):
            from ragline.domain.access import UserContext

            user = UserContext.of(ctx["userId"], json.loads(str(ctx.get("groups") or "[]")))
        return cls(
            tenant_id=tenant,
            scopes=frozenset(s for s in str(ctx.get("scopes") or "").split(",") if s),
            namespaces=frozenset(n for n in str(ctx.get("namespaces") or "").split(",") if n),
            key_id=str(ctx.get("keyId") or ""),
            user=user,
            may_assert_user=assertion in ("allowed", "required"),
            requires_user=assertion == "required",
            expires_at=int(str(ctx.get("expiresAt") or "0")),
        )


def authenticate(
    keys: ApiKeyLookup, authorization: str | None, tokens: TokenVerifier | None = None
) -> Principal:
    """``Authorization: Bearer rl_…`` → the key's principal; anything else is Unauthorized: a
    malformed header, an unknown or revoked key, a key whose tenant is not ``active`` (a gone
    tenant's keys die with it). A valid key's last use is recorded, but that bookkeeping never fails
    the request when the store is merely busy or down. ``Bearer eyJ…`` is a tenant identity
    provider's token, checked by ``tokens`` (default: the process's :func:`token_verifier`)."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() == "bearer" and not looks_like_api_key(token):
        from ragline.services.identity_tokens import looks_like_jwt

        if looks_like_jwt(token):
            return authenticate_token(keys, token, tokens or token_verifier())
    if scheme.lower() != "bearer" or not looks_like_api_key(token):
        raise errors.Unauthorized("missing or malformed API key")
    key_hash = hash_api_key(token.strip())
    grant = keys.find_grant(key_hash)
    if grant is None or grant.revoked:
        raise errors.Unauthorized("unknown or revoked API key")
    if keys.tenant_status(grant.tenant_id) != "active":
        raise errors.Unauthorized("this key's tenant is not active")
    with suppress(*errors.RETRYABLE):
        keys.touch_api_key(key_hash)
    return Principal(
        tenant_id=grant.tenant_id,
        scopes=grant.scopes,
        namespaces=grant.namespaces,
        key_id=grant.key_id,
        may_assert_user=grant.may_assert_user or grant.requires_user,
        requires_user=grant.requires_user,
    )


def authenticate_token(keys: ApiKeyLookup, token: str, tokens: TokenVerifier) -> Principal:
    """A tenant identity provider's token → its tenant's end user with the provider's reach. The
    tenant is the one whose provider has the token's issuer (an issuer belongs to one tenant)."""
    from ragline.services.identity_tokens import refused, unverified_issuer

    found = keys.find_identity_provider(unverified_issuer(token))
    if found is None:
        raise refused("issuer")
    tenant_id, provider = found
    verified = tokens.verify(token, provider)  # first: only a good token learns its tenant's status
    if keys.tenant_status(tenant_id) != "active":
        raise errors.Unauthorized("this token's tenant is not active")
    return Principal(
        tenant_id=tenant_id,
        scopes=frozenset(provider.scopes),
        namespaces=frozenset(provider.namespaces),
        user=verified.user,
        expires_at=verified.expires_at,
    )


@cache
def token_verifier() -> TokenVerifier:
    """The process's verifier (its fetched key sets live as long as the Lambda container)."""
    from ragline.services.identity_tokens import TokenVerifier

    return TokenVerifier()


USER_ID_HEADER = "ragline-user-id"
USER_GROUPS_HEADER = "ragline-user-groups"


def with_asserted_user(principal: Principal, headers: Mapping[str, str] | None) -> Principal:
    """The principal acting for the user the ``Ragline-User-Id`` / ``Ragline-User-Groups`` headers
    name. Sent by a key without the right, or with a token (whose user is the token's): 403. A
    key that must assert a user and names none: 403. A bad id or group: 400."""
    found = {k.lower(): v for k, v in (headers or {}).items() if k.lower() in _USER_HEADERS}
    if not found:
        if principal.requires_user and principal.user is None:
            raise errors.Forbidden(
                "this key acts only for an end user: send Ragline-User-Id", header="Ragline-User-Id"
            )
        return principal
    if principal.user is not None or not principal.may_assert_user:
        raise errors.Forbidden(
            "this credential may not assert a user context: create the key with assertUser",
            header="Ragline-User-Id",
        )
    from ragline.domain.access import UserContext

    if USER_ID_HEADER not in found:
        raise errors.InvalidRequest("Ragline-User-Groups needs Ragline-User-Id", field="Ragline-User-Id")
    groups = [g.strip() for g in found.get(USER_GROUPS_HEADER, "").split(",") if g.strip()]
    return principal._replace(user=UserContext.of(found[USER_ID_HEADER], groups))


_USER_HEADERS = frozenset({USER_ID_HEADER, USER_GROUPS_HEADER})


class RegistryKeys:
    """A whole :class:`~ragline.ports.TenantRegistry` as an :class:`~ragline.ports.ApiKeyLookup`."""

    def __init__(self, registry: TenantRegistry) -> None:
        self._registry = registry

    def find_grant(self, key_hash: str) -> KeyGrant | None:
        record = self._registry.find_api_key(key_hash)
        if record is None:
            return None
        return KeyGrant(
            tenant_id=record.tenant_id,
            key_id=record.key_id,
            scopes=frozenset(record.scopes),
            namespaces=frozenset(record.namespaces),
            revoked=not record.active,
            may_assert_user=record.may_assert_user,
            requires_user=record.requires_user,
        )

    def find_identity_provider(self, issuer: str) -> tuple[str, IdentityProvider] | None:
        return self._registry.find_identity_provider(issuer)

    def tenant_status(self, tenant_id: str) -> str | None:
        try:
            return self._registry.get_tenant(tenant_id).status
        except errors.NotFound:
            return None

    def touch_api_key(self, key_hash: str) -> None:
        self._registry.touch_api_key(key_hash)


def namespace_not_found(namespace: str) -> errors.NamespaceNotFound:
    """The one answer for a namespace that does not exist *or* is outside the caller's allow-list."""
    return errors.NamespaceNotFound(f"namespace {namespace!r} does not exist", namespace=namespace)
