"""Production :class:`~ragline.ports.TenantRegistry`: tenants, namespaces and API keys in one table.

Items (``pk`` / ``sk``):

- tenant: ``TENANT#<tenant>`` / ``TENANT``
- namespace: ``TENANT#<tenant>`` / ``NS#<namespace>``: a tenant's namespaces are one Query
  (``begins_with(sk, "NS#")``), ascending by namespace id.
- API key record: ``KEY#<sha256 hex>`` / ``KEY``: the whole :class:`ApiKeyRecord`; the authorizer's
  lookup by hash is one consistent GetItem.
- API key reference: ``TENANT#<tenant>`` / ``KEY#<key_id>`` holding ``key_hash``: lists a tenant's keys
  (Query + BatchGetItem of the records) and resolves ``(tenant, key_id)`` for a revoke. It lives in
  the tenant's partition, so another tenant's key id is simply absent there. No GSI: every read is
  strongly consistent (a key is listable and revocable the moment it is created).

``put_api_key`` writes the record and the reference in one ``TransactWriteItems``, each conditioned on
``attribute_not_exists(pk)``: a taken hash or a key id taken within the tenant is a ``Conflict`` and
nothing is written. ``revoke_api_key`` is an ``UpdateItem`` on the record conditioned on its
``tenant_id`` and ``key_id``, so a key of another tenant can never be revoked; ``if_not_exists`` keeps
the first revocation time (idempotent). ``touch_api_key`` writes ``last_used_at`` only when the stored
one is older than :data:`~ragline.domain.keys.TOUCH_INTERVAL` (a condition, so a busy key costs one
write a minute).

The plaintext key never reaches this module: records carry only ``key_hash``, and a ``key_hash`` that
is not a SHA-256 hex digest is refused. Request builders are pure functions returning the kwargs of the
boto3 call (unit-tested as dicts); :class:`DynamoDbTenantRegistry` only sends them and translates errors.
The key-hash rule and the text form of times are the domain's (:mod:`ragline.domain.keys`,
:func:`ragline.domain.keys.timestamp`), shared with the SQLite registry.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from ragline import errors
from ragline.adapters.aws.batch import Key, backoff, delete_keys
from ragline.adapters.aws.errors import CONDITION_FAILED, call
from ragline.adapters.aws.identity_providers import IdentityProviderItems
from ragline.adapters.aws.namespace_requests import extend_schema_request, update_namespace_request
from ragline.adapters.aws.tenant_items import (
    api_key_key,
    encode,
    get_request,
    item_fields,
    key_ref_key,
    namespace_key,
    tenant_key,
    touch_request,
)
from ragline.adapters.boto import LazyClient, error_code
from ragline.domain.attributes import AttributeType, merge_schema
from ragline.domain.identity import IdentityProvider
from ragline.domain.keys import is_key_hash, require_key_hash, timestamp
from ragline.domain.tenancy import ApiKeyRecord, Namespace, Tenant

TRANSACTION_CANCELED = "TransactionCanceledException"
_RETRYABLE_CANCELLATIONS = frozenset(
    {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded"}
)
SCHEMA_TRIES = 8
"""Schema extensions checked again after a concurrent one; past this, the namespace is too contended."""
BATCH_GET_LIMIT = 100
BATCH_GET_ATTEMPTS = 5


# -- items (keys and the codec: tenant_items) ------------------------------------------------------
def model_to_item(model: BaseModel, key: Key) -> dict[str, Any]:
    """``key`` plus every field of ``model``; ``None`` fields are left out (absent, not NULL)."""
    fields = {name: encode(v) for name, v in model.model_dump().items() if v is not None}
    return {**fields, **key}


def tenant_to_item(tenant: Tenant) -> dict[str, Any]:
    """The tenant's item; limits that set nothing are left out (absent reads back as none set)."""
    item = model_to_item(tenant, tenant_key(tenant.tenant_id))
    if item.get("limits") == {"M": {}}:
        del item["limits"]
    return item


def namespace_to_item(namespace: Namespace) -> dict[str, Any]:
    return model_to_item(namespace, namespace_key(namespace.tenant_id, namespace.namespace_id))


def api_key_to_item(key: ApiKeyRecord) -> dict[str, Any]:
    return model_to_item(key, api_key_key(key.key_hash))


def key_ref_to_item(key: ApiKeyRecord) -> dict[str, Any]:
    return key_ref_key(key.tenant_id, key.key_id) | {
        "tenant_id": {"S": key.tenant_id},
        "key_id": {"S": key.key_id},
        "key_hash": {"S": key.key_hash},
    }


# -- request builders (pure) ----------------------------------------------------------------------
def put_new_request(table_name: str, item: dict[str, Any]) -> dict[str, Any]:
    """``PutItem`` that creates ``item`` only if nothing is stored under its key."""
    return {"TableName": table_name, "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}


def put_existing_request(table_name: str, item: dict[str, Any]) -> dict[str, Any]:
    """``PutItem`` that replaces ``item`` only if something is stored under its key."""
    return {"TableName": table_name, "Item": item, "ConditionExpression": "attribute_exists(pk)"}


def clear_default_request(table_name: str, tenant_id: str, namespace_id: str) -> dict[str, Any]:
    """``UpdateItem`` of the ``default`` attribute alone, only on a namespace that exists."""
    return {
        "TableName": table_name,
        "Key": namespace_key(tenant_id, namespace_id),
        "UpdateExpression": "SET #default = :false",
        "ConditionExpression": "attribute_exists(pk)",
        "ExpressionAttributeNames": {"#default": "default"},
        "ExpressionAttributeValues": {":false": {"BOOL": False}},
    }


def swap_request(table_name: str, namespace: Namespace, revision: int) -> dict[str, Any]:
    """:func:`update_namespace_request` (every field but the metadata schema) of ``namespace``, only
    while the stored one is at ``revision`` (a record without one counts as 0)."""
    request = update_namespace_request(table_name, namespace)
    matches = "#revision = :revision"
    if revision == 0:
        matches = f"(attribute_not_exists(#revision) OR {matches})"
    request["ConditionExpression"] = f"attribute_exists(#pk) AND {matches}"
    request["ExpressionAttributeNames"]["#revision"] = "revision"
    request["ExpressionAttributeValues"][":revision"] = {"N": str(revision)}
    return request


def delete_existing_request(table_name: str, key: Key) -> dict[str, Any]:
    return {"TableName": table_name, "Key": key, "ConditionExpression": "attribute_exists(pk)"}


def query_prefix_request(
    table_name: str, pk: str, sk_prefix: str, start_key: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One page of the items of partition ``pk`` whose sort key starts with ``sk_prefix``, ascending."""
    request: dict[str, Any] = {
        "TableName": table_name,
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
        "ExpressionAttributeValues": {":pk": {"S": pk}, ":prefix": {"S": sk_prefix}},
        "ScanIndexForward": True,
        "ConsistentRead": True,
    }
    if start_key:
        request["ExclusiveStartKey"] = start_key
    return request


def list_namespaces_request(
    table_name: str, tenant_id: str, start_key: dict[str, Any] | None = None
) -> dict[str, Any]:
    return query_prefix_request(table_name, f"TENANT#{tenant_id}", "NS#", start_key)


def list_key_refs_request(
    table_name: str, tenant_id: str, start_key: dict[str, Any] | None = None
) -> dict[str, Any]:
    return query_prefix_request(table_name, f"TENANT#{tenant_id}", "KEY#", start_key)


def put_api_key_request(table_name: str, key: ApiKeyRecord, token: str) -> dict[str, Any]:
    """``TransactWriteItems``: the record (by hash) and the tenant's reference (by key id), both new.

    ``token`` (``ClientRequestToken``) makes an SDK retry of a transaction that did commit succeed
    instead of failing as a conflict with itself.
    """
    return {
        "TransactItems": [
            {"Put": put_new_request(table_name, api_key_to_item(key))},
            {"Put": put_new_request(table_name, key_ref_to_item(key))},
        ],
        "ClientRequestToken": token,
    }


def batch_get_request(table_name: str, keys: Sequence[Key]) -> dict[str, Any]:
    return {"RequestItems": {table_name: {"Keys": list(keys), "ConsistentRead": True}}}


def revoke_request(
    table_name: str, tenant_id: str, key_id: str, key_hash: str, at: datetime
) -> dict[str, Any]:
    """Set ``revoked_at`` once (a second revoke keeps the first time), only on the tenant's own key."""
    return {
        "TableName": table_name,
        "Key": api_key_key(key_hash),
        "ConditionExpression": "attribute_exists(#pk) AND #tenant_id = :tenant_id AND #key_id = :key_id",
        "UpdateExpression": "SET #revoked_at = if_not_exists(#revoked_at, :at)",
        "ExpressionAttributeNames": {
            "#pk": "pk",
            "#tenant_id": "tenant_id",
            "#key_id": "key_id",
            "#revoked_at": "revoked_at",
        },
        "ExpressionAttributeValues": {
            ":tenant_id": {"S": tenant_id},
            ":key_id": {"S": key_id},
            ":at": {"S": timestamp(at)},
        },
        "ReturnValues": "ALL_NEW",
    }


def cancellation_codes(exc: BaseException) -> list[str]:
    """The per-item codes of a canceled transaction (``"None"`` for items that were fine)."""
    response = getattr(exc, "response", None)
    reasons = response.get("CancellationReasons") if isinstance(response, dict) else None
    return [str(r.get("Code") or "") for r in reasons or [] if isinstance(r, dict)]


# -- sending --------------------------------------------------------------------------------------
class _ConditionFailed(Exception):
    pass


class DynamoDbTenantRegistry:
    """``client`` is injectable (tests, stubs); ``None`` builds one on first use, never at import."""

    def __init__(self, table_name: str, *, client: Any = None, region: str | None = None) -> None:
        self.table_name = table_name
        self.region = region
        self._client = LazyClient("dynamodb", client=client, region=region)
        self._providers = IdentityProviderItems(table_name, self._send, _ConditionFailed)

    def _send(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        def domain_error(exc: Any) -> BaseException | None:
            if error_code(exc) == CONDITION_FAILED:
                return _ConditionFailed()
            if error_code(exc) == TRANSACTION_CANCELED:
                codes = cancellation_codes(exc)
                if "ConditionalCheckFailed" in codes:
                    return _ConditionFailed()
                if _RETRYABLE_CANCELLATIONS.intersection(codes):
                    return errors.Throttled(
                        f"DynamoDB canceled {action}", service="DynamoDB", action=action,
                        aws_code=TRANSACTION_CANCELED, reasons=codes,
                    )  # fmt: skip
            return None

        return call(self._client(), action, request, domain_error)

    def _get(self, key: Key) -> dict[str, Any] | None:
        item: dict[str, Any] | None = self._send("get_item", get_request(self.table_name, key)).get("Item")
        return item or None

    def _query_all(self, build: Callable[..., dict[str, Any]], *args: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        start_key: dict[str, Any] | None = None
        while True:
            page = self._send("query", build(self.table_name, *args, start_key))
            items.extend(page.get("Items", []))
            start_key = page.get("LastEvaluatedKey")
            if not start_key:
                return items

    def _batch_get(self, keys: list[Key]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        for i in range(0, len(keys), BATCH_GET_LIMIT):
            request = batch_get_request(self.table_name, keys[i : i + BATCH_GET_LIMIT])
            for attempt in range(BATCH_GET_ATTEMPTS):
                response = self._send("batch_get_item", request)
                items.extend(response.get("Responses", {}).get(self.table_name, []))
                unprocessed = response.get("UnprocessedKeys") or {}
                if not unprocessed:
                    break
                request = {"RequestItems": unprocessed}
                backoff(attempt)
            else:
                raise errors.Throttled(
                    "DynamoDB left keys unprocessed in batch_get_item",
                    service="DynamoDB", action="batch_get_item",
                )  # fmt: skip
        return items

    # -- tenants ---------------------------------------------------------------------------------
    def create_tenant(self, tenant: Tenant) -> Tenant:
        try:
            self._send("put_item", put_new_request(self.table_name, tenant_to_item(tenant)))
        except _ConditionFailed:
            raise errors.Conflict(
                f"tenant {tenant.tenant_id!r} already exists", tenant=tenant.tenant_id
            ) from None
        return tenant

    def get_tenant(self, tenant_id: str) -> Tenant:
        item = self._get(tenant_key(tenant_id))
        if item is None:
            raise errors.NotFound(f"tenant {tenant_id!r} does not exist", tenant=tenant_id)
        return Tenant.model_validate(item_fields(item))

    def update_tenant(self, tenant: Tenant) -> Tenant:
        try:
            self._send("put_item", put_existing_request(self.table_name, tenant_to_item(tenant)))
        except _ConditionFailed:
            raise errors.NotFound(
                f"tenant {tenant.tenant_id!r} does not exist", tenant=tenant.tenant_id
            ) from None
        return tenant

    # -- namespaces ------------------------------------------------------------------------------
    def create_namespace(self, namespace: Namespace) -> Namespace:
        try:
            self._send("put_item", put_new_request(self.table_name, namespace_to_item(namespace)))
        except _ConditionFailed:
            raise errors.Conflict(
                f"namespace {namespace.namespace_id!r} already exists", namespace=namespace.namespace_id
            ) from None
        return namespace

    def get_namespace(self, tenant_id: str, namespace_id: str) -> Namespace:
        item = self._get(namespace_key(tenant_id, namespace_id))
        if item is None:
            raise errors.NamespaceNotFound(
                f"namespace {namespace_id!r} does not exist", namespace=namespace_id
            )
        return Namespace.model_validate(item_fields(item))

    def list_namespaces(self, tenant_id: str) -> list[Namespace]:
        items = self._query_all(list_namespaces_request, tenant_id)
        return [Namespace.model_validate(item_fields(item)) for item in items]

    def update_namespace(self, namespace: Namespace) -> Namespace:
        try:
            response = self._send("update_item", update_namespace_request(self.table_name, namespace))
        except _ConditionFailed:
            raise errors.NamespaceNotFound(
                f"namespace {namespace.namespace_id!r} does not exist", namespace=namespace.namespace_id
            ) from None
        return Namespace.model_validate(item_fields(response["Attributes"]))

    def extend_metadata_schema(
        self, tenant_id: str, namespace_id: str, types: Mapping[str, AttributeType]
    ) -> dict[str, AttributeType]:
        """Read, check (the clash and the limit, with the stored types named), then one conditional
        write; a concurrent writer in between fails the condition and the check runs again on what
        it wrote — so of two documents typing one key differently, exactly one wins."""
        for _ in range(SCHEMA_TRIES):
            item = self._get(namespace_key(tenant_id, namespace_id))
            if item is None:
                raise errors.NamespaceNotFound(
                    f"namespace {namespace_id!r} does not exist", namespace=namespace_id
                )
            stored = item_fields(item).get("settings", {}).get("metadata_schema")
            merged = merge_schema(stored or {}, types)
            new = {k: v for k, v in types.items() if (stored or {}).get(k) != v}
            if not new:
                return merged
            request = extend_schema_request(self.table_name, tenant_id, namespace_id, new, stored=stored)
            try:
                response = self._send("update_item", request)
            except _ConditionFailed:
                continue  # another writer came first: check again against what it stored
            ns = Namespace.model_validate(item_fields(response["Attributes"]))
            return dict(ns.settings.metadata_schema)
        raise errors.Throttled(
            "the namespace's metadata schema kept changing; retry later",
            table=self.table_name, namespace=namespace_id,
        )  # fmt: skip

    def swap_namespace(self, namespace: Namespace, *, revision: int) -> Namespace | None:
        changed = namespace.model_copy(update={"revision": revision + 1})
        try:
            response = self._send("update_item", swap_request(self.table_name, changed, revision))
        except _ConditionFailed:
            self.get_namespace(namespace.tenant_id, namespace.namespace_id)  # NamespaceNotFound if gone
            return None
        return Namespace.model_validate(item_fields(response["Attributes"]))

    def clear_default_namespace(self, tenant_id: str, namespace_id: str) -> None:
        with contextlib.suppress(_ConditionFailed):  # gone meanwhile: nothing to clear
            self._send("update_item", clear_default_request(self.table_name, tenant_id, namespace_id))

    def delete_namespace(self, tenant_id: str, namespace_id: str) -> None:
        key = namespace_key(tenant_id, namespace_id)
        try:
            self._send("delete_item", delete_existing_request(self.table_name, key))
        except _ConditionFailed:
            raise errors.NamespaceNotFound(
                f"namespace {namespace_id!r} does not exist", namespace=namespace_id
            ) from None

    def purge_tenant(self, tenant_id: str) -> None:
        """Every namespace, key record and key reference of the tenant (its own item stays)."""
        namespaces = self._query_all(list_namespaces_request, tenant_id)
        refs = self._query_all(list_key_refs_request, tenant_id)
        records = [api_key_key(ref["key_hash"]["S"]) for ref in refs]
        # Records before references: a crash in between leaves references a re-run still finds.
        delete_keys(self._send, self.table_name, records)
        delete_keys(self._send, self.table_name, [{"pk": i["pk"], "sk": i["sk"]} for i in refs + namespaces])
        self._providers.delete(tenant_id)

    # -- API keys --------------------------------------------------------------------------------
    def put_api_key(self, key: ApiKeyRecord) -> ApiKeyRecord:
        require_key_hash(key.key_hash, key.key_id)
        request = put_api_key_request(self.table_name, key, token=uuid.uuid4().hex)
        try:
            self._send("transact_write_items", request)
        except _ConditionFailed:  # the hash, or the key id within the tenant
            raise errors.Conflict(f"API key {key.key_id!r} already exists", key_id=key.key_id) from None
        return key

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        if not is_key_hash(key_hash):  # nothing else is ever stored: skip the read
            return None
        item = self._get(api_key_key(key_hash))
        return ApiKeyRecord.model_validate(item_fields(item)) if item else None

    def list_api_keys(self, tenant_id: str) -> list[ApiKeyRecord]:
        refs = self._query_all(list_key_refs_request, tenant_id)
        items = self._batch_get([api_key_key(ref["key_hash"]["S"]) for ref in refs])
        records = (ApiKeyRecord.model_validate(item_fields(item)) for item in items)
        return sorted((r for r in records if r.tenant_id == tenant_id), key=lambda r: r.key_id)

    def revoke_api_key(self, tenant_id: str, key_id: str) -> ApiKeyRecord:
        ref = self._get(key_ref_key(tenant_id, key_id))
        if ref is not None:
            request = revoke_request(
                self.table_name, tenant_id, key_id, ref["key_hash"]["S"], datetime.now(UTC)
            )
            try:
                response = self._send("update_item", request)
            except _ConditionFailed:
                pass
            else:
                return ApiKeyRecord.model_validate(item_fields(response["Attributes"]))
        raise errors.NotFound(f"API key {key_id!r} does not exist", key_id=key_id)

    def touch_api_key(self, key_hash: str) -> None:
        if not is_key_hash(key_hash):
            return
        # Only the request's own condition is swallowed: touched less than TOUCH_INTERVAL ago, or no
        # such key. Throttling and outages are raised like everywhere else.
        with contextlib.suppress(_ConditionFailed):
            self._send("update_item", touch_request(self.table_name, key_hash, datetime.now(UTC)))

    # -- identity providers (adapters/aws/identity_providers.py) ---------------------------------
    def put_identity_provider(self, tenant_id: str, provider: IdentityProvider) -> None:
        self._providers.put(tenant_id, provider)

    def get_identity_provider(self, tenant_id: str) -> IdentityProvider | None:
        return self._providers.get(tenant_id)

    def delete_identity_provider(self, tenant_id: str) -> bool:
        return self._providers.delete(tenant_id)

    def find_identity_provider(self, issuer: str) -> tuple[str, IdentityProvider] | None:
        return self._providers.find(issuer)
