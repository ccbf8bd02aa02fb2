"""Tenants, API keys and who may do what.

A request carries an API key; the authorizer turns it into a :class:`Principal` (tenant, scopes,
namespace allow-list). Handlers take the tenant only from there and check the scope and namespace
again themselves (defence in depth: a misconfigured route or a cached policy cannot widen access).
"""

from __future__ import annotations

from collections.abc import Iterable

from ragline import errors
from ragline.domain.api import KeyList, KeyView, NewKey, NewKeyView
from ragline.domain.authority import Grant, widening
from ragline.domain.keys import hash_api_key, new_api_key, new_key_id
from ragline.domain.limits import Limits, looser
from ragline.domain.tenancy import ALL_SCOPES, ApiKeyRecord, Tenant, TenantStatus
from ragline.ports import TenantRegistry
from ragline.services.authentication import (
    MANAGEMENT_SCOPE,
    Principal,
    RegistryKeys,
    authenticate,
    namespace_not_found,
)
from ragline.services.identity_tokens import TokenVerifier


class TenancyService:
    def __init__(self, registry: TenantRegistry, *, tokens: TokenVerifier | None = None) -> None:
        self._registry = registry
        self._tokens = tokens or TokenVerifier()

    def create_tenant(
        self,
        tenant_id: str,
        name: str = "",
        max_runs_per_period: int | None = None,
        limits: Limits | None = None,
    ) -> Tenant:
        try:
            tenant = Tenant(
                tenant_id=tenant_id,
                name=name,
                max_runs_per_period=max_runs_per_period,
                limits=limits or Limits(),
            )
        except ValueError as exc:
            raise errors.InvalidRequest(str(exc).splitlines()[-1].strip()) from exc
        return self._registry.create_tenant(tenant)

    def set_limits(self, tenant_id: str, limits: Limits) -> Tenant:
        """Replace the tenant's limits (fields left unset: the deployment's defaults). Every process
        applies them within :data:`~ragline.services.tenant_gate.STATUS_TTL`."""
        tenant = self._registry.get_tenant(tenant_id)
        return self._registry.update_tenant(tenant.model_copy(update={"limits": limits}))

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
        self,
        tenant_id: str,
        *,
        name: str = "",
        scopes: Iterable[str],
        namespaces: Iterable[str] = (),
        assert_user: bool = False,
        require_user: bool = False,
        limits: Limits | None = None,
    ) -> tuple[str, ApiKeyRecord]:
        """A new key: the plaintext is returned here once and stored nowhere. ``assert_user``: its
        requests may name the end user they act for; ``require_user``: they must (implies it; never
        with ``admin``, which a request acting for an end user never exercises)."""
        if self._registry.get_tenant(tenant_id).status != "active":
            raise errors.Conflict(f"tenant {tenant_id!r} is not active", tenant=tenant_id)
        wanted = tuple(dict.fromkeys(scopes))
        unknown = [s for s in wanted if s not in ALL_SCOPES]
        if unknown or not wanted:
            raise errors.InvalidRequest(f"scopes must be some of {', '.join(ALL_SCOPES)}", unknown=unknown)
        if require_user and MANAGEMENT_SCOPE in wanted:  # an end user's request manages nothing
            raise errors.InvalidRequest(
                "a key that must act for an end user cannot hold admin: end users manage nothing",
                field="requireUser",
            )
        if limits is not None and limits.burst is not None and limits.requests_per_second is None:
            raise errors.InvalidRequest(  # a key has no default rate: its burst alone would limit nothing
                "a key's burst needs its own requestsPerSecond (a key has no default rate)",
                field="limits.burst",
            )
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
            may_assert_user=assert_user or require_user,
            requires_user=require_user,
            limits=limits,
        )
        self._registry.put_api_key(record)
        return plaintext, record

    def authenticate(self, authorization: str | None) -> Principal:
        """``Authorization: Bearer rl_…`` → the key's principal; anything else is Unauthorized
        (:func:`ragline.services.authentication.authenticate`, over this registry)."""
        return authenticate(RegistryKeys(self._registry), authorization, self._tokens)

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
        """Issuance never widens (:func:`ragline.domain.authority.widening`): the new key's scopes are
        some of the caller's, and an allow-listed caller names a subset of its own namespaces."""
        principal.require("admin")
        refused = widening(principal, Grant.of(body.scopes, body.namespaces))
        if refused is not None:
            if refused.namespaces:  # outside the list: the same 404 as a missing one
                raise namespace_not_found(sorted(refused.namespaces)[0])
            if refused.scopes:
                raise errors.Forbidden(
                    "a key cannot grant scopes it does not hold: "
                    f"this key holds {', '.join(sorted(principal.scopes))}",
                    scopes=sorted(refused.scopes),
                    held=sorted(principal.scopes),
                )
            raise errors.Forbidden(
                "an admin key limited to some namespaces cannot create an unrestricted key; "
                "name the namespaces",
                allowed=sorted(principal.namespaces),
            )
        own = next(
            (k.limits for k in self.list_keys(principal.tenant_id) if k.key_id == principal.key_id), None
        )
        lifted = looser(own, body.limits) if own is not None else []
        if lifted:  # a limited key would mint an unlimited one and be rid of its own limit
            raise errors.Forbidden(
                "a key cannot grant looser limits than its own: set limits no looser than this key's",
                limits=lifted,
                held=own.model_dump(by_alias=True, exclude_none=True) if own is not None else {},
            )
        plaintext, record = self.create_key(
            principal.tenant_id,
            name=body.name,
            scopes=body.scopes,
            namespaces=body.namespaces,
            assert_user=body.assert_user,
            require_user=body.require_user,
            limits=body.limits,
        )
        return NewKeyView(**KeyView.of(record).model_dump(by_alias=False), api_key=plaintext)

    def revoke(self, principal: Principal, key_id: str) -> KeyView:
        principal.require("admin")
        if not principal.unrestricted:
            reachable = {k.key_id for k in self.list_keys(principal.tenant_id) if principal.reaches(k)}
            if key_id not in reachable:
                raise errors.NotFound(f"no key {key_id!r}", key_id=key_id)
        return KeyView.of(self.revoke_key(principal.tenant_id, key_id))
