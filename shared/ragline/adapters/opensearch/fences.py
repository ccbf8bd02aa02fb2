"""Fences in DynamoDB, for the OpenSearch Serverless mode of the store (see ``serverless.py``).

A vector-search collection refuses custom ``_id``s and ``version``/``version_type``, so the fence
cannot be an OpenSearch document with an external version. It is one item of the documents table
per (index, tenant, namespace, document), every change a conditional or atomic write:

- ``pk = "VSFENCE#<index>#<tenant>"``, ``sk = "<namespace>#<document_id>"`` (tenant and namespace ids
  never hold ``#``; the registry's own items have ``pk = "DOC#…"``, so the two never meet, and a
  tenant's fences are one Query);
- ``published`` (N): the generation last published; raised by a conditional ``UpdateItem``
  (``attribute_not_exists(published) OR published <= :g``), never lowered;
- ``stamp`` (N): a counter ``ADD``-ed by every upsert of the document, whose chunks carry the value
  (the newest copy of a chunk wins when a retried write left two);
- ``w<generation>`` (NS): the sequence numbers written at that generation (set union: a retried
  upsert adds nothing), so ``publish`` knows how many chunks must be searchable before it raises
  the fence; removed when that generation is published past, or discarded;
- ``tenant_id``, ``namespace_id``, ``document_id`` (S), for people reading the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from ragline import errors
from ragline.adapters.boto import LazyClient, error_code, http_status
from ragline.domain.models import TenantScope

PREFIX = "VSFENCE#"
_BATCH_GET = 100
"""DynamoDB's limit on keys per ``BatchGetItem``."""
_CAN_WRITE = "attribute_not_exists(published) OR published <= :g"
_NAMES = "tenant_id = :t, namespace_id = :n, document_id = :d"


def written_attr(generation: int) -> str:
    return f"w{generation}"


@contextmanager
def _translate(action: str) -> Iterator[None]:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except ClientError as exc:
        code = error_code(exc)
        if code in ("ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"):
            raise errors.Throttled(f"DynamoDB throttled {action}") from exc
        if http_status(exc) >= 500:
            raise errors.DependencyUnavailable(f"DynamoDB failed during {action}", aws_code=code) from exc
        raise errors.DependencyFailed(f"DynamoDB rejected {action}", aws_code=code) from exc
    except BotoCoreError as exc:
        raise errors.DependencyUnavailable(f"DynamoDB unreachable during {action}") from exc


class DynamoFences:
    """The fences of one chunk index, in ``table`` (the documents table)."""

    def __init__(self, table: str, index: str, *, client: Any = None, region: str | None = None) -> None:
        if not table:
            raise errors.ConfigurationError(
                "RAGLINE_DOCUMENTS_TABLE is required for the OpenSearch Serverless store (its fences)"
            )
        self.table = table
        self.index = index
        self._client = LazyClient("dynamodb", client=client, region=region)

    def key(self, scope: TenantScope, document_id: str) -> dict[str, dict[str, str]]:
        return {
            "pk": {"S": f"{PREFIX}{self.index}#{scope.tenant_id}"},
            "sk": {"S": f"{scope.namespace_id}#{document_id}"},
        }

    def published(self, scope: TenantScope, document_ids: Iterable[str]) -> dict[str, int]:
        """Each document's fence (0 before any publish), read strongly consistent."""
        ids = sorted(set(document_ids))
        out = dict.fromkeys(ids, 0)
        for i in range(0, len(ids), _BATCH_GET):
            keys = [self.key(scope, d) for d in ids[i : i + _BATCH_GET]]
            while keys:
                with _translate("fence read"):
                    resp = self._client().batch_get_item(
                        RequestItems={
                            self.table: {
                                "Keys": keys,
                                "ConsistentRead": True,
                                "ProjectionExpression": "sk, published",
                            }
                        }
                    )
                for item in resp.get("Responses", {}).get(self.table, []):
                    doc = item["sk"]["S"].split("#", 1)[1]
                    out[doc] = int(item.get("published", {}).get("N", "0"))
                keys = resp.get("UnprocessedKeys", {}).get(self.table, {}).get("Keys", [])
        return out

    def item(self, scope: TenantScope, document_id: str) -> dict[str, Any]:
        with _translate("fence read"):
            resp = self._client().get_item(
                TableName=self.table, Key=self.key(scope, document_id), ConsistentRead=True
            )
        item: dict[str, Any] = resp.get("Item") or {}
        return item

    def begin_write(self, scope: TenantScope, document_id: str, generation: int, seqs: Iterable[int]) -> int:
        """Record the sequence numbers about to be written at ``generation`` and return a fresh stamp,
        atomically refused (:class:`~ragline.errors.Superseded`) when the fence is above it."""
        from botocore.exceptions import ClientError

        request = {
            "TableName": self.table,
            "Key": self.key(scope, document_id),
            "UpdateExpression": f"ADD stamp :one, #w :seqs SET {_NAMES}",
            "ConditionExpression": _CAN_WRITE,
            "ExpressionAttributeNames": {"#w": written_attr(generation)},
            "ExpressionAttributeValues": {
                ":one": {"N": "1"},
                ":seqs": {"NS": sorted({str(s) for s in seqs})},
                ":g": {"N": str(generation)},
                ":t": {"S": scope.tenant_id},
                ":n": {"S": scope.namespace_id},
                ":d": {"S": document_id},
            },
            "ReturnValues": "UPDATED_NEW",
        }
        with _translate("fence write"):
            try:
                resp = self._client().update_item(**request)
            except ClientError as exc:
                if error_code(exc) != "ConditionalCheckFailedException":
                    raise
                published = self.published(scope, [document_id])[document_id]
                raise errors.Superseded(
                    "a newer version of the document was published",
                    document_id=document_id,
                    generation=generation,
                    published=published,
                ) from exc
        return int(resp["Attributes"]["stamp"]["N"])

    def publish(self, scope: TenantScope, document_id: str, generation: int, stale: Iterable[str]) -> bool:
        """Raise the fence to ``generation`` (False: it is above already), dropping the ``stale``
        written-sets (those of generations up to this one)."""
        from botocore.exceptions import ClientError

        names = {f"#s{i}": a for i, a in enumerate(sorted(set(stale)))}
        remove = f" REMOVE {', '.join(names)}" if names else ""
        request: dict[str, Any] = {
            "TableName": self.table,
            "Key": self.key(scope, document_id),
            "UpdateExpression": f"SET published = :g, {_NAMES}{remove}",
            "ConditionExpression": _CAN_WRITE,
            "ExpressionAttributeValues": {
                ":g": {"N": str(generation)},
                ":t": {"S": scope.tenant_id},
                ":n": {"S": scope.namespace_id},
                ":d": {"S": document_id},
            },
        }
        if names:
            request["ExpressionAttributeNames"] = names
        with _translate("publish"):
            try:
                self._client().update_item(**request)
            except ClientError as exc:
                if error_code(exc) == "ConditionalCheckFailedException":
                    return False
                raise
        return True

    def forget_written(self, scope: TenantScope, document_id: str, generation: int) -> None:
        """A discarded generation no longer has chunks to wait for (no item: nothing to forget)."""
        from botocore.exceptions import ClientError

        with _translate("fence write"):
            try:
                self._client().update_item(
                    TableName=self.table,
                    Key=self.key(scope, document_id),
                    UpdateExpression="REMOVE #w",
                    ConditionExpression="attribute_exists(pk)",
                    ExpressionAttributeNames={"#w": written_attr(generation)},
                )
            except ClientError as exc:
                if error_code(exc) != "ConditionalCheckFailedException":
                    raise

    def purge_tenant(self, tenant_id: str) -> int:
        """Delete every fence of the tenant (one Query per page, one DeleteItem per fence)."""
        pk = {"S": f"{PREFIX}{self.index}#{tenant_id}"}
        deleted = 0
        start: dict[str, Any] | None = None
        while True:
            kwargs: dict[str, Any] = {
                "TableName": self.table,
                "KeyConditionExpression": "pk = :pk",
                "ExpressionAttributeValues": {":pk": pk},
                "ProjectionExpression": "pk, sk",
                "ConsistentRead": True,
            }
            if start:
                kwargs["ExclusiveStartKey"] = start
            with _translate("tenant purge"):
                resp = self._client().query(**kwargs)
                for item in resp.get("Items", []):
                    self._client().delete_item(TableName=self.table, Key={"pk": item["pk"], "sk": item["sk"]})
                    deleted += 1
            start = resp.get("LastEvaluatedKey")
            if not start:
                return deleted
