"""Data sources in the tenants table, their items' inventory in the documents table.

- A source is ``pk = "TENANT#<tenant>"``, ``sk = "SOURCE#<namespace>#<id>"`` (beside the tenant's
  namespaces, keys and webhooks: a tenant's purge finds it under its partition), with its settings
  and its sync state as two JSON strings, ``revision``, ``lease_token`` and ``lease_until``.
  ``TENANT#<tenant>`` / ``SOURCES#<namespace>`` counts a namespace's sources: a creation increments it
  under the cap in the transaction of its put, a deletion decrements it in the transaction of its
  delete.
- Every sync write is one conditional ``UpdateItem``: ``update_settings`` on ``revision``, ``claim``
  on the lease being free, handed over (``expect``) or expired, ``advance`` on the lease's token.
- An item is ``pk = "SRCITEM#<tenant>#<namespace>#<source>"``, ``sk`` = its id (or, for an id past
  :data:`MAX_SORT_KEY` bytes, ``~`` and its SHA-256), with the id itself in ``item_id``. Items are read
  with ``BatchGetItem`` and written with ``BatchWriteItem``, unprocessed keys retried; ``unseen`` is a
  ``Query`` of the partition filtered on ``seen_run``.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Any

from ragline import errors
from ragline.adapters.aws.errors import CONDITION_FAILED, call
from ragline.adapters.boto import LazyClient, error_code
from ragline.domain.sources import KnownItem, SourceRecord, record_from, settings_json, state_json

MAX_SORT_KEY = 1000
"""Bytes of an item id kept as its sort key (DynamoDB allows 1,024)."""
BATCH_GET = 100
BATCH_WRITE = 25
UNPROCESSED_ATTEMPTS = 8
CANCELLED = "TransactionCanceledException"


class _ConditionFailed(Exception):
    pass


def _condition(exc: Any) -> BaseException | None:
    code = error_code(exc)
    if code == CONDITION_FAILED:
        return _ConditionFailed()
    if code == CANCELLED:
        reasons = {str(r.get("Code")) for r in getattr(exc, "response", {}).get("CancellationReasons") or []}
        if "ConditionalCheckFailed" in reasons:
            return _ConditionFailed()
    return None


def source_key(tenant_id: str, namespace_id: str, source_id: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": f"SOURCE#{namespace_id}#{source_id}"}}


def count_key(tenant_id: str, namespace_id: str) -> dict[str, dict[str, str]]:
    return {"pk": {"S": f"TENANT#{tenant_id}"}, "sk": {"S": f"SOURCES#{namespace_id}"}}


def items_pk(tenant_id: str, namespace_id: str, source_id: str) -> str:
    return f"SRCITEM#{tenant_id}#{namespace_id}#{source_id}"


def item_sk(item_id: str) -> str:
    if len(item_id.encode("utf-8", "surrogatepass")) <= MAX_SORT_KEY:
        return item_id
    return "~" + hashlib.sha256(item_id.encode("utf-8", "surrogatepass")).hexdigest()


def _record(item: dict[str, Any]) -> SourceRecord:
    tenant_id = item["pk"]["S"].removeprefix("TENANT#")
    namespace_id, source_id = item["sk"]["S"].removeprefix("SOURCE#").rsplit("#", 1)
    return record_from(
        tenant_id, namespace_id, source_id, item["settings"]["S"], item["state"]["S"],
        revision=int(item["revision"]["N"]), lease_token=item["lease_token"]["S"],
        lease_until=float(item["lease_until"]["N"]),
    )  # fmt: skip


def _item(pk: str, item: KnownItem) -> dict[str, Any]:
    return {
        "pk": {"S": pk},
        "sk": {"S": item_sk(item.item_id)},
        "item_id": {"S": item.item_id},
        "document_id": {"S": item.document_id},
        "version": {"S": item.version},
        "access_key": {"S": item.access_key},
        "seen_run": {"N": str(item.seen_run)},
        "state": {"S": item.state},
        "memo": {"S": item.memo},
        "error": {"S": item.error},
    }


def _known(row: dict[str, Any]) -> KnownItem:
    return KnownItem(
        row["item_id"]["S"], row["document_id"]["S"], row["version"]["S"], row["access_key"]["S"],
        int(row["seen_run"]["N"]), row["state"]["S"], row["memo"]["S"], row["error"]["S"],
    )  # fmt: skip


class DynamoDbSourceRegistry:
    def __init__(
        self, tenants_table: str, documents_table: str, *, client: Any = None, region: str | None = None
    ) -> None:
        self.tenants_table = tenants_table
        self.documents_table = documents_table
        self._client = LazyClient("dynamodb", client=client, region=region)

    def _send(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        return call(self._client(), action, request, _condition)

    # -- sources ------------------------------------------------------------------------------
    def create(self, record: SourceRecord, *, limit: int) -> bool:
        r = record
        count = {
            "TableName": self.tenants_table,
            "Key": count_key(r.tenant_id, r.namespace_id),
            "UpdateExpression": "ADD sources :one",
            "ConditionExpression": "attribute_not_exists(sources) OR sources < :limit",
            "ExpressionAttributeValues": {":one": {"N": "1"}, ":limit": {"N": str(limit)}},
        }
        put = {
            "TableName": self.tenants_table,
            "Item": {
                **source_key(r.tenant_id, r.namespace_id, r.source_id),
                "settings": {"S": settings_json(r)},
                "state": {"S": state_json(r)},
                "revision": {"N": "0"},
                "lease_token": {"S": ""},
                "lease_until": {"N": "0"},
            },
            "ConditionExpression": "attribute_not_exists(pk)",
        }
        try:
            self._send("transact_write_items", {"TransactItems": [{"Update": count}, {"Put": put}]})
        except _ConditionFailed:
            try:
                self.get(r.tenant_id, r.namespace_id, r.source_id)
            except errors.NotFound:
                return False  # the cap
            raise errors.Conflict(f"source {r.source_id!r} exists", source_id=r.source_id) from None
        return True

    def get(self, tenant_id: str, namespace_id: str, source_id: str) -> SourceRecord:
        request = {
            "TableName": self.tenants_table,
            "Key": source_key(tenant_id, namespace_id, source_id),
            "ConsistentRead": True,
        }
        item = self._send("get_item", request).get("Item")
        if not item:
            raise errors.NotFound(f"no source {source_id!r}", source_id=source_id)
        return _record(item)

    def update_settings(self, record: SourceRecord, *, revision: int) -> SourceRecord | None:
        r = record
        request = {
            "TableName": self.tenants_table,
            "Key": source_key(r.tenant_id, r.namespace_id, r.source_id),
            "UpdateExpression": "SET settings = :s, revision = revision + :one",
            "ConditionExpression": "revision = :r",
            "ExpressionAttributeValues": {
                ":s": {"S": settings_json(r)}, ":one": {"N": "1"}, ":r": {"N": str(revision)},
            },
            "ReturnValues": "ALL_NEW",
        }  # fmt: skip
        try:
            return _record(self._send("update_item", request)["Attributes"])
        except _ConditionFailed:
            return None

    def claim(
        self,
        tenant_id: str,
        namespace_id: str,
        source_id: str,
        *,
        token: str,
        expect: str,
        lease_seconds: float,
        now: float,
    ) -> SourceRecord | None:
        request = {
            "TableName": self.tenants_table,
            "Key": source_key(tenant_id, namespace_id, source_id),
            "UpdateExpression": "SET lease_token = :t, lease_until = :u",
            "ConditionExpression": "attribute_exists(pk)"
            " AND (lease_token = :free OR lease_token = :expect OR lease_until < :now)",
            "ExpressionAttributeValues": {
                ":t": {"S": token}, ":u": {"N": repr(now + lease_seconds)}, ":free": {"S": ""},
                ":expect": {"S": expect or "\x00"}, ":now": {"N": repr(now)},
            },
            "ReturnValues": "ALL_NEW",
        }  # fmt: skip
        try:
            return _record(self._send("update_item", request)["Attributes"])
        except _ConditionFailed:
            self.get(tenant_id, namespace_id, source_id)  # NotFound when it is gone
            return None

    def advance(self, record: SourceRecord, *, token: str) -> bool:
        r = record
        request = {
            "TableName": self.tenants_table,
            "Key": source_key(r.tenant_id, r.namespace_id, r.source_id),
            "UpdateExpression": "SET #state = :st, lease_token = :lt, lease_until = :lu",
            "ConditionExpression": "lease_token = :token",
            "ExpressionAttributeNames": {"#state": "state"},
            "ExpressionAttributeValues": {
                ":st": {"S": state_json(r)}, ":lt": {"S": r.lease_token}, ":lu": {"N": repr(r.lease_until)},
                ":token": {"S": token},
            },
        }  # fmt: skip
        try:
            self._send("update_item", request)
        except _ConditionFailed:
            return False
        return True

    def delete(self, tenant_id: str, namespace_id: str, source_id: str) -> None:
        self._drop_all(items_pk(tenant_id, namespace_id, source_id))
        delete = {
            "TableName": self.tenants_table,
            "Key": source_key(tenant_id, namespace_id, source_id),
            "ConditionExpression": "attribute_exists(pk)",
        }
        count = {
            "TableName": self.tenants_table,
            "Key": count_key(tenant_id, namespace_id),
            "UpdateExpression": "ADD sources :minus",
            "ExpressionAttributeValues": {":minus": {"N": "-1"}},
        }
        try:
            self._send("transact_write_items", {"TransactItems": [{"Delete": delete}, {"Update": count}]})
        except _ConditionFailed:
            return  # deleted meanwhile

    def purge_tenant(self, tenant_id: str) -> int:
        request: dict[str, Any] = {
            "TableName": self.tenants_table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":pk": {"S": f"TENANT#{tenant_id}"}, ":prefix": {"S": "SOURCE"}},
            "ConsistentRead": True,
        }
        keys = [{"pk": i["pk"], "sk": i["sk"]} for i in self._query_all(request)]
        for key in keys:
            if key["sk"]["S"].startswith("SOURCE#"):
                namespace_id, source_id = key["sk"]["S"].removeprefix("SOURCE#").rsplit("#", 1)
                self._drop_all(items_pk(tenant_id, namespace_id, source_id))
        self._batch_write(self.tenants_table, [{"DeleteRequest": {"Key": k}} for k in keys])
        return sum(k["sk"]["S"].startswith("SOURCE#") for k in keys)

    # -- items --------------------------------------------------------------------------------
    def known(
        self, tenant_id: str, namespace_id: str, source_id: str, item_ids: Sequence[str]
    ) -> dict[str, KnownItem]:
        pk = items_pk(tenant_id, namespace_id, source_id)
        keys = [{"pk": {"S": pk}, "sk": {"S": s}} for s in dict.fromkeys(item_sk(i) for i in item_ids)]
        found: dict[str, KnownItem] = {}
        for start in range(0, len(keys), BATCH_GET):
            pending: dict[str, Any] = {
                self.documents_table: {"Keys": keys[start : start + BATCH_GET], "ConsistentRead": True}
            }
            for attempt in range(UNPROCESSED_ATTEMPTS):
                response = self._send("batch_get_item", {"RequestItems": pending})
                for row in response.get("Responses", {}).get(self.documents_table, []):
                    item = _known(row)
                    found[item.item_id] = item
                pending = response.get("UnprocessedKeys") or {}
                if not pending:
                    break
                time.sleep(0.02 * 2**attempt)
            else:
                raise errors.DependencyUnavailable(
                    "DynamoDB left source items unread: retry", service="DynamoDB"
                )
        return found

    def put_items(
        self, tenant_id: str, namespace_id: str, source_id: str, items: Sequence[KnownItem]
    ) -> None:
        pk = items_pk(tenant_id, namespace_id, source_id)
        latest = {item_sk(i.item_id): i for i in items}  # one write per key in a batch
        self._batch_write(
            self.documents_table, [{"PutRequest": {"Item": _item(pk, i)}} for i in latest.values()]
        )

    def drop_items(self, tenant_id: str, namespace_id: str, source_id: str, item_ids: Sequence[str]) -> None:
        pk = items_pk(tenant_id, namespace_id, source_id)
        keys = dict.fromkeys(item_sk(i) for i in item_ids)
        self._batch_write(
            self.documents_table,
            [{"DeleteRequest": {"Key": {"pk": {"S": pk}, "sk": {"S": s}}}} for s in keys],
        )

    def unseen(
        self, tenant_id: str, namespace_id: str, source_id: str, *, run: int, limit: int
    ) -> list[KnownItem]:
        request: dict[str, Any] = {
            "TableName": self.documents_table,
            "KeyConditionExpression": "pk = :pk",
            "FilterExpression": "seen_run < :run",
            "ExpressionAttributeValues": {
                ":pk": {"S": items_pk(tenant_id, namespace_id, source_id)}, ":run": {"N": str(run)},
            },
            "ConsistentRead": True,
        }  # fmt: skip
        found: list[KnownItem] = []
        while len(found) < limit:
            response = self._send("query", request)
            found += [_known(row) for row in response.get("Items", [])]
            if "LastEvaluatedKey" not in response:
                break
            request["ExclusiveStartKey"] = response["LastEvaluatedKey"]
        return found[:limit]

    def items(self, tenant_id: str, namespace_id: str, source_id: str) -> list[KnownItem]:
        request: dict[str, Any] = {
            "TableName": self.documents_table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": items_pk(tenant_id, namespace_id, source_id)}},
            "ConsistentRead": True,
        }
        return sorted((_known(row) for row in self._query_all(request)), key=lambda i: i.item_id)

    # -- helpers ------------------------------------------------------------------------------
    def _query_all(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        while True:
            response = self._send("query", request)
            rows += response.get("Items", [])
            if "LastEvaluatedKey" not in response:
                return rows
            request = {**request, "ExclusiveStartKey": response["LastEvaluatedKey"]}

    def _drop_all(self, pk: str) -> None:
        request: dict[str, Any] = {
            "TableName": self.documents_table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": pk}},
            "ProjectionExpression": "pk, sk",
        }
        keys = [{"pk": r["pk"], "sk": r["sk"]} for r in self._query_all(request)]
        self._batch_write(self.documents_table, [{"DeleteRequest": {"Key": k}} for k in keys])

    def _batch_write(self, table: str, requests: list[dict[str, Any]]) -> None:
        for start in range(0, len(requests), BATCH_WRITE):
            pending: dict[str, Any] = {table: requests[start : start + BATCH_WRITE]}
            for attempt in range(UNPROCESSED_ATTEMPTS):
                response = self._send("batch_write_item", {"RequestItems": pending})
                pending = response.get("UnprocessedItems") or {}
                if not pending:
                    break
                time.sleep(0.02 * 2**attempt)
            else:
                raise errors.DependencyUnavailable(
                    "DynamoDB left source items unwritten: retry", service="DynamoDB"
                )

    def list(self, tenant_id: str, namespace_id: str) -> list[SourceRecord]:
        request: dict[str, Any] = {
            "TableName": self.tenants_table,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {
                ":pk": {"S": f"TENANT#{tenant_id}"}, ":prefix": {"S": f"SOURCE#{namespace_id}#"},
            },
            "ConsistentRead": True,
        }  # fmt: skip
        return sorted((_record(i) for i in self._query_all(request)), key=lambda r: r.source_id)
