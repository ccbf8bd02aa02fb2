"""Batch writes shared by the DynamoDB adapters: deleting many items, with unprocessed ones retried."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from ragline import errors

Key = dict[str, dict[str, str]]
Send = Callable[[str, dict[str, Any]], dict[str, Any]]
BATCH_WRITE_LIMIT = 25
"""DynamoDB's limit of requests per ``BatchWriteItem``."""
BATCH_ATTEMPTS = 8


def backoff(attempt: int) -> None:
    """Pause before retrying unprocessed items: 50 ms, 100 ms, 200 ms, ..."""
    time.sleep(0.05 * 2**attempt)


def delete_keys(send: Send, table_name: str, keys: Sequence[Key]) -> int:
    """Delete every item of ``keys`` (missing ones are no-ops); returns how many deletes were sent.

    Unprocessed deletes (throttling inside the batch) are re-sent with backoff; when they are still
    left after :data:`BATCH_ATTEMPTS`, ``Throttled`` — the caller may simply run again (idempotent).
    """
    for i in range(0, len(keys), BATCH_WRITE_LIMIT):
        batch = keys[i : i + BATCH_WRITE_LIMIT]
        request: dict[str, Any] = {
            "RequestItems": {table_name: [{"DeleteRequest": {"Key": k}} for k in batch]}
        }
        for attempt in range(BATCH_ATTEMPTS):
            unprocessed = send("batch_write_item", request).get("UnprocessedItems") or {}
            if not unprocessed:
                break
            request = {"RequestItems": unprocessed}
            backoff(attempt)
        else:
            raise errors.Throttled(
                "DynamoDB left deletes unprocessed in batch_write_item",
                service="DynamoDB", action="batch_write_item",
            )  # fmt: skip
    return len(keys)


def scan_keys(send: Send, table_name: str, pk_prefix: str) -> list[Key]:
    """The keys of every item whose ``pk`` starts with ``pk_prefix`` — a full, paginated ``Scan``
    (for rare administrative sweeps over items that live in partitions of their own)."""
    keys: list[Key] = []
    start_key: dict[str, Any] | None = None
    while True:
        request: dict[str, Any] = {
            "TableName": table_name,
            "ProjectionExpression": "pk, sk",
            "FilterExpression": "begins_with(pk, :prefix)",
            "ExpressionAttributeValues": {":prefix": {"S": pk_prefix}},
            "ConsistentRead": True,
        }
        if start_key:
            request["ExclusiveStartKey"] = start_key
        page = send("scan", request)
        keys.extend({"pk": item["pk"], "sk": item["sk"]} for item in page.get("Items", []))
        start_key = page.get("LastEvaluatedKey")
        if not start_key:
            return keys
