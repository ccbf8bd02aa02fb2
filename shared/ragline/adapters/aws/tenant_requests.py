"""The tenant registry's items and requests as plain data: the item each model is stored as, and the
pure request builders (the kwargs of each boto3 call, unit-tested as dicts) that
:class:`~ragline.adapters.aws.tenants.DynamoDbTenantRegistry` sends.

The keys and the attribute codec are :mod:`ragline.adapters.aws.tenant_items` (the authorizer reads
them without the registry's models); a namespace's update and its metadata schema's extension are
:mod:`ragline.adapters.aws.namespace_requests`. :mod:`ragline.adapters.aws.tenants` describes the items
and why each request is conditioned as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from ragline.adapters.aws.batch import Key
from ragline.adapters.aws.namespace_requests import update_namespace_request
from ragline.adapters.aws.tenant_items import (
    api_key_key,
    encode,
    key_ref_key,
    namespace_key,
    tenant_key,
)
from ragline.domain.keys import timestamp
from ragline.domain.tenancy import ApiKeyRecord, Namespace, Tenant


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
