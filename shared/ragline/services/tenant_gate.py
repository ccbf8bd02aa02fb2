"""The tenant's status, checked where the authorizer's answer is used, not only where it is made.

API Gateway caches the authorizer's answer (its context) for up to 300 s per key, so a tenant
suspended or deleted a moment ago still reaches the handlers with a context that says it may. Every
handler builds its caller through :meth:`TenantGate.caller`, which refuses a tenant that is not
``active`` with the authorizer's own answer (401, ``unauthorized``) — so no write (namespaces,
documents, keys) and no run (chat, search, hosting search) outlives the tenant by more than
:data:`STATUS_TTL`, the time this process keeps a tenant's status (one registry read per tenant per
interval, far shorter than the authorizer's cache).

The same place enforces fair sharing (:mod:`ragline.services.limits`), before any work: the request
rate of the caller's key and tenant in :meth:`TenantGate.caller` (every route), and the concurrent
runs in :meth:`TenantGate.run_slot` (chat, search, hosting search). The limits are read from the
tenant's record and its keys' records with its status (so a changed limit holds within ``ttl``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from ragline import errors
from ragline.ports import TenantRegistry
from ragline.services.authentication import Principal, with_asserted_user

if TYPE_CHECKING:
    from ragline.domain.limits import Limits
    from ragline.services.limits import FairShare, RunSlot

STATUS_TTL = 30.0
"""Seconds a process keeps a tenant's status: a suspension or deletion holds everywhere within it."""


class Known(NamedTuple):
    """What the gate keeps of a tenant for ``ttl``: its status, its limits and its keys' limits
    (read on the first request of a key it does not know, None until then)."""

    status: str | None
    limits: Limits | None
    keys: dict[str, Limits | None] | None
    until: float


class TenantGate:
    def __init__(
        self,
        registry: TenantRegistry,
        *,
        fair_share: FairShare | None = None,
        ttl: float = STATUS_TTL,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._registry = registry
        self._fair_share = fair_share
        self._ttl = ttl
        self._clock = clock
        self._wall_clock = wall_clock
        self._known: dict[str, Known] = {}
        self._lock = threading.Lock()

    def caller(
        self, context: dict[str, object] | None, headers: Mapping[str, str] | None = None
    ) -> Principal:
        """The principal of an authorizer ``context``, refused (``Unauthorized``, as the authorizer
        refuses it) when its tenant is suspended or deleted. A tenant without a record (the operator's
        local server) is let through: there is no status to hold it to.

        Here, not in the authorizer, the request's ``headers`` name the end user of a key with that
        right (:func:`~ragline.services.authentication.with_asserted_user`): API Gateway caches the
        authorizer's answer per ``Authorization`` header only. A token's user is in the context, and
        so is its expiry, checked here again: a cached answer must not outlive the token."""
        principal = Principal.from_context(context)
        if principal.expires_at and self._wall_clock() >= principal.expires_at:
            raise errors.Unauthorized("invalid identity token", reason="expired")
        status = self.status(principal.tenant_id)
        if status is not None and status != "active":
            raise errors.Unauthorized("this key's tenant is not active")
        principal = with_asserted_user(principal, headers)
        if self._fair_share is not None:  # before any work: a refusal is a 429 with Retry-After
            self._fair_share.admit(principal, *self._limits(principal))
        return principal

    def run_slot(self, principal: Principal) -> RunSlot:
        """A run slot of the caller's key and tenant, held until released (``TooManyRuns``: none
        free); a gate without fair sharing holds nothing."""
        from ragline.services.limits import RunSlot

        if self._fair_share is None:
            return RunSlot()
        return self._fair_share.run_slot(principal, *self._limits(principal))

    def status(self, tenant_id: str) -> str | None:
        """The tenant's status as of at most ``ttl`` seconds ago (None: no such tenant)."""
        return self._tenant(tenant_id).status

    def _tenant(self, tenant_id: str) -> Known:
        now = self._clock()
        with self._lock:
            known = self._known.get(tenant_id)
        if known is not None and now < known.until:
            return known
        try:
            tenant = self._registry.get_tenant(tenant_id)
            known = Known(tenant.status, tenant.limits, None, now + self._ttl)
        except errors.NotFound:
            known = Known(None, None, None, now + self._ttl)
        with self._lock:
            self._known[tenant_id] = known
        return known

    def _limits(self, principal: Principal) -> tuple[Limits, Limits | None]:
        """The tenant's limits as its record sets them, and the key's (None: the key sets none)."""
        from ragline.domain.limits import Limits

        known = self._tenant(principal.tenant_id)
        unknown_key = known.keys is None or principal.key_id not in known.keys  # e.g. created since
        if principal.key_id and unknown_key and known.status is not None:
            keys = {k.key_id: k.limits for k in self._registry.list_api_keys(principal.tenant_id)}
            keys.setdefault(principal.key_id, None)  # no such record: read again only after ttl
            known = known._replace(keys=keys)
            with self._lock:
                self._known[principal.tenant_id] = known
        return known.limits or Limits(), (known.keys or {}).get(principal.key_id)
