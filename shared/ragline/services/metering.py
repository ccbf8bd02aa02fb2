"""One place that charges: every run (chat or search) is reserved before work and finished once.

:meth:`Metering.start` checks the tenant's quota on the live counter and returns a :class:`MeteredRun`;
its :meth:`~MeteredRun.finish` commits the run's usage exactly once, whether it is reached on success,
on error or on abort — and the ledger makes a replayed run id (client retry, Lambda retry) a no-op.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from ragline import errors
from ragline.domain.models import RunUsage
from ragline.ports import TenantRegistry, UsageLedger

T = TypeVar("T")


@dataclass
class MeteredRun:
    tenant_id: str
    run_id: str
    ledger: UsageLedger
    limit: int | None = None
    usage: RunUsage = field(default_factory=RunUsage)
    charged: RunUsage | None = None

    def finish(self) -> RunUsage:
        """Commit the usage once; later calls return the first charge."""
        if self.charged is None:
            self.charged = self.ledger.commit(self.tenant_id, self.run_id, self.usage, self.limit)
        return self.charged


class Metering:
    def __init__(self, *, ledger: UsageLedger, registry: TenantRegistry) -> None:
        self._ledger = ledger
        self._registry = registry

    def start(self, tenant_id: str, run_id: str | None = None) -> MeteredRun:
        """Refuse with ``QuotaExceeded`` before any work when the tenant's quota is used up."""
        limit = self._limit(tenant_id)
        run = MeteredRun(
            tenant_id=tenant_id, run_id=run_id or uuid.uuid4().hex, ledger=self._ledger, limit=limit
        )
        self._ledger.reserve(tenant_id, run.run_id, limit)
        return run

    def run(self, tenant_id: str, run_id: str | None, work: Callable[[RunUsage], T]) -> T:
        """Reserve, do ``work`` (it adds to the usage it is given), and charge once — also on error."""
        run = self.start(tenant_id, run_id)
        try:
            return work(run.usage)
        finally:
            run.finish()

    def _limit(self, tenant_id: str) -> int | None:
        """The tenant's run quota; a tenant without a record (local use) is unlimited."""
        try:
            return self._registry.get_tenant(tenant_id).max_runs_per_period
        except errors.NotFound:
            return None
