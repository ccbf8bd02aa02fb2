"""The DynamoDB usage ledger's items and requests as plain data: key and item shapes, the pure request
builders (the kwargs of each boto3 call, unit-tested as dicts), item decoding and the reading of a
cancelled transaction's reasons. :mod:`ragline.adapters.aws.ledger` describes the design and sends them.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from ragline.adapters.aws.errors import THROTTLING_CODES
from ragline.domain.billing import STALE_AFTER, RunMarker, period_of
from ragline.domain.models import IngestUsage, RunUsage

FIELDS = tuple(RunUsage.model_fields)
INGEST_ATTRIBUTES = {f: f"ingested_{f}" for f in IngestUsage.model_fields}
"""Counter attribute of each :class:`IngestUsage` field (apart from the runs' fields)."""
MARKER_TTL = timedelta(days=400)
"""Run markers live 400 days after the start of their period (a replay can only come much sooner)."""
TOKEN_NAMESPACE = uuid.UUID("5d0c7a2e-3f0b-5b8e-9a43-6f1d2c7e8b10")
"""Fixed UUID5 namespace of client request tokens; changing it only weakens the 10-minute dedupe."""
OVER_QUOTA_VARIANT = "#over-quota"
UNCHARGED_VARIANT = "#uncharged"

CANCELLED = "TransactionCanceledException"
PARAMETER_MISMATCH = "IdempotentParameterMismatchException"
IN_PROGRESS = "TransactionInProgressException"

_THROTTLING_REASONS = frozenset({"ThrottlingError", "ProvisionedThroughputExceeded"})
"""Cancellation reason codes (not error codes) that mean "slow down"."""

Outcome = Literal["charged", "already_charged", "over_quota", "conflict", "throttled", "failed"]


# -- request builders (pure) ----------------------------------------------------------------------
def check_tenant(tenant_id: str) -> None:
    if "#" in tenant_id:  # check_identifier forbids it; it would alias keys
        raise ValueError(f"'#' is not allowed in a tenant id: {tenant_id!r}")


def counter_key(tenant_id: str, period: str) -> dict[str, dict[str, str]]:
    check_tenant(tenant_id)
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": f"PERIOD#{period}"}}


def marker_key(tenant_id: str, run_id: str) -> dict[str, dict[str, str]]:
    """The tenant is part of the key: run ids are only unique per tenant (a caller may choose them).

    The run id is hashed, so the key's length is bounded whatever the client's ``Idempotency-Key``.
    """
    check_tenant(tenant_id)
    digest = hashlib.sha256(run_id.encode()).hexdigest()
    return {"pk": {"S": f"RUN#{tenant_id}#{digest}"}, "sk": {"S": "RUN"}}


def client_token(tenant_id: str, run_id: str, variant: str = "") -> str:
    """A 36-character token (DynamoDB allows at most 36) naming this run's charge."""
    return str(uuid.uuid5(TOKEN_NAMESPACE, f"{tenant_id}#{run_id}{variant}"))


def marker_expiry(period: str) -> int:
    """Epoch seconds: ``MARKER_TTL`` after the first instant of ``period`` (deterministic)."""
    start = datetime.strptime(period, "%Y-%m").replace(tzinfo=UTC)
    return int((start + MARKER_TTL).timestamp())


def marker_item(
    tenant_id: str,
    run_id: str,
    usage: RunUsage,
    *,
    period: str,
    over_quota: bool = False,
    fingerprint: str = "",
    result: str | None = None,
) -> dict[str, dict[str, Any]]:
    """The completed marker: the charge, the request's fingerprint and the recorded result."""
    item: dict[str, dict[str, Any]] = marker_key(tenant_id, run_id)
    item |= {
        "tenant_id": {"S": tenant_id},
        "run_id": {"S": run_id},
        "state": {"S": "completed"},
        "fingerprint": {"S": fingerprint},
        "period": {"S": period},
        "expires_at": {"N": str(marker_expiry(period))},
        "over_quota": {"BOOL": over_quota},
    }
    if result is not None:
        item["result"] = {"S": result}
    item |= {f: {"N": str(getattr(usage, f))} for f in FIELDS}
    return item


def reserve_request(
    table_name: str, tenant_id: str, run_id: str, fingerprint: str, *, now: datetime, limit: int | None
) -> dict[str, Any]:
    """``TransactWriteItems``: [0] Put the ``in_progress`` marker if new (or a stale one of the same
    request, or the same request's run that ended uncharged without a result), [1] with a limit,
    check the period counter has room. No client token, on purpose."""
    period = period_of(now)
    item: dict[str, dict[str, Any]] = marker_key(tenant_id, run_id) | {
        "tenant_id": {"S": tenant_id},
        "run_id": {"S": run_id},
        "state": {"S": "in_progress"},
        "fingerprint": {"S": fingerprint},
        "started_at": {"N": str(int(now.timestamp()))},
        "expires_at": {"N": str(marker_expiry(period))},
    }
    put: dict[str, Any] = {
        "TableName": table_name,
        "Item": item,
        "ConditionExpression": "attribute_not_exists(#pk) OR (#state = :in_progress"
        " AND #started_at < :stale_before AND #fingerprint = :fingerprint) OR (#state = :completed"
        " AND #charged = :false AND attribute_not_exists(#result) AND #fingerprint = :fingerprint)",
        "ExpressionAttributeNames": {
            "#pk": "pk",
            "#state": "state",
            "#started_at": "started_at",
            "#fingerprint": "fingerprint",
            "#charged": "charged",
            "#result": "result",
        },
        "ExpressionAttributeValues": {
            ":in_progress": {"S": "in_progress"},
            ":stale_before": {"N": str(int((now - STALE_AFTER).timestamp()) + 1)},
            ":fingerprint": {"S": fingerprint},
            ":completed": {"S": "completed"},
            ":false": {"BOOL": False},
        },
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    items: list[dict[str, Any]] = [{"Put": put}]
    if limit is not None:
        items.append(
            {
                "ConditionCheck": {
                    "TableName": table_name,
                    "Key": counter_key(tenant_id, period),
                    "ConditionExpression": "attribute_not_exists(#runs) OR #runs < :limit",
                    "ExpressionAttributeNames": {"#runs": "runs"},
                    "ExpressionAttributeValues": {":limit": {"N": str(limit)}},
                    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                }
            }
        )
    return {"TransactItems": items}


def commit_request(
    table_name: str,
    tenant_id: str,
    run_id: str,
    usage: RunUsage,
    *,
    period: str,
    limit: int | None,
    over_quota: bool = False,
    fingerprint: str = "",
    result: str | None = None,
) -> dict[str, Any]:
    """``TransactWriteItems``: [0] Put the completed run marker if new or ``in_progress``, [1] ADD the
    usage to the period counter.

    ``over_quota=True`` is the retry after item 1 failed its quota condition: no quota condition, the
    marker flagged, and its own client token (its parameters differ from the first attempt's).
    """
    if over_quota and limit is not None:
        raise ValueError("the over-quota charge carries no limit")
    put: dict[str, Any] = {
        "TableName": table_name,
        "Item": marker_item(
            tenant_id,
            run_id,
            usage,
            period=period,
            over_quota=over_quota,
            fingerprint=fingerprint,
            result=result,
        ),
        "ConditionExpression": "attribute_not_exists(#pk) OR #state = :in_progress",
        "ExpressionAttributeNames": {"#pk": "pk", "#state": "state"},
        "ExpressionAttributeValues": {":in_progress": {"S": "in_progress"}},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    update: dict[str, Any] = {
        "TableName": table_name,
        "Key": counter_key(tenant_id, period),
        "UpdateExpression": "ADD #runs :one, " + ", ".join(f"#{f} :{f}" for f in FIELDS),
        "ExpressionAttributeNames": {"#runs": "runs", **{f"#{f}": f for f in FIELDS}},
        "ExpressionAttributeValues": {
            ":one": {"N": "1"},
            **{f":{f}": {"N": str(getattr(usage, f))} for f in FIELDS},
        },
    }
    if limit is not None:
        update["ConditionExpression"] = "attribute_not_exists(#runs) OR #runs < :limit"
        update["ExpressionAttributeValues"][":limit"] = {"N": str(limit)}
        update["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return {
        "TransactItems": [{"Put": put}, {"Update": update}],
        "ClientRequestToken": client_token(tenant_id, run_id, OVER_QUOTA_VARIANT if over_quota else ""),
    }


def uncharged_request(
    table_name: str, tenant_id: str, run_id: str, *, period: str, fingerprint: str, result: str | None
) -> dict[str, Any]:
    """``TransactWriteItems``: [0] Put the completed marker of a run that did no work (zero usage,
    ``charged: false``) if new or ``in_progress``; the counter is not touched."""
    item = marker_item(tenant_id, run_id, RunUsage(), period=period, fingerprint=fingerprint, result=result)
    item["charged"] = {"BOOL": False}
    put: dict[str, Any] = {
        "TableName": table_name,
        "Item": item,
        "ConditionExpression": "attribute_not_exists(#pk) OR #state = :in_progress",
        "ExpressionAttributeNames": {"#pk": "pk", "#state": "state"},
        "ExpressionAttributeValues": {":in_progress": {"S": "in_progress"}},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    return {
        "TransactItems": [{"Put": put}],
        "ClientRequestToken": client_token(tenant_id, run_id, UNCHARGED_VARIANT),
    }


def ingest_marker_key(tenant_id: str, entry_id: str) -> dict[str, dict[str, str]]:
    """Hashed like a run marker's, under its own prefix: an entry id never aliases a run id."""
    check_tenant(tenant_id)
    digest = hashlib.sha256(entry_id.encode()).hexdigest()
    return {"pk": {"S": f"INGEST#{tenant_id}#{digest}"}, "sk": {"S": "INGEST"}}


def record_ingest_request(
    table_name: str, tenant_id: str, entry_id: str, usage: IngestUsage, *, period: str
) -> dict[str, Any]:
    """``TransactWriteItems``: [0] Put the entry's marker if new, [1] ADD its usage to the counter's
    ingestion fields. No ``ClientRequestToken`` (see the module docstring)."""
    item: dict[str, dict[str, Any]] = ingest_marker_key(tenant_id, entry_id) | {
        "tenant_id": {"S": tenant_id},
        "entry_id": {"S": entry_id},
        "period": {"S": period},
        "expires_at": {"N": str(marker_expiry(period))},
    }
    item |= {f: {"N": str(getattr(usage, f))} for f in INGEST_ATTRIBUTES}
    put = {
        "TableName": table_name,
        "Item": item,
        "ConditionExpression": "attribute_not_exists(#pk)",
        "ExpressionAttributeNames": {"#pk": "pk"},
    }
    update = {
        "TableName": table_name,
        "Key": counter_key(tenant_id, period),
        "UpdateExpression": "ADD " + ", ".join(f"#{f} :{f}" for f in INGEST_ATTRIBUTES),
        "ExpressionAttributeNames": {f"#{f}": a for f, a in INGEST_ATTRIBUTES.items()},
        "ExpressionAttributeValues": {f":{f}": {"N": str(getattr(usage, f))} for f in INGEST_ATTRIBUTES},
    }
    return {"TransactItems": [{"Put": put}, {"Update": update}]}


def get_counter_request(table_name: str, tenant_id: str, period: str) -> dict[str, Any]:
    return {"TableName": table_name, "Key": counter_key(tenant_id, period), "ConsistentRead": True}


def get_marker_request(table_name: str, tenant_id: str, run_id: str) -> dict[str, Any]:
    return {"TableName": table_name, "Key": marker_key(tenant_id, run_id), "ConsistentRead": True}


# -- decoding -------------------------------------------------------------------------------------
def usage_from_item(item: Mapping[str, Any]) -> RunUsage:
    return RunUsage(**{f: int(item[f]["N"]) for f in FIELDS if f in item})


def marker_from_item(item: Mapping[str, Any]) -> RunMarker:
    """A stored marker; one without ``state`` was written before reservations and is completed."""
    state = item.get("state", {}).get("S", "completed")
    started = datetime.fromtimestamp(int(item.get("started_at", {}).get("N", "0")), UTC)
    completed = state != "in_progress"
    return RunMarker(
        state="completed" if completed else "in_progress",
        fingerprint=item.get("fingerprint", {}).get("S", ""),
        started_at=started,
        usage=usage_from_item(item) if completed else None,
        result=item.get("result", {}).get("S"),
        charged=item.get("charged", {}).get("BOOL", True),
    )


def ingestion_from_item(item: Mapping[str, Any] | None) -> IngestUsage:
    item = item or {}
    return IngestUsage(**{f: int(item[a]["N"]) for f, a in INGEST_ATTRIBUTES.items() if a in item})


def runs_from_item(item: Mapping[str, Any] | None) -> int:
    return int(item["runs"]["N"]) if item and "runs" in item else 0


def classify_cancellation(reasons: Sequence[Mapping[str, Any]]) -> Outcome:
    """What a cancelled commit transaction means, from its ``CancellationReasons`` (by position).

    The marker's failed condition wins over the quota's: a run already charged is never over quota.
    """
    codes = [str(r.get("Code") or "None") for r in reasons]
    code = dict(enumerate(codes)).get
    if code(0) == "ConditionalCheckFailed":
        return "already_charged"
    if code(1) == "ConditionalCheckFailed":
        return "over_quota"
    if "TransactionConflict" in codes:
        return "conflict"
    if any(c in THROTTLING_CODES or c in _THROTTLING_REASONS for c in codes):
        return "throttled"
    return "failed"
