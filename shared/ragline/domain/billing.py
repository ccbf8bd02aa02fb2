"""Billing periods, the run quota and run idempotency, which every :class:`~ragline.ports.UsageLedger`
shares.

Usage is summed per tenant and *period*, the UTC calendar month (``YYYY-MM``). A tenant's quota is a
number of runs per period; the check is pure so each ledger only has to read its live counter.

A run id (a client's ``Idempotency-Key``) names one request: its marker keeps the request's
:func:`request_fingerprint` and its state, and :func:`check_replay` decides what a second reservation
of the same id gets (the recorded result, ``RunInProgress`` or ``IdempotencyKeyReused``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel

from ragline import errors
from ragline.domain.models import RunUsage

RunState = Literal["in_progress", "completed"]
STALE_AFTER = timedelta(minutes=15)
"""An ``in_progress`` marker older than this (Lambda's longest run) belongs to a crashed run: the same
request may take it over, so a crash never blocks its key for good."""
MAX_RESULT_BYTES = 64 * 1024
"""The largest recorded result a completed marker keeps (a replay of a larger one gets a summary)."""


@dataclass(frozen=True)
class RunMarker:
    """What a ledger knows of a run id: its state, its request's fingerprint, its charge and result.

    ``fingerprint`` is ``""`` for markers written before fingerprints were kept (they match any).
    ``charged`` is False for a run completed without a charge (it did no work).
    """

    state: RunState
    fingerprint: str
    started_at: datetime
    usage: RunUsage | None = None
    result: str | None = None
    charged: bool = True


@dataclass(frozen=True)
class CompletedRun:
    """A replay's answer: the run's first charge and the result recorded with it (``None``: none)."""

    usage: RunUsage
    result: str | None = None


def request_fingerprint(
    method: str,
    route: str,
    body: BaseModel,
    *,
    ignore: set[str] | None = None,
    reach: Mapping[str, Iterable[str]] | None = None,
) -> str:
    """sha256 of method, route, the validated body as canonical JSON (sorted keys) and the caller's
    ``reach`` for this run (what decides what it may see: see ``ragline.services.replays.reach_of``).

    Computed from the parsed model, not the raw bytes: spacing, key order and defaults spelled out
    or left out do not make two equal requests differ. The reach is part of the request: a replay is
    a read of the recorded result, so a caller that may reach something else is another request
    (``IdempotencyKeyReused``), never handed a result it could not have produced itself.
    """
    document = {
        "body": body.model_dump(mode="json", exclude=ignore),
        "reach": {name: sorted(set(values)) for name, values in (reach or {}).items()},
    }
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(f"{method.upper()} {route}\n{canonical}".encode()).hexdigest()


def check_replay(marker: RunMarker, fingerprint: str, now: datetime) -> CompletedRun | None:
    """What reserving an existing run id means: ``CompletedRun`` (replay it), or ``None`` when the
    same request may take the run id over: a stale ``in_progress`` marker, or a run that ended
    uncharged without a result (it did no work and left nothing to replay, so running it now does no
    work twice). Raises ``IdempotencyKeyReused`` for another request under the key, ``RunInProgress``
    while the first is still running."""
    if marker.fingerprint and fingerprint and marker.fingerprint != fingerprint:
        raise errors.IdempotencyKeyReused("this Idempotency-Key was already used for a different request")
    if marker.state == "completed":
        if reusable(marker, fingerprint):
            return None
        return CompletedRun(usage=marker.usage or RunUsage(), result=marker.result)
    if now - marker.started_at >= STALE_AFTER:
        return None
    raise errors.RunInProgress("a run with this Idempotency-Key is still in progress", retry_after_seconds=5)


def reusable(marker: RunMarker, fingerprint: str) -> bool:
    """A completed run the same request (the very same fingerprint) may run again: it was not charged
    and recorded no result."""
    return (
        marker.state == "completed"
        and not marker.charged
        and marker.result is None
        and marker.fingerprint == fingerprint
    )


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
