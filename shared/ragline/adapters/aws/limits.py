"""DynamoDB :class:`~ragline.ports.RateLimiter`: buckets, run slots and refusal counts in the usage table.

Every item of a tenant lives under ``pk = "LIMIT#<tenant>"`` (apart from the ledger's ``TENANT#`` and
``RUN#`` items): ``sk = "RATE#<bucket>"`` holds a bucket's ``tat`` (:mod:`ragline.domain.limits`),
``sk = "SLOT#<bucket>#<n>"`` a run slot's lease, ``sk = "REFUSED#<period>"`` a refusal count. Every item
carries ``expires_at`` (the table's TTL): an idle bucket or a dead lease is dropped, which is the very
state it would be read as anyway (a full bucket, a free slot) — TTL's lateness changes nothing.

Why this is race-free on DynamoDB, not only on moto: each decision is ONE conditional ``UpdateItem``
or ``PutItem`` whose condition states the decision's premise about the stored value, evaluated and
applied atomically by DynamoDB on the item (single-item writes are serialisable per item):

- ``take``, busy bucket: ``SET tat = tat + interval`` if ``now <= tat <= now + tolerance``. The
  update is relative and the condition a range, so concurrent admissions never invalidate each other:
  each one that DynamoDB applies was admissible on the value it applied to, in DynamoDB's order of
  the writes — exactly :func:`~ragline.domain.limits.admit` run serially. No read comes first.
- ``take``, idle bucket (``tat < now`` or no item): ``SET tat = now + interval`` if so. A failed
  condition returns the current item (``ReturnValuesOnConditionCheckFailure``): the other case is
  tried, or the request refused when ``tat > now + tolerance`` (nothing written). At most
  :data:`ATTEMPTS` writes; a bucket that flips between the cases longer than that is refused for 1 s.
- ``lease``: a consistent ``Query`` finds the free slots (none: refused, nothing written); one is
  taken by ``PutItem`` if the slot has no item or its lease expired. Two takers of one slot: one
  wins, the other tries the next. There are only ``slots`` slot numbers, so never more live leases.
  ``release`` deletes the slot only if it still holds this lease id.

The clocks of Lambdas differ by milliseconds (NTP): a bucket is exact to that skew, no worse.
A tenant's limit items share one partition (about 1,000 writes a second): enough for limits up to
a few hundred requests a second; a bursting tenant's refused writes land on its partition only.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from ragline.adapters.aws.batch import delete_keys
from ragline.adapters.aws.errors import CONDITION_FAILED, call
from ragline.adapters.boto import LazyClient, error_code
from ragline.domain.limits import MICROS, Bucket, Rate, admit, now_micros

ATTEMPTS = 4
IDLE_TTL = 86_400
"""Seconds an unused bucket is kept past the moment it is full again (then TTL drops it)."""
REFUSALS_TTL = 400 * 86_400

Key = dict[str, dict[str, str]]


class _Failed(Exception):
    """A failed condition, with the item DynamoDB found (None: no item or not returned)."""

    def __init__(self, item: dict[str, Any] | None) -> None:
        self.item = item


def _condition_failed(exc: Any) -> BaseException | None:
    if error_code(exc) == CONDITION_FAILED:
        return _Failed(exc.response.get("Item"))
    return None


def key(tenant_id: str, sk: str) -> Key:
    if "#" in tenant_id:  # check_identifier forbids it; it would alias keys
        raise ValueError(f"'#' is not allowed in a tenant id: {tenant_id!r}")
    return {"pk": {"S": f"LIMIT#{tenant_id}"}, "sk": {"S": sk}}


def busy_request(table: str, bucket: Bucket, rate: Rate, now: int) -> dict[str, Any]:
    """Admit on a busy bucket: ``tat += interval`` if ``now <= tat <= now + tolerance``."""
    return {
        "TableName": table,
        "Key": key(bucket.tenant_id, f"RATE#{bucket.name}"),
        "UpdateExpression": "SET tat = tat + :interval, expires_at = :expires",
        "ConditionExpression": "tat BETWEEN :now AND :ceiling",
        "ExpressionAttributeValues": {
            ":interval": {"N": str(rate.interval)},
            ":now": {"N": str(now)},
            ":ceiling": {"N": str(rate.ceiling(now))},
            ":expires": {"N": str(_expiry(rate.ceiling(now) + rate.interval, IDLE_TTL))},
        },
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }


def idle_request(table: str, bucket: Bucket, rate: Rate, now: int) -> dict[str, Any]:
    """Admit on an idle (or new) bucket: ``tat = now + interval`` if ``tat < now``."""
    return {
        "TableName": table,
        "Key": key(bucket.tenant_id, f"RATE#{bucket.name}"),
        "UpdateExpression": "SET tat = :next, expires_at = :expires",
        "ConditionExpression": "attribute_not_exists(tat) OR tat < :now",
        "ExpressionAttributeValues": {
            ":next": {"N": str(now + rate.interval)},
            ":now": {"N": str(now)},
            ":expires": {"N": str(_expiry(now + rate.interval + rate.tolerance, IDLE_TTL))},
        },
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }


def lease_request(
    table: str, bucket: Bucket, slot: int, lease_id: str, now: int, seconds: float
) -> dict[str, Any]:
    expires = now + round(seconds * MICROS)
    item = key(bucket.tenant_id, f"SLOT#{bucket.name}#{slot}") | {
        "lease_id": {"S": lease_id},
        "lease_expires": {"N": str(expires)},
        "expires_at": {"N": str(_expiry(expires, 60))},
    }
    return {
        "TableName": table,
        "Item": item,
        "ConditionExpression": "attribute_not_exists(pk) OR lease_expires < :now",
        "ExpressionAttributeValues": {":now": {"N": str(now)}},
    }


def _expiry(micros: int, margin: int) -> int:
    """A TTL (Unix seconds) ``margin`` seconds after ``micros``."""
    return micros // MICROS + margin


class DynamoDbRateLimiter:
    def __init__(
        self,
        table_name: str,
        *,
        client: Any = None,
        region: str | None = None,
        clock: Callable[[], int] = now_micros,
    ) -> None:
        self.table_name = table_name
        self._client = LazyClient("dynamodb", client=client, region=region)
        self.clock = clock
        self._idle: dict[Bucket, bool] = {}
        """Which case a bucket was in last time here: the first write tries it (one round trip)."""

    def _send(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        return call(self._client(), action, request, _condition_failed)

    def take(self, bucket: Bucket, rate: Rate) -> int:
        now = self.clock()
        idle = self._idle.get(bucket, True)
        for _ in range(ATTEMPTS):
            build = idle_request if idle else busy_request
            try:
                self._send("update_item", build(self.table_name, bucket, rate, now))
            except _Failed as failed:
                tat = self._tat(bucket) if failed.item is None else int(failed.item["tat"]["N"])
                answer = admit(tat, now, rate)
                if not answer.admitted:
                    self._idle[bucket] = False
                    return answer.wait
                idle = tat is None or tat < now
                continue
            self._idle[bucket] = idle  # the next request most likely finds the bucket so again
            return 0
        return MICROS  # the bucket flipped between its cases on every attempt: try again in a second

    def _tat(self, bucket: Bucket) -> int | None:
        """The stored ``tat`` (a DynamoDB that did not return the item with a failed condition)."""
        request = {"TableName": self.table_name, "Key": key(bucket.tenant_id, f"RATE#{bucket.name}")}
        item = self._send("get_item", request | {"ConsistentRead": True}).get("Item")
        return int(item["tat"]["N"]) if item and "tat" in item else None

    def lease(self, bucket: Bucket, slots: int, seconds: float) -> str | None:
        """The lease id names its slot (``<slot>.<uuid>``): a release is one conditional delete."""
        for _ in range(2):
            now = self.clock()
            live = self._live_slots(bucket, now)  # one query, not one per slot number
            free = [s for s in range(slots) if s not in live]
            random.shuffle(free)  # concurrent takers spread over the free slots
            for slot in free:
                lease_id = f"{slot}.{uuid.uuid4().hex}"
                try:
                    self._send(
                        "put_item", lease_request(self.table_name, bucket, slot, lease_id, now, seconds)
                    )
                except _Failed:
                    continue
                return lease_id
            if not free:
                return None
        return None

    def _live_slots(self, bucket: Bucket, now: int) -> set[int]:
        prefix = f"SLOT#{bucket.name}#"
        items = self._query(bucket.tenant_id, prefix)
        return {int(i["sk"]["S"][len(prefix) :]) for i in items if int(i["lease_expires"]["N"]) > now}

    def release(self, bucket: Bucket, lease_id: str) -> None:
        slot, _, _ = lease_id.partition(".")
        if not slot.isdigit():
            return  # not a lease of this adapter's: nothing of it is held
        request = {
            "TableName": self.table_name,
            "Key": key(bucket.tenant_id, f"SLOT#{bucket.name}#{slot}"),
            "ConditionExpression": "lease_id = :lease",
            "ExpressionAttributeValues": {":lease": {"S": lease_id}},
        }
        with suppress(_Failed):  # expired and taken over: the slot is another lease's now
            self._send("delete_item", request)

    def _query(self, tenant_id: str, prefix: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        values = {":pk": key(tenant_id, "")["pk"], ":prefix": {"S": prefix}}
        request: dict[str, Any] = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": values,
            "ConsistentRead": True,
        }
        if not prefix:  # every item of the tenant (an empty prefix is not allowed)
            request["KeyConditionExpression"] = "pk = :pk"
            del values[":prefix"]
        while True:
            page = self._send("query", request)
            items.extend(page.get("Items", []))
            if not page.get("LastEvaluatedKey"):
                return items
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def count_refusal(self, tenant_id: str, period: str) -> None:
        request = {
            "TableName": self.table_name,
            "Key": key(tenant_id, f"REFUSED#{period}"),
            "UpdateExpression": "ADD refusals :one SET expires_at = if_not_exists(expires_at, :expires)",
            "ExpressionAttributeValues": {
                ":one": {"N": "1"},
                ":expires": {"N": str(_expiry(self.clock(), REFUSALS_TTL))},
            },
        }
        self._send("update_item", request)

    def refusals(self, tenant_id: str, period: str) -> int:
        request = {"TableName": self.table_name, "Key": key(tenant_id, f"REFUSED#{period}")}
        item = self._send("get_item", request | {"ConsistentRead": True}).get("Item") or {}
        return int(item.get("refusals", {}).get("N", "0"))

    def purge_tenant(self, tenant_id: str) -> int:
        keys = [{"pk": i["pk"], "sk": i["sk"]} for i in self._query(tenant_id, "")]
        return delete_keys(self._send, self.table_name, keys)
