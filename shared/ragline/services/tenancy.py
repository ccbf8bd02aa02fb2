"""Tenants, API keys and who may do what.

A request carries an API key; the authorizer turns it into a :class:`Principal` (tenant, scopes,
namespace allow-list). Handlers take the tenant only from there and check the scope and namespace
again themselves (defence in depth: a misconfigured route or a cached policy cannot widen access).
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass

from ragline import errors
from ragline.domain.api import KeyList, KeyView, NewKey, NewKeyView
from ragline.domain.keys import hash_api_key, looks_like_api_key, new_api_key, new_key_id
from ragline.domain.tenancy import ALL_SCOPES, ApiKeyRecord, Scope, Tenant, TenantStatus
from ragline.ports import TenantRegistry


@dataclass(frozen=True)
class Principal:
    tenant_id: str
    scopes: frozenset[str]
    namespaces: frozenset[str] = frozenset()
    """Empty: every namespace of the tenant."""
    key_id: str = ""

    @classmethod
    def operator(cls, tenant_id: str) -> Principal:
        """The operator on the command line or a local server: every scope of one tenant."""
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


class TenancyService:
    def __init__(self, registry: TenantRegistry) -> None:
        self._registry = registry

    def create_tenant(self, tenant_id: str, name: str = "", max_runs_per_period: int | None = None) -> Tenant:
        try:
            tenant = Tenant(tenant_id=tenant_id, name=name, max_runs_per_period=max_runs_per_period)
        except ValueError as exc:
            raise errors.InvalidRequest(str(exc).splitlines()[-1].strip()) from exc
        return self._registry.create_tenant(tenant)

    def set_status(self, tenant_id: str, status: TenantStatus) -> Tenant:
        """Suspend, reactivate or delete a tenant. Only an ``active`` tenant's keys authenticate; a
        ``deleted`` tenant stays deleted, and its keys are revoked."""
        tenant = self._registry.get_tenant(tenant_id)
        if tenant.status == "deleted" and status != "deleted":
            raise errors.Conflict(f"tenant {tenant_id!r} was deleted", tenant=tenant_id)
        updated = self._registry.update_tenant(tenant.model_copy(update={"status": status}))
        if status == "deleted":
            for key in self._registry.list_api_keys(tenant_id):
                if key.active:
                    self._registry.revoke_api_key(tenant_id, key.key_id)
        return updated

    def create_key(
        self, tenant_id: str, *, name: str = "", scopes: Iterable[str], namespaces: Iterable[str] = ()
    ) -> tuple[str, ApiKeyRecord]:
        """A new key: the plaintext is returned here once and stored nowhere."""
        if self._registry.get_tenant(tenant_id).status != "active":
            raise errors.Conflict(f"tenant {tenant_id!r} is not active", tenant=tenant_id)
        wanted = tuple(dict.fromkeys(scopes))
        unknown = [s for s in wanted if s not in ALL_SCOPES]
        if unknown or not wanted:
            raise errors.InvalidRequest(f"scopes must be some of {', '.join(ALL_SCOPES)}", unknown=unknown)
        allowed = tuple(dict.fromkeys(namespaces))
        for ns in allowed:
            self._registry.get_namespace(tenant_id, ns)
        plaintext = new_api_key()
        record = ApiKeyRecord(
            key_id=new_key_id(),
            key_hash=hash_api_key(plaintext),
            tenant_id=tenant_id,
            name=name,
            scopes=wanted,  # type: ignore[arg-type]
            namespaces=allowed,
        )
        self._registry.put_api_key(record)
        return plaintext, record

    def authenticate(self, authorization: str | None) -> Principal:
        """``Authorization: Bearer rl_…`` → the key's principal; anything else is Unauthorized."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer" or not looks_like_api_key(token.strip()):
            raise errors.Unauthorized("missing or malformed API key")
        record = self._registry.find_api_key(hash_api_key(token.strip()))
        if record is None or not record.active:
            raise errors.Unauthorized("unknown or revoked API key")
        try:
            tenant = self._registry.get_tenant(record.tenant_id)
        except errors.NotFound:
            tenant = None
        if tenant is None or tenant.status != "active":  # a gone tenant's keys die with it
            raise errors.Unauthorized("this key's tenant is not active")
        with suppress(*errors.RETRYABLE):  # last-used bookkeeping must never fail a valid request
            self._registry.touch_api_key(record.key_hash)
        return Principal(
            tenant_id=record.tenant_id,
            scopes=frozenset(record.scopes),
            namespaces=frozenset(record.namespaces),
            key_id=record.key_id,
        )

    def list_keys(self, tenant_id: str) -> list[ApiKeyRecord]:
        return self._registry.list_api_keys(tenant_id)

    def revoke_key(self, tenant_id: str, key_id: str) -> ApiKeyRecord:
        return self._registry.revoke_api_key(tenant_id, key_id)

    # -- the keys API: an admin key manages its own tenant's keys, within its own reach ----------
    def keys(self, principal: Principal) -> KeyList:
        principal.require("admin")
        reachable = [k for k in self.list_keys(principal.tenant_id) if principal.reaches(k)]
        return KeyList(keys=[KeyView.of(k) for k in reachable])

    def issue_key(self, principal: Principal, body: NewKey) -> NewKeyView:
        """An allow-listed admin mints only keys limited to a subset of its own namespaces."""
        principal.require("admin")
        if not principal.unrestricted:
            if not body.namespaces:
                raise errors.Forbidden(
                    "an admin key limited to some namespaces cannot create an unrestricted key; "
                    "name the namespaces",
                    allowed=sorted(principal.namespaces),
                )
            for ns in body.namespaces:
                principal.require("admin", ns)  # outside the list: the same 404 as a missing one
        plaintext, record = self.create_key(
            principal.tenant_id, name=body.name, scopes=body.scopes, namespaces=body.namespaces
        )
        return NewKeyView(**KeyView.of(record).model_dump(by_alias=False), api_key=plaintext)

    def revoke(self, principal: Principal, key_id: str) -> KeyView:
        principal.require("admin")
        if not principal.unrestricted:
            reachable = {k.key_id for k in self.list_keys(principal.tenant_id) if principal.reaches(k)}
            if key_id not in reachable:
                raise errors.NotFound(f"no key {key_id!r}", key_id=key_id)
        return KeyView.of(self.revoke_key(principal.tenant_id, key_id))


def namespace_not_found(namespace: str) -> errors.NamespaceNotFound:
    """The one answer for a namespace that does not exist *or* is outside the caller's allow-list."""
    return errors.NamespaceNotFound(f"namespace {namespace!r} does not exist", namespace=namespace)
