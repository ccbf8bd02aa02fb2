"""Webhook subscriptions in the tenants table, once-marks in the usage table.

- A subscription is ``pk = "TENANT#<tenant>"``, ``sk = "WEBHOOK#<id>"``: a tenant's settings beside
  its namespaces and keys (one ``Query`` lists them; a tenant's purge finds them under its partition).
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


class _ConditionFailed(Exception):
    pass


def _condition(exc: Any) -> BaseException | None:
    return _ConditionFailed() if error_code(exc) == CONDITION_FAILED else None


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
        request = {"Key": subscription_key(tenant_id, subscription_id), "ReturnValues": "ALL_OLD"}
        old = self._send("delete_item", request).get("Attributes")
        if not old:
            raise errors.NotFound(f"no webhook {subscription_id!r}", webhook_id=subscription_id)
        return subscription_of(old)


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
