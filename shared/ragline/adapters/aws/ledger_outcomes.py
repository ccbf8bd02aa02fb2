"""What a cancelled usage-ledger transaction decides, and the loop that sends one until it decides.

DynamoDB answers a ``TransactWriteItems`` whose condition failed with its ``CancellationReasons``, one
per item, by position (:mod:`ragline.adapters.aws.ledger` lists each transaction's items). Read
here, each cancellation either decides the call (a replay, already charged, over quota, already
recorded), raises (quota used up, throttled, failed), or decides nothing: a conflict with a
concurrent transaction, or the same token still in flight, is :data:`RETRY`, and
:func:`until_decided` sends the transaction again after a pause.

Only the reads a decision needs when DynamoDB returned no old item (``ALL_OLD`` is best effort) go
back to the table, through the callables the ledger passes in; nothing here sends a write.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal, TypeVar

from ragline import errors
from ragline.adapters.aws.ledger_items import (
    CANCELLED,
    IN_PROGRESS,
    PARAMETER_MISMATCH,
    classify_cancellation,
    marker_from_item,
    runs_from_item,
    usage_from_item,
)
from ragline.adapters.boto import error_code
from ragline.domain.billing import CompletedRun, RunMarker, check_replay, period_of
from ragline.domain.models import RunUsage


class Retry:
    """An attempt that decided nothing (a conflict, a token in flight): back off and send again."""


RETRY = Retry()
_T = TypeVar("_T")
Decided = tuple[Literal["charged", "already_charged", "over_quota"], RunUsage | None, int | None]
"""A commit transaction's outcome: (outcome, the stored charge, runs used)."""


class Cancelled(Exception):
    """A transaction DynamoDB cancelled, refused for its token, or is still applying: ``code`` is the
    error code, ``reasons`` the per-item ``CancellationReasons`` (empty unless cancelled)."""

    def __init__(self, code: str, reasons: list[dict[str, Any]]) -> None:
        super().__init__(code)
        self.code = code
        self.reasons = reasons


def as_cancelled(exc: Any) -> BaseException | None:
    """A ``ClientError`` the ledger decides on itself, as :class:`Cancelled`; None: any other error
    (translated as usual by :func:`~ragline.adapters.aws.errors.call`)."""
    code = error_code(exc)
    if code in (CANCELLED, PARAMETER_MISMATCH, IN_PROGRESS):
        return Cancelled(code, list(exc.response.get("CancellationReasons") or []))
    return None


def after_reserve(
    cancelled: Cancelled,
    *,
    fingerprint: str,
    now: datetime,
    limit: int | None,
    stored_marker: Callable[[], RunMarker | None],
    runs_used: Callable[[str], int],
) -> CompletedRun | Retry:
    """A cancelled reservation: item 0 (the marker) failed → the run id is taken, and its marker
    says replay, 409 or 422 (:func:`~ragline.domain.billing.check_replay`); item 1 (the counter)
    failed → ``QuotaExceeded``."""
    codes = [str(r.get("Code") or "None") for r in cancelled.reasons]
    code = dict(enumerate(codes)).get
    if code(0) == "ConditionalCheckFailed":
        old = cancelled.reasons[0].get("Item")
        marker = marker_from_item(old) if old else stored_marker()
        if marker is not None:
            replay = check_replay(marker, fingerprint, now)
            if replay is not None:
                return replay
        return RETRY  # gone or just turned stale between the write and the read
    if code(1) == "ConditionalCheckFailed":
        period = period_of(now)
        counter = cancelled.reasons[1].get("Item")
        used = runs_from_item(counter) if counter else runs_used(period)
        raise errors.QuotaExceeded(
            "run quota for this period is used up", limit=limit, used=used, period=period
        ) from cancelled
    if "TransactionConflict" in codes or cancelled.code == IN_PROGRESS:
        return RETRY
    raise errors.DependencyFailed(
        "DynamoDB cancelled the run reservation", reasons=codes, service="DynamoDB",
        action="transact_write_items", aws_code=cancelled.code,
    ) from cancelled  # fmt: skip


def after_charge(
    cancelled: Cancelled, *, stored_charge: Callable[[], RunUsage | None], table: str, run_id: str
) -> Decided | Retry:
    """A charge (commit or uncharged completion) cancelled by its conditions, by
    :func:`~ragline.adapters.aws.ledger_items.classify_cancellation`: already charged (the first
    charge, from the old marker), over quota (with the runs used), or nothing decided."""
    outcome = classify_cancellation(cancelled.reasons)
    if outcome == "already_charged":
        old = cancelled.reasons[0].get("Item")
        stored = usage_from_item(old) if old else stored_charge()
        if stored is None:
            raise errors.DependencyFailed(
                "run marker exists but could not be read", table=table, run_id=run_id
            ) from cancelled
        return "already_charged", stored, None
    if outcome == "over_quota":
        counter = cancelled.reasons[1].get("Item")
        return "over_quota", None, runs_from_item(counter) if counter else None
    if outcome == "conflict":  # a concurrent transaction on the counter or the marker
        return RETRY
    details = {"service": "DynamoDB", "action": "transact_write_items", "aws_code": CANCELLED}
    codes = [str(r.get("Code")) for r in cancelled.reasons]
    if outcome == "throttled":
        raise errors.Throttled("DynamoDB throttled the usage charge", reasons=codes, **details) from cancelled
    raise errors.DependencyFailed(
        "DynamoDB cancelled the usage charge", reasons=codes, **details
    ) from cancelled


def after_ingest(cancelled: Cancelled) -> bool | Retry:
    """A cancelled ingestion record: item 0 (the marker) failed → already recorded (False)."""
    outcome = classify_cancellation(cancelled.reasons)
    if outcome == "already_charged":
        return False
    if outcome == "conflict" or cancelled.code == IN_PROGRESS:
        return RETRY
    codes = [str(r.get("Code")) for r in cancelled.reasons]
    error = errors.Throttled if outcome == "throttled" else errors.DependencyFailed
    raise error(
        "DynamoDB cancelled the ingestion record", reasons=codes, service="DynamoDB",
        action="transact_write_items", aws_code=cancelled.code,
    ) from cancelled  # fmt: skip


def until_decided(
    attempt: Callable[[], _T | Retry],
    attempts: int,
    backoff: Callable[[int], None],
    what: str,
    **details: str,
) -> _T:
    """Run ``attempt`` (one transaction) until it decides, at most ``attempts`` times, calling
    ``backoff(n)`` between the attempts it leaves undecided; out of attempts → ``Throttled``."""
    for n in range(attempts):
        outcome = attempt()
        if not isinstance(outcome, Retry):
            return outcome
        if n < attempts - 1:
            backoff(n)
    raise errors.Throttled(
        f"{what} kept meeting concurrent transactions",
        service="DynamoDB", action="transact_write_items", attempts=attempts, **details,
    )  # fmt: skip
