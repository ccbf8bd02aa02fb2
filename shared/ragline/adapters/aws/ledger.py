"""Production :class:`~ragline.ports.UsageLedger`: each run charged exactly once, in one transaction.

Two kinds of item in one table (``UsageTable`` in ``template.yaml``):

- the tenant's period counter, ``pk = "TENANT#<tenant>"``, ``sk = "PERIOD#<YYYY-MM>"``: ``runs`` plus
  one number per :class:`RunUsage` field;
- a run marker, ``pk = "RUN#<tenant>#<sha256(run_id)>"``, ``sk = "RUN"`` (hashed: a client's key of any
  length gives a key far under DynamoDB's 2,048 bytes): the raw ``run_id``, the request's
  ``fingerprint``, its ``state`` (``in_progress`` → ``completed``), ``started_at``, and once completed
  the run's first (and only) charge, its recorded ``result``, its period, and ``expires_at`` (the
  table's TTL attribute).

``reserve`` is ONE ``TransactWriteItems`` without a client token (two identical reservations must not
both be acknowledged): ``Put`` the ``in_progress`` marker if ``attribute_not_exists(pk)`` — or if it is
a stale ``in_progress`` marker of the same fingerprint, the takeover — and, with a limit,
``ConditionCheck`` the counter's ``runs < :limit``. Item 0 failed → the old marker (``ALL_OLD``) decides
replay, 409 or 422 (:func:`~ragline.domain.billing.check_replay`); item 1 failed → ``QuotaExceeded``.

``commit`` is ONE ``TransactWriteItems``: ``Put`` the completed marker if
``attribute_not_exists(pk) OR state = in_progress`` and
``Update … ADD`` the counter (under ``attribute_not_exists(runs) OR runs < :limit`` when a limit is
given). The marker's condition makes the charge exactly-once across retries, replays and processes;
the ``ADD`` makes concurrent charges of different runs add up; nothing is read and then written.
``CancellationReasons`` tell the outcomes apart: item 0 failed → the run is already charged (its
marker, returned with ``ALL_OLD``, holds the first charge); item 1 failed → over quota, and since the
run's work is done it is charged anyway by a second transaction without the quota condition (still
guarded by the marker, so still exactly once).

``complete_uncharged`` (a run that did no work) is ONE ``TransactWriteItems`` of the same ``Put``
alone, the marker with zero usage and ``charged: false``, under the same condition (so it and
``commit`` exclude each other); ``reserve`` may take such a marker over when it holds no ``result``
and the fingerprint is the request's.

``ClientRequestToken`` is a UUID5 of tenant and run id (a second one for the over-quota variant, whose
parameters differ): an identical retry within DynamoDB's 10-minute window is acknowledged without
being applied again. ``expires_at`` is derived from the period, not from the clock, so identical
retries really are identical. A replay with other numbers gets ``IdempotentParameterMismatch``, which
is answered from the marker.

Ingestion has its own fields on the same counter (``ingested_<field>`` per :class:`IngestUsage` field;
``runs`` untouched) and its own markers, ``pk = "INGEST#<tenant>#<sha256(entry_id)>"``, ``sk =
"INGEST"``. ``record_ingest`` is ONE ``TransactWriteItems``: ``Put`` the marker if
``attribute_not_exists(pk)`` and ``Update … ADD`` the fields; item 0 failed → already recorded (False).
It carries no client token of ours, on purpose: DynamoDB acknowledges a repeated token without applying
it, and a replay must say False (botocore's own token still covers its retries of one call).

Request builders are pure functions returning the kwargs of the boto3 call (unit-tested as dicts), in
:mod:`ragline.adapters.aws.ledger_items`; what each cancellation decides, and the retries of a
transaction that decided nothing, in :mod:`ragline.adapters.aws.ledger_outcomes`.
:class:`DynamoDbUsageLedger` only sends them and puts the two together.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from ragline import errors
from ragline.adapters.aws.batch import delete_keys, scan_keys
from ragline.adapters.aws.errors import call
from ragline.adapters.aws.ledger_items import (
    CANCELLED,
    FIELDS,
    IN_PROGRESS,
    INGEST_ATTRIBUTES,
    MARKER_TTL,
    OVER_QUOTA_VARIANT,
    PARAMETER_MISMATCH,
    TOKEN_NAMESPACE,
    UNCHARGED_VARIANT,
    Outcome,
    check_tenant,
    classify_cancellation,
    client_token,
    commit_request,
    counter_key,
    get_counter_request,
    get_marker_request,
    ingest_marker_key,
    ingestion_from_item,
    marker_expiry,
    marker_from_item,
    marker_item,
    marker_key,
    record_ingest_request,
    reserve_request,
    runs_from_item,
    uncharged_request,
    usage_from_item,
)
from ragline.adapters.aws.ledger_outcomes import (
    RETRY,
    Cancelled,
    Decided,
    Retry,
    after_charge,
    after_ingest,
    after_reserve,
    as_cancelled,
    until_decided,
)
from ragline.adapters.boto import LazyClient
from ragline.domain.billing import CompletedRun, RunMarker, check_quota, period_of
from ragline.domain.models import IngestUsage, RunUsage

__all__ = [  # the ledger and, for its tests and stubs, the items it sends
    "CANCELLED",
    "FIELDS",
    "INGEST_ATTRIBUTES",
    "IN_PROGRESS",
    "MARKER_TTL",
    "OVER_QUOTA_VARIANT",
    "PARAMETER_MISMATCH",
    "TOKEN_NAMESPACE",
    "UNCHARGED_VARIANT",
    "DynamoDbUsageLedger",
    "Outcome",
    "classify_cancellation",
    "client_token",
    "commit_request",
    "counter_key",
    "get_counter_request",
    "get_marker_request",
    "ingest_marker_key",
    "ingestion_from_item",
    "marker_expiry",
    "marker_from_item",
    "marker_item",
    "marker_key",
    "period_of",
    "record_ingest_request",
    "reserve_request",
    "runs_from_item",
    "uncharged_request",
    "usage_from_item",
]

_log = logging.getLogger(__name__)
_T = TypeVar("_T")


def _utcnow() -> datetime:
    return datetime.now(UTC)


# -- sending --------------------------------------------------------------------------------------
class DynamoDbUsageLedger:
    """``client`` is injectable (tests, stubs); ``None`` builds one on first use, never at import.

    ``attempts`` bounds the retries of a commit that met contention (a concurrent transaction on the
    same counter, or the same token still in flight); ``sleep`` and ``clock`` are injectable for tests.
    """

    def __init__(
        self,
        table_name: str,
        *,
        client: Any = None,
        region: str | None = None,
        attempts: int = 6,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = _utcnow,
    ) -> None:
        self.table_name = table_name
        self.region = region
        self._client = LazyClient("dynamodb", client=client, region=region)
        self._attempts = max(1, attempts)
        self._sleep = sleep
        self._clock = clock

    def _send(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        return call(self._client(), action, request, as_cancelled)

    # -- reads --------------------------------------------------------------------------------------
    def _counter(self, tenant_id: str, period: str) -> dict[str, Any] | None:
        item = self._send("get_item", get_counter_request(self.table_name, tenant_id, period)).get("Item")
        return item or None

    def period_usage(self, tenant_id: str, period: str) -> RunUsage:
        item = self._counter(tenant_id, period)
        return usage_from_item(item) if item else RunUsage()

    def period_runs(self, tenant_id: str, period: str) -> int:
        return runs_from_item(self._counter(tenant_id, period))

    def period_ingestion(self, tenant_id: str, period: str) -> IngestUsage:
        return ingestion_from_item(self._counter(tenant_id, period))

    def purge_tenant(self, tenant_id: str) -> int:
        """Markers live in partitions of their own, so finding a tenant's is a ``Scan`` (a rare,
        administrative sweep): each run marker loses its ``result`` and keeps its charge; ingestion
        markers (they carry the entry id, which names the document) are deleted."""
        check_tenant(tenant_id)
        runs = scan_keys(self._send, self.table_name, f"RUN#{tenant_id}#")
        for key in runs:
            self._send(
                "update_item",
                {"TableName": self.table_name, "Key": key, "UpdateExpression": "REMOVE #result",
                 "ExpressionAttributeNames": {"#result": "result"}},
            )  # fmt: skip
        entries = scan_keys(self._send, self.table_name, f"INGEST#{tenant_id}#")
        return len(runs) + delete_keys(self._send, self.table_name, entries)

    def record_ingest(self, tenant_id: str, entry_id: str, usage: IngestUsage) -> bool:
        request = record_ingest_request(
            self.table_name, tenant_id, entry_id, usage, period=period_of(self._clock())
        )

        def attempt() -> bool | Retry:
            try:
                self._send("transact_write_items", request)
                return True
            except Cancelled as cancelled:
                return after_ingest(cancelled)

        return self._until_decided(attempt, "ingestion record", entry_id=entry_id)

    def _stored_marker(self, tenant_id: str, run_id: str) -> RunMarker | None:
        response = self._send("get_item", get_marker_request(self.table_name, tenant_id, run_id))
        item = response.get("Item")
        return marker_from_item(item) if item else None

    def _stored_charge(self, tenant_id: str, run_id: str) -> RunUsage | None:
        marker = self._stored_marker(tenant_id, run_id)
        return marker.usage if marker is not None and marker.state == "completed" else None

    # -- reserve / commit ---------------------------------------------------------------------------
    def reserve(
        self, tenant_id: str, run_id: str, limit: int | None = None, fingerprint: str = ""
    ) -> CompletedRun | None:
        if limit is not None and limit <= 0:  # the counter check passes on a missing counter: refuse here
            period = period_of(self._clock())
            check_quota(self.period_runs(tenant_id, period), limit, period)

        def attempt() -> CompletedRun | Retry | None:
            now = self._clock()
            request = reserve_request(self.table_name, tenant_id, run_id, fingerprint, now=now, limit=limit)
            try:
                self._send("transact_write_items", request)
                return None
            except Cancelled as cancelled:
                return after_reserve(
                    cancelled, fingerprint=fingerprint, now=now, limit=limit,
                    stored_marker=lambda: self._stored_marker(tenant_id, run_id),
                    runs_used=lambda period: self.period_runs(tenant_id, period),
                )  # fmt: skip

        return self._until_decided(attempt, "run reservation", run_id=run_id)

    def commit(
        self,
        tenant_id: str,
        run_id: str,
        usage: RunUsage,
        limit: int | None = None,
        result: str | None = None,
        fingerprint: str = "",
    ) -> RunUsage:
        period = period_of(self._clock())
        # Both transactions charge the same run with the same numbers; only the quota differs.
        charge = functools.partial(
            commit_request, self.table_name, tenant_id, run_id, usage,
            period=period, fingerprint=fingerprint, result=result,
        )  # fmt: skip
        first = charge(limit=limit)
        outcome, stored, used = self._transact(tenant_id, run_id, first)
        if outcome == "charged":
            return usage
        if outcome == "already_charged":
            assert stored is not None
            return stored
        # Over quota: the run reserved while there was room, and its work is done. Record it anyway.
        _log.warning(
            "tenant %s went over its run quota: run %s charged with %s of %s runs used in %s",
            tenant_id, run_id, used, limit, period,
            extra={"tenant_id": tenant_id, "run_id": run_id, "limit": limit, "used": used, "period": period},
        )  # fmt: skip
        again = charge(limit=None, over_quota=True)
        outcome, stored, _ = self._transact(tenant_id, run_id, again)
        if outcome == "charged":
            return usage
        if outcome == "already_charged":
            assert stored is not None
            return stored
        raise errors.DependencyFailed(  # unreachable: that transaction has no quota condition
            "DynamoDB refused an unconditional usage charge", table=self.table_name, run_id=run_id
        )

    def complete_uncharged(
        self, tenant_id: str, run_id: str, result: str | None = None, fingerprint: str = ""
    ) -> RunUsage:
        period = period_of(self._clock())
        request = uncharged_request(
            self.table_name, tenant_id, run_id, period=period, fingerprint=fingerprint, result=result
        )
        outcome, stored, _ = self._transact(tenant_id, run_id, request)
        return stored if outcome == "already_charged" and stored is not None else RunUsage()

    def _transact(self, tenant_id: str, run_id: str, request: dict[str, Any]) -> Decided:
        """Send the commit transaction until it is decided: (outcome, stored charge, runs used)."""

        def attempt() -> Decided | Retry:
            nonlocal request
            try:
                self._send("transact_write_items", request)
                return "charged", None, None
            except Cancelled as cancelled:
                if cancelled.code == IN_PROGRESS:  # the same token is being applied right now
                    return RETRY
                if cancelled.code == PARAMETER_MISMATCH:
                    # This token already went with other parameters (a replay with new numbers, or a
                    # new limit). The marker says whether that charged; if not (it was cancelled),
                    # send ours without the token: the marker's condition still makes it exactly once.
                    stored = self._stored_charge(tenant_id, run_id)
                    if stored is not None:
                        return "already_charged", stored, None
                    request = {k: v for k, v in request.items() if k != "ClientRequestToken"}
                    return RETRY
                return after_charge(
                    cancelled, stored_charge=lambda: self._stored_charge(tenant_id, run_id),
                    table=self.table_name, run_id=run_id,
                )  # fmt: skip

        return self._until_decided(attempt, "usage charge", run_id=run_id)

    def _until_decided(self, attempt: Callable[[], _T | Retry], what: str, **details: str) -> _T:
        """:func:`~ragline.adapters.aws.ledger_outcomes.until_decided` with this ledger's attempts."""
        return until_decided(attempt, self._attempts, self._backoff, what, **details)

    def _backoff(self, attempt: int) -> None:
        self._sleep(random.uniform(0, 0.025 * 2**attempt))  # full jitter, up to 25, 50, 100 … ms
