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
boto3 call (unit-tested as dicts), in :mod:`ragline.adapters.aws.tenant_requests` (re-exported here);
:class:`DynamoDbTenantRegistry` sends them through :mod:`ragline.adapters.aws.tenant_table` (errors,
pages, batch retries) and says what each failed condition means.
The key-hash rule and the text form of times are the domain's (:mod:`ragline.domain.keys`,
:func:`ragline.domain.keys.timestamp`), shared with the SQLite registry.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ragline import errors
from ragline.adapters.aws.batch import backoff, delete_keys
from ragline.adapters.aws.identity_providers import IdentityProviderItems
from ragline.adapters.aws.namespace_requests import extend_schema_request, update_namespace_request
from ragline.adapters.aws.tenant_items import (
    api_key_key,
    item_fields,
    key_ref_key,
    namespace_key,
    tenant_key,
    touch_request,
)
from ragline.adapters.aws.tenant_requests import (
    api_key_to_item,
    batch_get_request,
    clear_default_request,
    delete_existing_request,
    key_ref_to_item,
    list_key_refs_request,
    list_namespaces_request,
    model_to_item,
    namespace_to_item,
    put_api_key_request,
    put_existing_request,
    put_new_request,
    query_prefix_request,
    revoke_request,
    swap_request,
    tenant_to_item,
)
from ragline.adapters.aws.tenant_table import (
    BATCH_GET_ATTEMPTS,
    BATCH_GET_LIMIT,
    TRANSACTION_CANCELED,
    ConditionFailed,
    TenantTable,
    cancellation_codes,
)
from ragline.adapters.boto import LazyClient
from ragline.domain.attributes import AttributeType, merge_schema
from ragline.domain.identity import IdentityProvider
from ragline.domain.keys import is_key_hash, require_key_hash, timestamp
from ragline.domain.tenancy import ApiKeyRecord, Namespace, Tenant

__all__ = [  # the registry and, for its tests and stubs, the items and requests it sends
    "BATCH_GET_ATTEMPTS",
    "BATCH_GET_LIMIT",
    "SCHEMA_TRIES",
    "TRANSACTION_CANCELED",
    "DynamoDbTenantRegistry",
    "api_key_to_item",
    "batch_get_request",
    "cancellation_codes",
    "clear_default_request",
    "delete_existing_request",
    "key_ref_to_item",
    "list_key_refs_request",
    "list_namespaces_request",
    "model_to_item",
    "namespace_to_item",
    "put_api_key_request",
    "put_existing_request",
    "put_new_request",
    "query_prefix_request",
    "revoke_request",
    "swap_request",
    "tenant_to_item",
    "timestamp",
    "update_namespace_request",
]

SCHEMA_TRIES = 8
"""Schema extensions checked again after a concurrent one; past this, the namespace is too contended."""


def _pause(attempt: int) -> None:
    """:func:`~ragline.adapters.aws.batch.backoff`, looked up here at each pause (tests replace it)."""
    backoff(attempt)


# -- sending (tenant_table) -----------------------------------------------------------------------
class DynamoDbTenantRegistry:
    """``client`` is injectable (tests, stubs); ``None`` builds one on first use, never at import."""

    def __init__(self, table_name: str, *, client: Any = None, region: str | None = None) -> None:
        self.table_name = table_name
        self.region = region
        self._client = LazyClient("dynamodb", client=client, region=region)
        self._table = TenantTable(table_name, self._client, pause=_pause)
        self._providers = IdentityProviderItems(table_name, self._table.send, ConditionFailed)

    # -- tenants ---------------------------------------------------------------------------------
    def create_tenant(self, tenant: Tenant) -> Tenant:
        try:
            self._table.send("put_item", put_new_request(self.table_name, tenant_to_item(tenant)))
        except ConditionFailed:
            raise errors.Conflict(
                f"tenant {tenant.tenant_id!r} already exists", tenant=tenant.tenant_id
            ) from None
        return tenant

    def get_tenant(self, tenant_id: str) -> Tenant:
        item = self._table.get(tenant_key(tenant_id))
        if item is None:
            raise errors.NotFound(f"tenant {tenant_id!r} does not exist", tenant=tenant_id)
        return Tenant.model_validate(item_fields(item))

    def update_tenant(self, tenant: Tenant) -> Tenant:
        try:
            self._table.send("put_item", put_existing_request(self.table_name, tenant_to_item(tenant)))
        except ConditionFailed:
            raise errors.NotFound(
                f"tenant {tenant.tenant_id!r} does not exist", tenant=tenant.tenant_id
            ) from None
        return tenant

    # -- namespaces ------------------------------------------------------------------------------
    def create_namespace(self, namespace: Namespace) -> Namespace:
        try:
            self._table.send("put_item", put_new_request(self.table_name, namespace_to_item(namespace)))
        except ConditionFailed:
            raise errors.Conflict(
                f"namespace {namespace.namespace_id!r} already exists", namespace=namespace.namespace_id
            ) from None
        return namespace

    def get_namespace(self, tenant_id: str, namespace_id: str) -> Namespace:
        item = self._table.get(namespace_key(tenant_id, namespace_id))
        if item is None:
            raise errors.NamespaceNotFound(
                f"namespace {namespace_id!r} does not exist", namespace=namespace_id
            )
        return Namespace.model_validate(item_fields(item))

    def list_namespaces(self, tenant_id: str) -> list[Namespace]:
        items = self._table.query_all(list_namespaces_request, tenant_id)
        return [Namespace.model_validate(item_fields(item)) for item in items]

    def update_namespace(self, namespace: Namespace) -> Namespace:
        try:
            response = self._table.send("update_item", update_namespace_request(self.table_name, namespace))
        except ConditionFailed:
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
            item = self._table.get(namespace_key(tenant_id, namespace_id))
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
                response = self._table.send("update_item", request)
            except ConditionFailed:
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
            response = self._table.send("update_item", swap_request(self.table_name, changed, revision))
        except ConditionFailed:
            self.get_namespace(namespace.tenant_id, namespace.namespace_id)  # NamespaceNotFound if gone
            return None
        return Namespace.model_validate(item_fields(response["Attributes"]))

    def clear_default_namespace(self, tenant_id: str, namespace_id: str) -> None:
        with contextlib.suppress(ConditionFailed):  # gone meanwhile: nothing to clear
            self._table.send("update_item", clear_default_request(self.table_name, tenant_id, namespace_id))

    def delete_namespace(self, tenant_id: str, namespace_id: str) -> None:
        key = namespace_key(tenant_id, namespace_id)
        try:
            self._table.send("delete_item", delete_existing_request(self.table_name, key))
        except ConditionFailed:
            raise errors.NamespaceNotFound(
                f"namespace {namespace_id!r} does not exist", namespace=namespace_id
            ) from None

    def purge_tenant(self, tenant_id: str) -> None:
        """Every namespace, key record and key reference of the tenant (its own item stays)."""
        namespaces = self._table.query_all(list_namespaces_request, tenant_id)
        refs = self._table.query_all(list_key_refs_request, tenant_id)
        records = [api_key_key(ref["key_hash"]["S"]) for ref in refs]
        # Records before references: a crash in between leaves references a re-run still finds.
        delete_keys(self._table.send, self.table_name, records)
        delete_keys(
            self._table.send, self.table_name, [{"pk": i["pk"], "sk": i["sk"]} for i in refs + namespaces]
        )
        self._providers.delete(tenant_id)

    # -- API keys --------------------------------------------------------------------------------
    def put_api_key(self, key: ApiKeyRecord) -> ApiKeyRecord:
        require_key_hash(key.key_hash, key.key_id)
        request = put_api_key_request(self.table_name, key, token=uuid.uuid4().hex)
        try:
            self._table.send("transact_write_items", request)
        except ConditionFailed:  # the hash, or the key id within the tenant
            raise errors.Conflict(f"API key {key.key_id!r} already exists", key_id=key.key_id) from None
        return key

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        if not is_key_hash(key_hash):  # nothing else is ever stored: skip the read
            return None
        item = self._table.get(api_key_key(key_hash))
        return ApiKeyRecord.model_validate(item_fields(item)) if item else None

    def list_api_keys(self, tenant_id: str) -> list[ApiKeyRecord]:
        refs = self._table.query_all(list_key_refs_request, tenant_id)
        items = self._table.batch_get([api_key_key(ref["key_hash"]["S"]) for ref in refs])
        records = (ApiKeyRecord.model_validate(item_fields(item)) for item in items)
        return sorted((r for r in records if r.tenant_id == tenant_id), key=lambda r: r.key_id)

    def revoke_api_key(self, tenant_id: str, key_id: str) -> ApiKeyRecord:
        ref = self._table.get(key_ref_key(tenant_id, key_id))
        if ref is not None:
            request = revoke_request(
                self.table_name, tenant_id, key_id, ref["key_hash"]["S"], datetime.now(UTC)
            )
            try:
                response = self._table.send("update_item", request)
            except ConditionFailed:
                pass
            else:
                return ApiKeyRecord.model_validate(item_fields(response["Attributes"]))
        raise errors.NotFound(f"API key {key_id!r} does not exist", key_id=key_id)

    def touch_api_key(self, key_hash: str) -> None:
        if not is_key_hash(key_hash):
            return
        # Only the request's own condition is swallowed: touched less than TOUCH_INTERVAL ago, or no
        # such key. Throttling and outages are raised like everywhere else.
        with contextlib.suppress(ConditionFailed):
            self._table.send("update_item", touch_request(self.table_name, key_hash, datetime.now(UTC)))

    # -- identity providers (adapters/aws/identity_providers.py) ---------------------------------
    def put_identity_provider(self, tenant_id: str, provider: IdentityProvider) -> None:
        self._providers.put(tenant_id, provider)

    def get_identity_provider(self, tenant_id: str) -> IdentityProvider | None:
        return self._providers.get(tenant_id)

    def delete_identity_provider(self, tenant_id: str) -> bool:
        return self._providers.delete(tenant_id)

    def find_identity_provider(self, issuer: str) -> tuple[str, IdentityProvider] | None:
        return self._providers.find(issuer)
