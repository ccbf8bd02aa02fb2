"""Production :class:`~ragline.ports.DocumentRegistry`: one DynamoDB item per document.

Key: ``pk = "DOC#<tenant>#<namespace>"``, ``sk = "<document_id>"``, so a namespace is one Query.
Every transition is a conditional write:

- ``claim`` reads the item (strongly consistent), applies the domain's rule
  (:func:`~ragline.domain.documents.decide_claim`, the one statement of it) and writes the claimed
  record with ``PutItem`` *only if the item is still the one it read*: absent, or at the same
  ``generation``, ``status`` and ``updated_at`` (every claim, ``complete`` and ``fail`` rewrites
  ``updated_at``; a claim also bumps ``generation``). A concurrent write in between fails the
  condition and the claim decides again on the new item, so two claims never both win from one
  state and each granted claim gets its own generation — optimistic locking, which DynamoDB's
  conditional writes make exact on the real service, not only on a single-threaded emulator. A rule
  that depends on the stored origin, the S3 order and the lease's clock cannot be written as one
  condition expression without restating it; this keeps it in one place, at the price of one read.
- ``complete``/``fail`` are ``PutItem`` conditioned on ``generation = :mine``.
- Items written before the S3 order had an origin are read through
  :func:`~ragline.domain.documents.upgrade_stored`; their per-sequencer attempt counters
  (``attempts#<sequencer>``) still read, and the next write replaces the whole item.

Request builders are pure functions returning the kwargs of the boto3 call (unit-tested as dicts);
:class:`DynamoDbDocumentRegistry` only sends them and translates errors.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ragline import errors
from ragline.adapters.aws.batch import delete_keys, scan_keys
from ragline.adapters.aws.errors import CONDITION_FAILED, call
from ragline.adapters.boto import LazyClient, error_code
from ragline.domain.documents import (
    Claim,
    DocumentRecord,
    claim_update,
    decide_claim,
    normalise_sequencer,
    now,
    upgrade_stored,
)

_TEXT_FIELDS = (
    "tenant_id", "namespace_id", "document_id", "source", "status", "sequencer", "origin",
    "content_hash", "version_id", "served_version", "etag", "error_code", "error_message",
    "sidecar_sequencer", "deleted_change", "change", "recipe",
)  # fmt: skip
_NUMBER_FIELDS = ("generation", "size", "chunk_count", "pages", "indexed_generation", "attempts")
_TIME_FIELDS = ("created_at", "updated_at")
_OPTIONAL_TIME_FIELDS = ("lease_until",)
"""Written only when set (an absent attribute reads as ``None``)."""
_JSON_FIELDS = ("attributes", "readers")
"""The document's metadata and reader terms, as compact JSON text (a map of any keys a tenant
invents, and a list that may be empty — neither a fit for DynamoDB's typed sets); an item written
before they existed reads as none."""
LEGACY_ATTEMPTS_PREFIX = "attempts#"
"""Where items written before this version kept the attempt counter of their sequencer."""
CLAIM_TRIES = 8
"""Claims decided again after a concurrent write; past this, the document is too contended: retry later."""


# -- request builders (pure) ----------------------------------------------------------------------
def document_key(tenant_id: str, namespace_id: str, document_id: str) -> dict[str, dict[str, str]]:
    if "#" in tenant_id or "#" in namespace_id:  # check_identifier forbids it; it would alias keys
        raise ValueError(f"'#' is not allowed in a tenant or namespace id: {tenant_id!r}/{namespace_id!r}")
    return {"pk": {"S": f"DOC#{tenant_id}#{namespace_id}"}, "sk": {"S": document_id}}


def claim_put_request(
    table_name: str, claimed: DocumentRecord, stored_item: dict[str, Any] | None
) -> dict[str, Any]:
    """``PutItem`` of the claimed record, only while the item is the one the claim was decided on:
    absent, or unchanged since it was read (same generation, status and ``updated_at``)."""
    request: dict[str, Any] = {"TableName": table_name, "Item": record_to_item(claimed)}
    if stored_item is None:
        request |= {
            "ConditionExpression": "attribute_not_exists(#pk)",
            "ExpressionAttributeNames": {"#pk": "pk"},
        }
        return request
    return request | {
        "ConditionExpression": (
            "#generation = :generation AND #status = :status AND #updated_at = :updated_at"
        ),
        "ExpressionAttributeNames": {f"#{f}": f for f in ("generation", "status", "updated_at")},
        "ExpressionAttributeValues": {
            ":generation": stored_item["generation"],
            ":status": stored_item["status"],
            ":updated_at": stored_item["updated_at"],
        },
    }


def put_if_generation_request(table_name: str, record: DocumentRecord) -> dict[str, Any]:
    """``PutItem`` of the whole record, only while the stored generation is still ``record``'s."""
    return {
        "TableName": table_name,
        "Item": record_to_item(record),
        "ConditionExpression": "#generation = :mine",
        "ExpressionAttributeNames": {"#generation": "generation"},
        "ExpressionAttributeValues": {":mine": {"N": str(record.generation)}},
    }


def get_request(table_name: str, tenant_id: str, namespace_id: str, document_id: str) -> dict[str, Any]:
    return {
        "TableName": table_name,
        "Key": document_key(tenant_id, namespace_id, document_id),
        "ConsistentRead": True,
    }


def list_request(
    table_name: str, tenant_id: str, namespace_id: str, start_key: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One page of a namespace's records, ascending by document id (the sort key)."""
    request: dict[str, Any] = {
        "TableName": table_name,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": document_key(tenant_id, namespace_id, "")["pk"]},
        "ScanIndexForward": True,
        "ConsistentRead": True,
    }
    if start_key:
        request["ExclusiveStartKey"] = start_key
    return request


# -- item codec -----------------------------------------------------------------------------------
def record_to_item(record: DocumentRecord) -> dict[str, dict[str, str]]:
    item = document_key(record.tenant_id, record.namespace_id, record.document_id)
    item |= {f: {"S": getattr(record, f)} for f in _TEXT_FIELDS}
    item |= {f: {"N": str(getattr(record, f))} for f in _NUMBER_FIELDS}
    item |= {f: {"S": getattr(record, f).isoformat()} for f in _TIME_FIELDS}
    item |= {f: {"S": v.isoformat()} for f in _OPTIONAL_TIME_FIELDS if (v := getattr(record, f))}
    item |= {f: {"S": _compact(getattr(record, f))} for f in _JSON_FIELDS}
    return item


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def record_from_item(item: dict[str, Any]) -> DocumentRecord:
    fields: dict[str, Any] = {
        f: item[f]["S"] for f in (*_TEXT_FIELDS, *_TIME_FIELDS, *_OPTIONAL_TIME_FIELDS) if f in item
    }
    fields |= {f: int(item[f]["N"]) for f in _NUMBER_FIELDS if f in item}
    fields |= {f: json.loads(item[f]["S"]) for f in _JSON_FIELDS if f in item}
    if "attempts" not in fields:
        legacy = item.get(LEGACY_ATTEMPTS_PREFIX + fields.get("sequencer", ""))
        fields["attempts"] = int(legacy["N"]) if legacy else 0
    return DocumentRecord.model_validate(upgrade_stored(fields))


# -- sending --------------------------------------------------------------------------------------
class _ConditionFailed(Exception):
    def __init__(self, item: dict[str, Any] | None) -> None:
        super().__init__("condition failed")
        self.item = item


class DynamoDbDocumentRegistry:
    """``client`` is injectable (tests, stubs); ``None`` builds one on first use, never at import."""

    def __init__(
        self,
        table_name: str,
        *,
        client: Any = None,
        region: str | None = None,
        clock: Callable[[], datetime] = now,
    ) -> None:
        self.table_name = table_name
        self.region = region
        self._client = LazyClient("dynamodb", client=client, region=region)
        self._clock = clock
        """Claims' time (leases): the function's clock, injectable so a test can let a lease run out."""

    def _send(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        def domain_error(exc: Any) -> BaseException | None:
            if error_code(exc) == CONDITION_FAILED:
                return _ConditionFailed(exc.response.get("Item"))
            return None

        return call(self._client(), action, request, domain_error)

    def claim(
        self,
        tenant_id: str,
        namespace_id: str,
        document_id: str,
        sequencer: str | None,
        *,
        deleting: bool = False,
        source: str = "",
        version_id: str = "",
        etag: str = "",
        size: int = 0,
        lease_seconds: float = 0.0,
        sidecar: str | None = None,
    ) -> Claim:
        seq = None if sequencer is None else normalise_sequencer(sequencer)
        key = (tenant_id, namespace_id, document_id)
        for _ in range(CLAIM_TRIES):
            stored_item = self._send("get_item", get_request(self.table_name, *key)).get("Item")
            stored = record_from_item(stored_item) if stored_item else None
            update = claim_update(
                seq, deleting=deleting, source=source, version_id=version_id, etag=etag, size=size,
                at=self._clock(), lease_seconds=lease_seconds,
                sidecar=None if sidecar is None else normalise_sequencer(sidecar),
            )  # fmt: skip
            claim = decide_claim(stored, *key, update)
            if not claim.granted:
                return claim
            try:
                self._send("put_item", claim_put_request(self.table_name, claim.record, stored_item))
            except _ConditionFailed:
                continue  # another write came first: decide again on what it left
            return claim
        raise errors.Throttled(
            "the document's record kept changing under the claim; retry later",
            table=self.table_name, document_id=document_id,
        )  # fmt: skip

    def complete(self, record: DocumentRecord) -> bool:
        return self._put_if_generation(record.model_copy(update={"updated_at": self._clock()}))

    def fail(self, record: DocumentRecord, code: str, message: str) -> bool:
        failed = record.model_copy(
            update={
                "status": "failed", "error_code": code, "error_message": message, "updated_at": self._clock()
            }
        )  # fmt: skip
        return self._put_if_generation(failed)

    def _put_if_generation(self, record: DocumentRecord) -> bool:
        try:
            self._send("put_item", put_if_generation_request(self.table_name, record))
        except _ConditionFailed:
            return False
        return True

    def get(self, tenant_id: str, namespace_id: str, document_id: str) -> DocumentRecord | None:
        response = self._send("get_item", get_request(self.table_name, tenant_id, namespace_id, document_id))
        item = response.get("Item")
        return record_from_item(item) if item else None

    def list(self, tenant_id: str, namespace_id: str) -> list[DocumentRecord]:
        records: list[DocumentRecord] = []
        start_key: dict[str, Any] | None = None
        while True:
            page = self._send("query", list_request(self.table_name, tenant_id, namespace_id, start_key))
            records.extend(record_from_item(item) for item in page.get("Items", []))
            start_key = page.get("LastEvaluatedKey")
            if not start_key:
                return records

    def purge_tenant(self, tenant_id: str) -> int:
        """A tenant's records sit in one partition per namespace, deleted ones' too: a ``Scan``
        finds them all (a rare, administrative sweep)."""
        keys = scan_keys(self._send, self.table_name, f"DOC#{tenant_id}#")
        return delete_keys(self._send, self.table_name, keys)
