"""Metering: each run charged once against the tenant's quota, and the rate limits shared by
every process of a deployment.

Part of :mod:`ragline.ports` (which re-exports every port); the docstrings are the contracts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: importing the ports must stay cheap (cold starts)
    from ragline.domain.billing import CompletedRun
    from ragline.domain.limits import Bucket, Rate
    from ragline.domain.models import IngestUsage, RunUsage


class UsageLedger(Protocol):
    """Counts each run's usage exactly once, per tenant and period (``YYYY-MM``, UTC), and makes a run
    id (a client's ``Idempotency-Key``) name one request whose work is done once.

    Contract:
    - ``reserve(tenant, run, limit, fingerprint)`` is one atomic step before any work. A new run id:
      refused with ``QuotaExceeded`` (details: limit, used, period; nothing written) when the live
      counter already holds ``limit`` charged runs (``None``: unlimited), else a marker ``in_progress``
      with the fingerprint is written and ``None`` returned — do the work, then ``commit``. A known
      run id (decided by :func:`~ragline.domain.billing.check_replay`, before the quota): another
      fingerprint raises ``IdempotencyKeyReused``; a completed run returns its ``CompletedRun`` (first
      charge and recorded result; nothing is charged, no work may be done); a run still in progress
      raises ``RunInProgress``, unless its marker is older than ``STALE_AFTER`` — then it is taken over
      (``None``). Of concurrent reservations of one run id exactly one gets ``None``. Reserving
      charges nothing: runs reserved together may all pass one remaining slot (overshoot is bounded
      by concurrency). Whatever a run id's length, its marker can be stored (adapters bound the key).
    - ``commit(tenant, run, usage, limit, result, fingerprint)`` charges the run once: the first commit of a
      ``run_id`` adds ``usage`` and one run to the period counter and completes the marker with
      ``result`` (at most ``MAX_RESULT_BYTES``) in one atomic step; every later commit of the same
      ``run_id`` (sequential or concurrent, from any process) is a no-op that returns the first
      charge. A commit is never lost for being over quota (the work was done): it is recorded anyway.
      A commit without a reservation is allowed (it charges as a new run).
    - ``complete_uncharged(tenant, run, result, fingerprint)`` ends a run that did no work (it spent
      nothing: refused before its first model call or search) without charging it: in one atomic step
      the marker is completed with ``result`` and a zero charge, and the counter is untouched (no run
      counted, no quota slot used). It is an ending like ``commit``: of the two, the first for a
      ``run_id`` wins, and every later ``commit`` or ``complete_uncharged`` of it (sequential or
      concurrent) is a no-op returning the first charge. Reserving it again replays ``result``
      (zero usage); when it recorded no result the very same request (same fingerprint) takes the
      run id over instead (``None``: nothing was done, so doing it now is not doing it twice).
    - ``period_usage`` / ``period_runs`` read the counter.
    - ``record_ingest(tenant, entry, usage)`` adds one document version's indexing usage to the
      period's ingestion sums (``period_ingestion``), exactly once per ``entry_id``: the first record
      of an entry adds it and returns True, in one atomic step with a marker of the entry; every later
      record of it (sequential or concurrent, from any process, with any numbers) adds nothing and
      returns False. It is not a run: ``period_runs``, ``period_usage`` and the run quota are untouched,
      and it is never refused. Whatever an entry id's length, its marker can be stored.
    """

    def reserve(
        self, tenant_id: str, run_id: str, limit: int | None = None, fingerprint: str = ""
    ) -> CompletedRun | None: ...

    def commit(
        self,
        tenant_id: str,
        run_id: str,
        usage: RunUsage,
        limit: int | None = None,
        result: str | None = None,
        fingerprint: str = "",
    ) -> RunUsage: ...

    def complete_uncharged(
        self, tenant_id: str, run_id: str, result: str | None = None, fingerprint: str = ""
    ) -> RunUsage: ...

    def period_usage(self, tenant_id: str, period: str) -> RunUsage: ...

    def period_runs(self, tenant_id: str, period: str) -> int: ...

    def record_ingest(self, tenant_id: str, entry_id: str, usage: IngestUsage) -> bool: ...

    def period_ingestion(self, tenant_id: str, period: str) -> IngestUsage: ...

    def purge_tenant(self, tenant_id: str) -> int:
        """Drop what quotes or names the tenant's content — its runs' recorded results and its
        ingestion entries (keyed by document) — keeping every charge and period counter (the
        operator's billing record); returns how many items changed. Idempotent."""
        ...


class RateLimiter(Protocol):
    """Token buckets and run slots shared by every process of a deployment (fair sharing, issue 30).

    Contract (``now`` is the limiter's own clock, microseconds):
    - ``take(bucket, rate)`` takes one token from ``bucket`` in one atomic step and returns 0, or
      takes nothing and returns the microseconds until one is due (> 0). Its answers are those of
      :func:`~ragline.domain.limits.admit` applied to the requests in *some* serial order, whatever
      the interleaving of processes: of concurrent takes from a bucket holding ``n`` tokens, exactly
      ``n`` are admitted. A bucket not used for long may be forgotten (it is then full).
    - ``lease(bucket, slots, seconds)`` holds one of ``slots`` run slots of ``bucket`` and returns a
      lease id, or returns None (nothing held) when ``slots`` live leases hold them all. A lease
      lives until ``release`` or for ``seconds`` (so a crashed holder frees its slot); of concurrent
      leases never more than ``slots`` are live at once.
    - ``release(bucket, lease_id)`` frees that lease's slot; idempotent, and a no-op on a slot that
      expired and was taken by another lease.
    - ``count_refusal(tenant, period)`` adds one to the tenant's refused requests of ``period``
      (``YYYY-MM``); ``refusals`` reads it (0 when none).
    - ``purge_tenant(tenant)`` forgets every bucket, lease and count of the tenant; idempotent.
    - ``clock()`` is the limiter's time in microseconds, the time its buckets are kept in.
    """

    clock: Callable[[], int]

    def take(self, bucket: Bucket, rate: Rate) -> int: ...

    def lease(self, bucket: Bucket, slots: int, seconds: float) -> str | None: ...

    def release(self, bucket: Bucket, lease_id: str) -> None: ...

    def count_refusal(self, tenant_id: str, period: str) -> None: ...

    def refusals(self, tenant_id: str, period: str) -> int: ...

    def purge_tenant(self, tenant_id: str) -> int: ...
