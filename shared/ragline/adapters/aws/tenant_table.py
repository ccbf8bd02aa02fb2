"""Sending to the tenants table: one call with DynamoDB's errors as Ragline's, and the reads that take
more than one call (every page of a query; a batch get with its unprocessed keys sent again).

:class:`~ragline.adapters.aws.tenants.DynamoDbTenantRegistry` builds the requests
(:mod:`ragline.adapters.aws.tenant_requests`) and decides what a failed condition means (a conflict,
a missing item, a race to check again); this module only sends them. A failed condition is raised as
:class:`ConditionFailed` for that reason: it is never an error by itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ragline import errors
from ragline.adapters.aws.batch import Key
from ragline.adapters.aws.errors import CONDITION_FAILED, call
from ragline.adapters.aws.tenant_items import get_request
from ragline.adapters.aws.tenant_requests import batch_get_request
from ragline.adapters.boto import LazyClient, error_code

TRANSACTION_CANCELED = "TransactionCanceledException"
_RETRYABLE_CANCELLATIONS = frozenset(
    {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"}
)
BATCH_GET_LIMIT = 100
"""Keys per ``BatchGetItem`` (DynamoDB's own limit)."""
BATCH_GET_ATTEMPTS = 5
"""Sends of one batch while DynamoDB leaves keys unprocessed; past this, ``Throttled``."""


class ConditionFailed(Exception):
    """The request's condition (or a transaction item's) failed: the caller says what that means."""


def cancellation_codes(exc: BaseException) -> list[str]:
    """The per-item codes of a canceled transaction (``"None"`` for items that were fine)."""
    response = getattr(exc, "response", None)
    reasons = response.get("CancellationReasons") if isinstance(response, dict) else None
    return [str(r.get("Code") or "") for r in reasons or [] if isinstance(r, dict)]


class TenantTable:
    """The tenants table behind ``client``; ``pause(attempt)`` waits before a batch is sent again."""

    def __init__(self, table_name: str, client: LazyClient, *, pause: Callable[[int], None]) -> None:
        self.table_name = table_name
        self._client = client
        self._pause = pause

    def send(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        """One call; a failed condition is :class:`ConditionFailed`, a transaction cancelled by
        contention ``Throttled``, everything else as :func:`~ragline.adapters.aws.errors.call` maps it."""

        def domain_error(exc: Any) -> BaseException | None:
            if error_code(exc) == CONDITION_FAILED:
                return ConditionFailed()
            if error_code(exc) == TRANSACTION_CANCELED:
                codes = cancellation_codes(exc)
                if "ConditionalCheckFailed" in codes:
                    return ConditionFailed()
                if _RETRYABLE_CANCELLATIONS.intersection(codes):
                    return errors.Throttled(
                        f"DynamoDB canceled {action}", service="DynamoDB", action=action,
                        aws_code=TRANSACTION_CANCELED, reasons=codes,
                    )  # fmt: skip
            return None

        return call(self._client(), action, request, domain_error)

    def get(self, key: Key) -> dict[str, Any] | None:
        """The item under ``key``, read consistently (None: there is none)."""
        item: dict[str, Any] | None = self.send("get_item", get_request(self.table_name, key)).get("Item")
        return item or None

    def query_all(self, build: Callable[..., dict[str, Any]], *args: str) -> list[dict[str, Any]]:
        """Every page of the query ``build(table_name, *args, start_key)`` makes, in order."""
        items: list[dict[str, Any]] = []
        start_key: dict[str, Any] | None = None
        while True:
            page = self.send("query", build(self.table_name, *args, start_key))
            items.extend(page.get("Items", []))
            start_key = page.get("LastEvaluatedKey")
            if not start_key:
                return items

    def batch_get(self, keys: Sequence[Key]) -> list[dict[str, Any]]:
        """The items under ``keys`` (missing ones left out), in no particular order."""
        items: list[dict[str, Any]] = []
        for i in range(0, len(keys), BATCH_GET_LIMIT):
            request = batch_get_request(self.table_name, keys[i : i + BATCH_GET_LIMIT])
            for attempt in range(BATCH_GET_ATTEMPTS):
                response = self.send("batch_get_item", request)
                items.extend(response.get("Responses", {}).get(self.table_name, []))
                unprocessed = response.get("UnprocessedKeys") or {}
                if not unprocessed:
                    break
                request = {"RequestItems": unprocessed}
                self._pause(attempt)
            else:
                raise errors.Throttled(
                    "DynamoDB left keys unprocessed in batch_get_item",
                    service="DynamoDB", action="batch_get_item",
                )  # fmt: skip
        return items
