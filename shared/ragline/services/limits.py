"""Fair sharing between tenants (issue 30): a request rate and concurrent runs per tenant and per key.

Every request passes :meth:`FairShare.admit` where its caller is built (:mod:`ragline.services.
tenant_gate`), before any work: one token from the key's bucket, then one from the tenant's. The key
goes first so that a key over its own limit is refused without spending its tenant's tokens (one
noisy key must not starve the tenant's other keys); a request the tenant refuses has spent one of
its key's tokens, which only slows that key. A run (chat, search, hosting search) then holds a run
slot of its key and of its tenant (:meth:`FairShare.run_slot`) from before it is reserved until it
ends; a slot's lease outlives any run (:data:`RUN_LEASE_SECONDS`, the longest function timeout), so
a crashed holder frees it. A refusal is :class:`~ragline.errors.RateLimited` (429, ``Retry-After``),
counted per tenant and period (the usage report shows it).

A refused bucket is remembered in the process until its ``Retry-After`` moment (:data:`REMEMBERED`
buckets at most): a bucket's next admissible instant only moves later, so every request before it
is refused here without a store write — a tenant bursting far over its limit costs the store one
conditional write per refusal *window*, not per request, and leaves the capacity to its neighbours.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, TypeVar

from ragline import errors
from ragline.domain.billing import current_period
from ragline.domain.limits import MICROS, Bucket, Limits, Rate

if TYPE_CHECKING:
    from ragline.ports import RateLimiter
    from ragline.services.authentication import Principal

_log = logging.getLogger(__name__)
T = TypeVar("T")

RUN_LEASE_SECONDS = 960.0
"""A run slot's lease: longer than any run can last (the longest function timeout, 900 s, plus a
margin), so it never expires under a live run, and frees a crashed run's slot within it."""

REMEMBERED = 10_000
"""Refused buckets a process remembers at most (past it, the expired ones are forgotten first)."""


class RunSlot:
    """The run slots one run holds; :meth:`release` frees them once (later calls do nothing)."""

    def __init__(self, limiter: RateLimiter | None = None, held: list[tuple[Bucket, str]] | None = None):
        self._limiter = limiter
        self._held = list(held or ())
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            held, self._held = self._held, []
        for bucket, lease_id in reversed(held):
            try:
                self._limiter.release(bucket, lease_id)  # type: ignore[union-attr]
            except errors.RaglineError:  # the lease expires on its own; the run's answer stands
                _log.warning("a run slot was not released", extra={"tenant": bucket.tenant_id})

    def __enter__(self) -> RunSlot:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()

    def around(self, events: Iterator[T]) -> Generator[T, None, None]:
        """``events``, then the slots released: when the stream ends, fails or is closed."""
        try:
            yield from events
        finally:
            self.release()


class FairShare:
    """The limits of a request's tenant (``tenant``: its record's, over the deployment's
    ``defaults``) and key (``key``: only what the key's record sets), enforced on ``limiter``."""

    def __init__(
        self,
        limiter: RateLimiter,
        *,
        defaults: Limits | None = None,
        lease_seconds: float = RUN_LEASE_SECONDS,
    ) -> None:
        self._limiter = limiter
        self.defaults = defaults or Limits()
        self._lease_seconds = lease_seconds
        self._refused_until: dict[tuple[Bucket, Rate], int] = {}
        """A refused bucket (at a rate) → the limiter's instant (µs) before which it admits nothing."""
        self._lock = threading.Lock()

    def _buckets(
        self, principal: Principal, tenant: Limits, key: Limits | None
    ) -> list[tuple[Bucket, Limits]]:
        buckets = [(Bucket(principal.tenant_id, principal.key_id), key)] if principal.key_id and key else []
        return [*buckets, (Bucket(principal.tenant_id), tenant.over(self.defaults))]

    def admit(self, principal: Principal, tenant: Limits, key: Limits | None = None) -> None:
        """Take one request token of the key, then of the tenant; ``RateLimited`` when either has none."""
        for bucket, limits in self._buckets(principal, tenant, key):
            rate = limits.rate()
            if not rate:
                continue
            wait = self._remembered(bucket, rate)
            if wait is None:
                wait = self._limiter.take(bucket, rate)
                if wait:
                    self._remember(bucket, rate, wait)
            if wait:
                raise self._refused(bucket, "requestsPerSecond", -(-wait // MICROS))

    def _remembered(self, bucket: Bucket, rate: Rate) -> int | None:
        """Microseconds left of a refusal this process saw for the bucket at this rate, or None."""
        with self._lock:
            until = self._refused_until.get((bucket, rate))
        left = None if until is None else until - self._limiter.clock()
        return left if left is not None and left > 0 else None

    def _remember(self, bucket: Bucket, rate: Rate, wait: int) -> None:
        now = self._limiter.clock()
        with self._lock:
            if len(self._refused_until) >= REMEMBERED:
                expired = [k for k, until in self._refused_until.items() if until <= now]
                for k in expired:
                    del self._refused_until[k]
                if len(self._refused_until) >= REMEMBERED:
                    self._refused_until.clear()
            self._refused_until[(bucket, rate)] = now + wait

    def run_slot(self, principal: Principal, tenant: Limits, key: Limits | None = None) -> RunSlot:
        """Hold a run slot of the key and of the tenant; ``TooManyRuns`` (nothing held) when either
        has all of its slots in use."""
        held: list[tuple[Bucket, str]] = []
        for bucket, limits in self._buckets(principal, tenant, key):
            if limits.max_concurrent_runs is None:
                continue
            lease_id = self._limiter.lease(bucket, limits.max_concurrent_runs, self._lease_seconds)
            if lease_id is None:
                RunSlot(self._limiter, held).release()  # the key's slot, when the tenant has none
                raise self._refused(bucket, "maxConcurrentRuns", 1, errors.TooManyRuns)
            held.append((bucket, lease_id))
        return RunSlot(self._limiter, held)

    def throttled(self, tenant_id: str, period: str) -> int:
        """The tenant's refused requests in ``period``."""
        return self._limiter.refusals(tenant_id, period)

    def purge_tenant(self, tenant_id: str) -> int:
        return self._limiter.purge_tenant(tenant_id)

    def _refused(
        self,
        bucket: Bucket,
        limit: str,
        retry_after: int,
        kind: type[errors.RateLimited] = errors.RateLimited,
    ) -> errors.RateLimited:
        try:
            self._limiter.count_refusal(bucket.tenant_id, current_period())
        except errors.RaglineError:  # the refusal stands; only its count is short by one
            _log.warning("a refusal was not counted", extra={"tenant": bucket.tenant_id})
        whose = f"key {bucket.key_id}" if bucket.key_id else "tenant"
        what = "concurrent runs" if kind is errors.TooManyRuns else "request rate"
        return kind(
            f"this {whose}'s {what} is at its limit; retry after {retry_after} s",
            retry_after=max(1, retry_after),
            limit=limit,
            scope="key" if bucket.key_id else "tenant",
        )
