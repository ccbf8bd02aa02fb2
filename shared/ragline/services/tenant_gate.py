"""The tenant's status, checked where the authorizer's answer is used, not only where it is made.

API Gateway caches the authorizer's answer (its context) for up to 300 s per key, so a tenant
suspended or deleted a moment ago still reaches the handlers with a context that says it may. Every
handler builds its caller through :meth:`TenantGate.caller`, which refuses a tenant that is not
``active`` with the authorizer's own answer (401, ``unauthorized``) — so no write (namespaces,
documents, keys) and no run (chat, search, hosting search) outlives the tenant by more than
:data:`STATUS_TTL`, the time this process keeps a tenant's status (one registry read per tenant per
interval, far shorter than the authorizer's cache).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from ragline import errors
from ragline.ports import TenantRegistry
from ragline.services.authentication import Principal, with_asserted_user

STATUS_TTL = 30.0
"""Seconds a process keeps a tenant's status: a suspension or deletion holds everywhere within it."""


class TenantGate:
    def __init__(
        self,
        registry: TenantRegistry,
        *,
        ttl: float = STATUS_TTL,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._registry = registry
        self._ttl = ttl
        self._clock = clock
        self._wall_clock = wall_clock
        self._known: dict[str, tuple[str | None, float]] = {}
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
        return with_asserted_user(principal, headers)

    def status(self, tenant_id: str) -> str | None:
        """The tenant's status as of at most ``ttl`` seconds ago (None: no such tenant)."""
        now = self._clock()
        with self._lock:
            known = self._known.get(tenant_id)
        if known is not None and now < known[1]:
            return known[0]
        try:
            status: str | None = self._registry.get_tenant(tenant_id).status
        except errors.NotFound:
            status = None
        with self._lock:
            self._known[tenant_id] = (status, now + self._ttl)
        return status
