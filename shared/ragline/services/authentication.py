"""Who is calling: an ``Authorization: Bearer rl_…`` header → the key's :class:`Principal`.

The authorizer runs in front of every request, so this module and what it imports stay small: the
standard library, the error tree, the key rules (:mod:`ragline.domain.keys`) and a
:class:`~ragline.ports.ApiKeyLookup` — no pydantic model, no registry. :class:`RegistryKeys` answers
the same questions from a whole :class:`~ragline.ports.TenantRegistry`, so the CLI, the local server
and the tests authenticate by this one function too.
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING, NamedTuple

from ragline import errors
from ragline.domain.keys import KeyGrant, hash_api_key, looks_like_api_key

if TYPE_CHECKING:
    from ragline.domain.access import UserContext
    from ragline.domain.tenancy import ApiKeyRecord, Scope
    from ragline.ports import ApiKeyLookup, TenantRegistry


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

    @classmethod
    def operator(cls, tenant_id: str) -> Principal:
        """The operator on the command line or a local server: every scope of one tenant."""
        from ragline.domain.tenancy import ALL_SCOPES  # the models: never on the authorizer's path

        return cls(tenant_id=tenant_id, scopes=frozenset(ALL_SCOPES))

    def require(self, scope: Scope, namespace: str | None = None) -> None:
        self.require_any((scope,), namespace)

    def require_any(self, scopes: tuple[Scope, ...], namespace: str | None = None) -> None:
        """A missing scope is 403; a namespace outside the allow-list is the *same* 404 as a missing
        one (an allow-listed key must not learn which other namespaces exist)."""
        if not self.scopes & set(scopes):
            raise errors.Forbidden(
                f"this key needs one of the scopes {', '.join(scopes)}", scopes=list(scopes)
            )
        if namespace is not None and not self.may_read(namespace):
            raise namespace_not_found(namespace)

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
        """The API Gateway authorizer context (string values only)."""
        return {
            "tenantId": self.tenant_id,
            "scopes": ",".join(sorted(self.scopes)),
            "namespaces": ",".join(sorted(self.namespaces)),
            "keyId": self.key_id,
        }

    @classmethod
    def from_context(cls, context: dict[str, object] | None) -> Principal:
        ctx = context or {}
        tenant = str(ctx.get("tenantId") or "")
        if not tenant:
            raise errors.Unauthorized("no tenant in the authorizer context")
        return cls(
            tenant_id=tenant,
            scopes=frozenset(s for s in str(ctx.get("scopes") or "").split(",") if s),
            namespaces=frozenset(n for n in str(ctx.get("namespaces") or "").split(",") if n),
            key_id=str(ctx.get("keyId") or ""),
        )


def authenticate(keys: ApiKeyLookup, authorization: str | None) -> Principal:
    """``Authorization: Bearer rl_…`` → the key's principal; anything else is Unauthorized: a
    malformed header, an unknown or revoked key, a key whose tenant is not ``active`` (a gone
    tenant's keys die with it). A valid key's last use is recorded, but that bookkeeping never fails
    the request when the store is merely busy or down."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not looks_like_api_key(token.strip()):
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
        tenant_id=grant.tenant_id, scopes=grant.scopes, namespaces=grant.namespaces, key_id=grant.key_id
    )


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
        )

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
