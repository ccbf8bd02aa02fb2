"""Production :class:`~ragline.ports.DocumentRegistry`: one DynamoDB item per document.

Key: ``pk = "DOC#<tenant>#<namespace>"``, ``sk = "<document_id>"``, so a namespace is one Query.
Every transition is one conditional write, never a read-modify-write:

- ``claim`` is one ``UpdateItem`` whose condition is the contract's grant rule
  (:func:`~ragline.domain.documents.claim_decision` as a condition expression), which writes the
  domain's :class:`~ragline.domain.documents.ClaimUpdate` and bumps ``generation`` with ``ADD``
  (atomic, so concurrent claims get distinct generations). A refused claim returns the stored item
  (``ReturnValuesOnConditionCheckFailure=ALL_OLD``), which ``claim_decision`` calls stale or duplicate.
- ``attempts`` restarts at 1 for a new sequencer and counts up for the same one. An update expression
  cannot branch on a stored value; its only conditional is ``if_not_exists(path, …)``, so the counter
  lives under a name that *is* the sequencer, ``attempts#<sequencer>``: a new sequencer finds no such
  attribute (→ 1), a redelivery finds it (→ n + 1). Counters of superseded sequencers are left behind
  by ``claim`` and dropped by the next ``complete``/``fail``, which rewrite the whole item.
- ``complete``/``fail`` are ``PutItem`` conditioned on ``generation = :mine``.

Request builders are pure functions returning the kwargs of the boto3 call (unit-tested as dicts);
:class:`DynamoDbDocumentRegistry` only sends them and translates errors.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ragline import errors
from ragline.adapters.aws.batch import delete_keys, scan_keys
from ragline.adapters.aws.errors import CONDITION_FAILED, call
from ragline.adapters.boto import LazyClient, error_code
from ragline.domain.documents import (
    CLAIMABLE_STATUSES,
    Claim,
    DocumentRecord,
    claim_decision,
    claim_update,
    normalise_sequencer,
    now,
)

_TEXT_FIELDS = (
    "tenant_id", "namespace_id", "document_id", "source", "status", "sequencer",
    "content_hash", "version_id", "etag", "error_code", "error_message",
)  # fmt: skip
_NUMBER_FIELDS = ("generation", "size", "chunk_count", "pages", "indexed_generation")
_TIME_FIELDS = ("created_at", "updated_at")
_CLAIM_FIELDS = (
    "tenant_id", "namespace_id", "document_id", "sequencer", "status", "source", "version_id", "etag",
    "size", "error_code", "error_message", "generation", "created_at", "updated_at",
)  # fmt: skip
"""Attributes a claim writes; content_hash/chunk_count/pages/indexed_generation keep the last
completed version's values."""
ATTEMPTS_PREFIX = "attempts#"


# -- request builders (pure) ----------------------------------------------------------------------
def document_key(tenant_id: str, namespace_id: str, document_id: str) -> dict[str, dict[str, str]]:
    if "#" in tenant_id or "#" in namespace_id:  # check_identifier forbids it; it would alias keys
        raise ValueError(f"'#' is not allowed in a tenant or namespace id: {tenant_id!r}/{namespace_id!r}")
    return {"pk": {"S": f"DOC#{tenant_id}#{namespace_id}"}, "sk": {"S": document_id}}


def claim_request(
    table_name: str,
    tenant_id: str,
    namespace_id: str,
    document_id: str,
    sequencer: str,
    *,
    deleting: bool,
    source: str,
    version_id: str,
    etag: str,
    size: int,
    at: datetime,
) -> dict[str, Any]:
    """``UpdateItem`` granting the claim iff the contract allows it; ``sequencer`` is normalised."""
    update = claim_update(
        sequencer, deleting=deleting, source=source, version_id=version_id, etag=etag, size=size, at=at
    )
    statuses = {f":{s}": {"S": s} for s in CLAIMABLE_STATUSES}
    return {
        "TableName": table_name,
        "Key": document_key(tenant_id, namespace_id, document_id),
        "ConditionExpression": (
            "attribute_not_exists(#pk) OR #sequencer < :sequencer"
            f" OR (#sequencer = :sequencer AND #status IN ({', '.join(statuses)}))"
        ),
        "UpdateExpression": (
            "SET #tenant_id = :tenant_id, #namespace_id = :namespace_id, #document_id = :document_id,"
            " #sequencer = :sequencer, #status = :claimed_status, #source = :source,"
            " #version_id = :version_id, #etag = :etag, #size = :size,"
            " #error_code = :empty, #error_message = :empty,"
            " #attempts = if_not_exists(#attempts, :zero) + :one,"
            " #created_at = if_not_exists(#created_at, :at), #updated_at = :at"
            " ADD #generation :one"
        ),
        "ExpressionAttributeNames": {
            "#pk": "pk",
            "#attempts": ATTEMPTS_PREFIX + sequencer,
            **{f"#{f}": f for f in _CLAIM_FIELDS},
        },
        "ExpressionAttributeValues": {
            ":tenant_id": {"S": tenant_id},
            ":namespace_id": {"S": namespace_id},
            ":document_id": {"S": document_id},
            ":sequencer": {"S": update.sequencer},
            ":claimed_status": {"S": update.status},
            ":source": {"S": update.source},
            ":version_id": {"S": update.version_id},
            ":etag": {"S": update.etag},
            ":size": {"N": str(update.size)},
            ":empty": {"S": ""},
            ":zero": {"N": "0"},
            ":one": {"N": "1"},
            ":at": {"S": update.updated_at.isoformat()},
            **statuses,
        },
        "ReturnValues": "ALL_NEW",
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
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
    item[ATTEMPTS_PREFIX + record.sequencer] = {"N": str(record.attempts)}
    return item


def record_from_item(item: dict[str, Any]) -> DocumentRecord:
    fields: dict[str, Any] = {f: item[f]["S"] for f in (*_TEXT_FIELDS, *_TIME_FIELDS) if f in item}
    fields |= {f: int(item[f]["N"]) for f in _NUMBER_FIELDS if f in item}
    attempts = item.get(ATTEMPTS_PREFIX + fields.get("sequencer", ""))
    fields["attempts"] = int(attempts["N"]) if attempts else 0
    return DocumentRecord.model_validate(fields)


# -- sending --------------------------------------------------------------------------------------
class _ConditionFailed(Exception):
    def __init__(self, item: dict[str, Any] | None) -> None:
        super().__init__("condition failed")
        self.item = item


class DynamoDbDocumentRegistry:
    """``client`` is injectable (tests, stubs); ``None`` builds one on first use, never at import."""

    def __init__(self, table_name: str, *, client: Any = None, region: str | None = None) -> None:
        self.table_name = table_name
        self.region = region
        self._client = LazyClient("dynamodb", client=client, region=region)

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
        sequencer: str,
        *,
        deleting: bool = False,
        source: str = "",
        version_id: str = "",
        etag: str = "",
        size: int = 0,
    ) -> Claim:
        seq = normalise_sequencer(sequencer)
        request = claim_request(
            self.table_name, tenant_id, namespace_id, document_id, seq,
            deleting=deleting, source=source, version_id=version_id, etag=etag, size=size, at=now(),
        )  # fmt: skip
        try:
            response = self._send("update_item", request)
        except _ConditionFailed as refused:
            if not refused.item:  # only an existing item can fail this condition
                raise errors.DependencyFailed(
                    "DynamoDB refused a claim without returning the stored item", table=self.table_name
                ) from refused
            stored = record_from_item(refused.item)
            decision = claim_decision(stored, seq)
            if decision == "claimed":  # the condition and the domain rule disagree: never guess
                raise errors.DependencyFailed(
                    "DynamoDB refused a claim the stored item allows", table=self.table_name
                ) from refused
            return Claim(granted=False, record=stored, reason=decision)
        return Claim(granted=True, record=record_from_item(response["Attributes"]))

    def complete(self, record: DocumentRecord) -> bool:
        return self._put_if_generation(record.model_copy(update={"updated_at": now()}))

    def fail(self, record: DocumentRecord, code: str, message: str) -> bool:
        failed = record.model_copy(
            update={"status": "failed", "error_code": code, "error_message": message, "updated_at": now()}
        )
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
