"""Run logs and conversations in the usage table (encrypted at rest, its TTL ``expires_at`` removes
them), each in partitions of its own:

- ``RUNLOG#<tenant>#<run>`` / ``HEAD``: the run's head (owner, key, status, cancel, last sequence);
  ``RUNLOG#<tenant>#<run>`` / ``E#<last seq, 10 digits>``: one batch of its events, in order (a read
  after ``n`` is one ``Query`` on ``sk > E#<n>``). Heads move by conditional updates only.
- ``CONV#<tenant>`` / ``<conversation id>``: one conversation, its turns in one attribute (bounded to
  fit an item), written with a version condition; a tenant's conversations are one ``Query``.

A tenant's run logs live in partitions of their own, so its purge finds them with a ``Scan`` (a rare,
administrative sweep, like the ledger's run markers).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Sequence
from typing import Any

from ragline.adapters.aws.batch import Key, Send, delete_keys, scan_keys
from ragline.adapters.aws.errors import CONDITION_FAILED, call
from ragline.adapters.boto import LazyClient, error_code
from ragline.domain.conversations import Conversation, turns_from_json, turns_json
from ragline.domain.runs import RUN_LOG_TTL_SECONDS, LoggedEvent, RunHead, RunStatus, batches

HEAD = "HEAD"
SEQ_DIGITS = 10
LIST_READ_LIMIT = 2000
"""Conversations a list reads at most (the newest of them are listed)."""


class _ConditionFailed(Exception):
    pass


def _condition(exc: Any) -> BaseException | None:
    return _ConditionFailed() if error_code(exc) == CONDITION_FAILED else None


def run_pk(tenant_id: str, run_id: str) -> str:
    return f"RUNLOG#{tenant_id}#{run_id}"


def event_sk(seq: int) -> str:
    return f"E#{seq:0{SEQ_DIGITS}d}"


def head_item(h: RunHead) -> dict[str, Any]:
    return {
        "pk": {"S": run_pk(h.tenant_id, h.run_id)},
        "sk": {"S": HEAD},
        "owner": {"S": h.owner},
        "key_id": {"S": h.key_id},
        "status": {"S": h.status},
        "created_at": {"N": repr(h.created_at)},
        "expires_at": {"N": str(h.expires_at)},
        "background": {"BOOL": h.background},
        "cancel_requested": {"BOOL": h.cancel_requested},
        "last_seq": {"N": str(h.last_seq)},
    }


def head_from(tenant_id: str, run_id: str, item: dict[str, Any]) -> RunHead:
    return RunHead(
        tenant_id=tenant_id,
        run_id=run_id,
        owner=item["owner"]["S"],
        key_id=item["key_id"]["S"],
        status=item["status"]["S"],
        created_at=float(item["created_at"]["N"]),
        expires_at=int(item["expires_at"]["N"]),
        background=bool(item["background"]["BOOL"]),
        cancel_requested=bool(item["cancel_requested"]["BOOL"]),
        last_seq=int(item["last_seq"]["N"]),
    )


def partition_keys(send: Send, pk: str) -> list[Key]:
    """The keys of every item under ``pk`` (paginated)."""
    keys: list[Key] = []
    start: dict[str, Any] | None = None
    while True:
        request: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": pk}},
            "ProjectionExpression": "pk, sk",
            "ConsistentRead": True,
        }
        if start:
            request["ExclusiveStartKey"] = start
        page = send("query", request)
        keys.extend({"pk": i["pk"], "sk": i["sk"]} for i in page.get("Items", []))
        start = page.get("LastEvaluatedKey")
        if not start:
            return keys


class _Table:
    """The usage table, its calls' failed conditions as :class:`_ConditionFailed`."""

    def __init__(self, table_name: str, *, client: Any = None, region: str | None = None) -> None:
        self.table_name = table_name
        self._client = LazyClient("dynamodb", client=client, region=region)

    def _raw(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        return call(self._client(), action, request, _condition)

    def _send(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        return self._raw(action, {"TableName": self.table_name, **request})


class DynamoDbRunLog(_Table):
    def start(self, head: RunHead) -> None:
        # An earlier log under this id (a run that failed before any work, retried under its key): one
        # DeleteItem each (rare; the chat function's grant has no batch write).
        for key in partition_keys(self._send, run_pk(head.tenant_id, head.run_id)):
            self._send("delete_item", {"Key": key})
        self._send("put_item", {"Item": head_item(head)})

    def head(self, tenant_id: str, run_id: str) -> RunHead | None:
        key = {"pk": {"S": run_pk(tenant_id, run_id)}, "sk": {"S": HEAD}}
        item = self._send("get_item", {"Key": key, "ConsistentRead": True}).get("Item")
        return head_from(tenant_id, run_id, item) if item else None

    def append(self, tenant_id: str, run_id: str, events: Sequence[LoggedEvent]) -> None:
        if not events:
            return
        pk = run_pk(tenant_id, run_id)
        expires = str(int(time.time()) + RUN_LOG_TTL_SECONDS)
        for batch in batches(list(events)):
            item = {
                "pk": {"S": pk},
                "sk": {"S": event_sk(batch[-1].seq)},
                "events": {"S": json.dumps([[e.seq, e.type, e.data] for e in batch])},
                "expires_at": {"N": expires},
            }
            self._send("put_item", {"Item": item})
        # the events first: a reader never sees a head ahead of what it can read; no head (purged
        # meanwhile) or one already past it: nothing to move
        with contextlib.suppress(_ConditionFailed):
            self._send(
                "update_item",
                {"Key": {"pk": {"S": pk}, "sk": {"S": HEAD}},
                 "UpdateExpression": "SET last_seq = :seq",
                 "ConditionExpression": "attribute_exists(pk) AND last_seq < :seq",
                 "ExpressionAttributeValues": {":seq": {"N": str(events[-1].seq)}}},
            )  # fmt: skip

    def events(self, tenant_id: str, run_id: str, after: int, limit: int) -> list[LoggedEvent]:
        out: list[LoggedEvent] = []
        start: dict[str, Any] | None = None
        while len(out) < limit:
            request: dict[str, Any] = {
                "KeyConditionExpression": "pk = :pk AND sk BETWEEN :from AND :to",
                "ExpressionAttributeValues": {
                    ":pk": {"S": run_pk(tenant_id, run_id)},
                    ":from": {"S": event_sk(after + 1)},
                    ":to": {"S": event_sk(10**SEQ_DIGITS - 1)},
                },
                "ConsistentRead": True,
                "Limit": 20,
            }
            if start:
                request["ExclusiveStartKey"] = start
            page = self._send("query", request)
            for item in page.get("Items", []):
                out.extend(
                    LoggedEvent(int(seq), str(kind), str(data))
                    for seq, kind, data in json.loads(item["events"]["S"])
                    if int(seq) > after
                )
            start = page.get("LastEvaluatedKey")
            if not start:
                break
        return out

    def set_status(
        self, tenant_id: str, run_id: str, status: RunStatus, *, expect: tuple[RunStatus, ...]
    ) -> bool:
        names = {f":e{i}": {"S": s} for i, s in enumerate(expect)}
        try:
            self._send(
                "update_item",
                {"Key": {"pk": {"S": run_pk(tenant_id, run_id)}, "sk": {"S": HEAD}},
                 "UpdateExpression": "SET #status = :status",
                 "ConditionExpression": f"attribute_exists(pk) AND #status IN ({', '.join(names)})",
                 "ExpressionAttributeNames": {"#status": "status"},
                 "ExpressionAttributeValues": {":status": {"S": status}, **names}},
            )  # fmt: skip
        except _ConditionFailed:
            return False
        return True

    def request_cancel(self, tenant_id: str, run_id: str) -> bool:
        try:
            self._send(
                "update_item",
                {"Key": {"pk": {"S": run_pk(tenant_id, run_id)}, "sk": {"S": HEAD}},
                 "UpdateExpression": "SET cancel_requested = :yes",
                 "ConditionExpression": "attribute_exists(pk) AND #status IN (:queued, :running)",
                 "ExpressionAttributeNames": {"#status": "status"},
                 "ExpressionAttributeValues": {":yes": {"BOOL": True}, ":queued": {"S": "queued"},
                                               ":running": {"S": "running"}}},
            )  # fmt: skip
        except _ConditionFailed:
            return False
        return True

    def purge_tenant(self, tenant_id: str) -> int:
        keys = scan_keys(self._raw, self.table_name, f"RUNLOG#{tenant_id}#")
        delete_keys(self._raw, self.table_name, keys)
        return sum(1 for k in keys if k["sk"]["S"] == HEAD)


def conversation_item(c: Conversation, version: int) -> dict[str, Any]:
    return {
        "pk": {"S": f"CONV#{c.tenant_id}"},
        "sk": {"S": c.conversation_id},
        "owner": {"S": c.owner},
        "key_id": {"S": c.key_id},
        "created_at": {"N": repr(c.created_at)},
        "updated_at": {"N": repr(c.updated_at)},
        "turns": {"S": turns_json(c.turns)},
        "usage": {"S": json.dumps(c.usage)},
        "turn_count": {"N": str(c.turn_count)},
        "version": {"N": str(version)},
        "title": {"S": c.title},
        "expires_at": {"N": str(c.expires_at)},
    }


def conversation_from(tenant_id: str, item: dict[str, Any]) -> Conversation:
    return Conversation(
        tenant_id=tenant_id,
        conversation_id=item["sk"]["S"],
        owner=item["owner"]["S"],
        key_id=item["key_id"]["S"],
        created_at=float(item["created_at"]["N"]),
        updated_at=float(item["updated_at"]["N"]),
        turns=turns_from_json(item["turns"]["S"]) if "turns" in item else [],
        usage=json.loads(item["usage"]["S"]) if "usage" in item else {},
        turn_count=int(item["turn_count"]["N"]),
        version=int(item["version"]["N"]),
        title=item.get("title", {}).get("S", ""),
    )


class DynamoDbConversationStore(_Table):
    def get(self, tenant_id: str, conversation_id: str) -> Conversation | None:
        key = {"pk": {"S": f"CONV#{tenant_id}"}, "sk": {"S": conversation_id}}
        item = self._send("get_item", {"Key": key, "ConsistentRead": True}).get("Item")
        return conversation_from(tenant_id, item) if item else None

    def save(self, conversation: Conversation, *, expect_version: int) -> bool:
        condition: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(pk)"}
        if expect_version:
            condition = {
                "ConditionExpression": "version = :v",
                "ExpressionAttributeValues": {":v": {"N": str(expect_version)}},
            }
        try:
            self._send("put_item", {"Item": conversation_item(conversation, expect_version + 1), **condition})
        except _ConditionFailed:
            return False
        return True

    def list(self, tenant_id: str, owner: str | None, limit: int) -> list[Conversation]:
        found: list[Conversation] = []
        start: dict[str, Any] | None = None
        while len(found) < LIST_READ_LIMIT:
            request: dict[str, Any] = {
                "KeyConditionExpression": "pk = :pk",
                "ExpressionAttributeValues": {":pk": {"S": f"CONV#{tenant_id}"}},
                "ProjectionExpression": "sk, #owner, key_id, created_at, updated_at, turn_count, version,"
                " title",
                "ExpressionAttributeNames": {"#owner": "owner"},
                "ConsistentRead": True,
            }
            if owner is not None:
                request["FilterExpression"] = "#owner = :owner"
                request["ExpressionAttributeValues"][":owner"] = {"S": owner}
            if start:
                request["ExclusiveStartKey"] = start
            page = self._send("query", request)
            found.extend(conversation_from(tenant_id, item) for item in page.get("Items", []))
            start = page.get("LastEvaluatedKey")
            if not start:
                break
        found.sort(key=lambda c: (-c.updated_at, c.conversation_id))
        return found[:limit]

    def delete(self, tenant_id: str, conversation_id: str) -> bool:
        key = {"pk": {"S": f"CONV#{tenant_id}"}, "sk": {"S": conversation_id}}
        try:
            self._send("delete_item", {"Key": key, "ConditionExpression": "attribute_exists(pk)"})
        except _ConditionFailed:
            return False
        return True

    def purge_tenant(self, tenant_id: str) -> int:
        return delete_keys(self._raw, self.table_name, partition_keys(self._send, f"CONV#{tenant_id}"))
