"""Webhook subscriptions in the tenants table, once-marks in the usage table.

- A subscription is ``pk = "TENANT#<tenant>"``, ``sk = "WEBHOOK#<id>"``: a tenant's settings beside
  its namespaces and keys (one ``Query`` lists them; a tenant's purge finds them under its partition).
  ``TENANT#<tenant>`` / ``WEBHOOKS`` counts them: a creation increments it under the cap in the same
  transaction as its put, a deletion decrements it in the transaction of its delete, so concurrent
  creations never hold more than the cap.
- A once-mark (a quota threshold announced, a webhook delivered) is ``pk = "ONCE#<sha256(key)>"``,
  ``sk = "ONCE"``, written with ``attribute_not_exists(pk)`` — the ledger table's conditional write,
  and its TTL attribute ``expires_at`` removes it later. An expired mark DynamoDB has not swept yet
  reads as absent and may be written over.
"""

from __future__ import annotations

import hashlib
import json
import time
from datetime import datetime
from typing import Any

from ragline import errors
from ragline.adapters.aws.errors import CONDITION_FAILED, call
from ragline.adapters.boto import LazyClient, error_code
from ragline.domain.webhooks import Subscription

CANCELLED = "TransactionCanceledException"
CONFLICT_ATTEMPTS = 5
"""Transactions tried when another one on the tenant's counter cancelled them."""


class _ConditionFailed(Exception):
    pass


class _Contended(Exception):
    pass


def _condition(exc: Any) -> BaseException | None:
    code = error_code(exc)
    if code == CONDITION_FAILED:
        return _ConditionFailed()
    if code == CANCELLED:
        reasons = {str(r.get("Code")) for r in getattr(exc, "response", {}).get("CancellationReasons") or []}
        if "ConditionalCheckFailed" in reasons:
            return _ConditionFailed()
        if "TransactionConflict" in reasons:
            return _Contended()
    return None


def count_key(tenant_id: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": "WEBHOOKS"}}


def add_request(table: str, s: Subscription, limit: int) -> dict[str, Any]:
    """The counter incremented below ``limit`` and the new subscription put, or neither."""
    count = {
        "TableName": table,
        "Key": count_key(s.tenant_id),
        "UpdateExpression": "ADD webhooks :one",
        "ConditionExpression": "attribute_not_exists(webhooks) OR webhooks < :limit",
        "ExpressionAttributeValues": {":one": {"N": "1"}, ":limit": {"N": str(limit)}},
    }
    put = {
        "TableName": table,
        "Item": subscription_item(s),
        "ConditionExpression": "attribute_not_exists(pk)",
    }
    return {"TransactItems": [{"Update": count}, {"Put": put}]}


def delete_request(table: str, tenant_id: str, subscription_id: str) -> dict[str, Any]:
    """The subscription deleted (it must exist) and the counter decremented, or neither."""
    delete = {
        "TableName": table,
        "Key": subscription_key(tenant_id, subscription_id),
        "ConditionExpression": "attribute_exists(pk)",
    }
    count = {
        "TableName": table,
        "Key": count_key(tenant_id),
        "UpdateExpression": "ADD webhooks :minus",
        "ExpressionAttributeValues": {":minus": {"N": "-1"}},
    }
    return {"TransactItems": [{"Delete": delete}, {"Update": count}]}


def subscription_key(tenant_id: str, subscription_id: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": f"WEBHOOK#{subscription_id}"}}


def subscription_item(s: Subscription) -> dict[str, Any]:
    return {
        **subscription_key(s.tenant_id, s.id),
        "url": {"S": s.url},
        "secret": {"S": s.secret},
        "event_types": {"S": json.dumps(list(s.event_types))},
        "description": {"S": s.description},
        "created_at": {"S": s.created_at.isoformat()},
    }


def subscription_of(item: dict[str, Any]) -> Subscription:
    return Subscription(
        id=item["sk"]["S"].removeprefix("WEBHOOK#"),
        tenant_id=item["pk"]["S"].removeprefix("TENANT#"),
        url=item["url"]["S"],
        secret=item["secret"]["S"],
        event_types=tuple(json.loads(item["event_types"]["S"])),
        description=item["description"]["S"],
        created_at=datetime.fromisoformat(item["created_at"]["S"]),
    )


def once_key(key: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": "ONCE#" + hashlib.sha256(key.encode()).hexdigest()}, "sk": {"S": "ONCE"}}


class DynamoDbWebhookStore:
    def __init__(self, table_name: str, *, client: Any = None, region: str | None = None) -> None:
        self.table_name = table_name
        self._client = LazyClient("dynamodb", client=client, region=region)

    def _send(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        return call(self._client(), action, {"TableName": self.table_name, **request}, _condition)

    def put(self, subscription: Subscription) -> Subscription:
        self._send("put_item", {"Item": subscription_item(subscription)})
        return subscription

    def _transact(self, request: dict[str, Any]) -> None:
        for attempt in range(CONFLICT_ATTEMPTS):
            try:
                call(self._client(), "transact_write_items", request, _condition)
                return
            except _Contended:
                time.sleep(0.02 * 2**attempt)
        raise errors.DependencyUnavailable(
            "DynamoDB kept cancelling the webhook change (concurrent changes): retry",
            service="DynamoDB", action="transact_write_items",
        )  # fmt: skip

    def add(self, subscription: Subscription, *, limit: int) -> bool:
        try:
            self._transact(add_request(self.table_name, subscription, limit))
        except _ConditionFailed:
            return False
        return True

    def replace(self, subscription: Subscription) -> Subscription:
        request = {"Item": subscription_item(subscription), "ConditionExpression": "attribute_exists(pk)"}
        try:
            self._send("put_item", request)
        except _ConditionFailed:
            raise errors.NotFound(f"no webhook {subscription.id!r}", webhook_id=subscription.id) from None
        return subscription

    def get(self, tenant_id: str, subscription_id: str) -> Subscription:
        request = {"Key": subscription_key(tenant_id, subscription_id), "ConsistentRead": True}
        item = self._send("get_item", request).get("Item")
        if not item:
            raise errors.NotFound(f"no webhook {subscription_id!r}", webhook_id=subscription_id)
        return subscription_of(item)

    def list(self, tenant_id: str) -> list[Subscription]:
        request: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":pk": {"S": f"TENANT#{tenant_id}"}, ":prefix": {"S": "WEBHOOK#"}},
            "ConsistentRead": True,
        }
        found: list[Subscription] = []
        while True:
            response = self._send("query", request)
            found += [subscription_of(i) for i in response.get("Items", [])]
            if "LastEvaluatedKey" not in response:
                return sorted(found, key=lambda s: (s.created_at, s.id))
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def delete(self, tenant_id: str, subscription_id: str) -> Subscription:
        found = self.get(tenant_id, subscription_id)
        try:
            self._transact(delete_request(self.table_name, tenant_id, subscription_id))
        except _ConditionFailed:  # deleted meanwhile
            raise errors.NotFound(f"no webhook {subscription_id!r}", webhook_id=subscription_id) from None
        return found


class DynamoDbOnceMarks:
    def __init__(self, table_name: str, *, client: Any = None, region: str | None = None) -> None:
        self.table_name = table_name
        self._client = LazyClient("dynamodb", client=client, region=region)

    def _send(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        return call(self._client(), action, {"TableName": self.table_name, **request}, _condition)

    def mark(self, key: str, *, ttl_seconds: int) -> bool:
        now = int(time.time())
        item = {**once_key(key), "expires_at": {"N": str(now + ttl_seconds)}}
        try:
            self._send(
                "put_item",
                {"Item": item, "ConditionExpression": "attribute_not_exists(pk) OR expires_at <= :now",
                 "ExpressionAttributeValues": {":now": {"N": str(now)}}},
            )  # fmt: skip
        except _ConditionFailed:
            return False
        return True

    def has(self, key: str) -> bool:
        item = self._send("get_item", {"Key": once_key(key), "ConsistentRead": True}).get("Item")
        return item is not None and int(item["expires_at"]["N"]) > int(time.time())

    def forget(self, key: str) -> None:
        self._send("delete_item", {"Key": once_key(key)})
