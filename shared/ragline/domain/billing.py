"""Billing periods and the run quota, which every :class:`~ragline.ports.UsageLedger` shares.

Usage is summed per tenant and *period*, the UTC calendar month (``YYYY-MM``). A tenant's quota is a
number of runs per period; the check is pure so each ledger only has to read its live counter.
"""

from __future__ import annotations

from datetime import UTC, datetime

from ragline import errors


def period_of(at: datetime) -> str:
    """The billing period holding ``at``: its UTC year and month, ``YYYY-MM``."""
    return at.astimezone(UTC).strftime("%Y-%m")


def current_period() -> str:
    return period_of(datetime.now(UTC))


def quota_reached(used: int, limit: int | None) -> bool:
    """``used`` runs leave no room under ``limit`` (``None``: unlimited, never reached)."""
    return limit is not None and used >= limit


def check_quota(used: int, limit: int | None, period: str) -> None:
    """Refuse another run when the period's counter already holds ``limit`` runs.

    Raises ``QuotaExceeded`` with details ``limit``, ``used`` and ``period``, as the port promises.
    """
    if quota_reached(used, limit):
        raise errors.QuotaExceeded(
            "run quota for this period is used up", limit=limit, used=used, period=period
        )
