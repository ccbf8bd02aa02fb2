"""One place that charges: every run (chat or search) is reserved before work and finished once.

:meth:`Metering.start` checks the tenant's quota on the live counter and returns a :class:`MeteredRun`;
its :meth:`~MeteredRun.finish` commits the run's usage exactly once, whether it is reached on success,
on error or on abort — and the ledger makes a replayed run id (client retry, Lambda retry) a no-op.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from ragline import errors
from ragline.domain.api import Usage, UsageReport
from ragline.domain.billing import current_period
from ragline.domain.models import RunUsage
from ragline.ports import TenantRegistry, UsageLedger
from ragline.services.tenancy import Principal


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

    def usage_report(self, principal: Principal, period: str | None = None) -> UsageReport:
        """The tenant's runs and usage in ``period`` (``YYYY-MM``; default: the current one)."""
        principal.require("admin")
        if not principal.unrestricted:  # tenant-wide figures would show other namespaces' use
            raise errors.Forbidden("usage is tenant-wide: it needs an admin key without a namespace list")
        period = period or current_period()
        return UsageReport(
            period=period,
            runs=self._ledger.period_runs(principal.tenant_id, period),
            usage=Usage.of(self._ledger.period_usage(principal.tenant_id, period)),
        )

    def _limit(self, tenant_id: str) -> int | None:
        """The tenant's run quota; a tenant without a record (local use) is unlimited."""
        try:
            return self._registry.get_tenant(tenant_id).max_runs_per_period
        except errors.NotFound:
            return None
