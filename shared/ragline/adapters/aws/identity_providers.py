"""The tenants table's identity provider items (for the DynamoDB tenant registry).

Two items per provider, written together in one ``TransactWriteItems``:

- ``TENANT#<tenant>`` / ``IDP``: the tenant's provider (read and changed by its admin);
- ``ISSUER#<sha256 of issuer>`` / ``ISSUER``: the issuer index the authorizer reads with one GetItem.

The index item is conditioned on belonging to no tenant or to this one (an issuer is one tenant's);
the provider item on still holding the issuer read before the change (optimistic: two concurrent
changes cannot leave an index item of an issuer the tenant no longer has, which would let that
issuer's tokens in). A lost race is a ``Conflict``; the caller may retry.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragline import errors
from ragline.adapters.aws.tenant_items import (
    get_request,
    identity_provider_fields,
    identity_provider_key,
    issuer_key,
    provider_of_issuer_item,
)
from ragline.domain.identity import IdentityProvider

Send = Callable[[str, dict[str, Any]], dict[str, Any]]


def _unchanged(issuer: str | None) -> dict[str, Any]:
    """The provider item still holds ``issuer`` (None: there is none)."""
    if issuer is None:
        return {"ConditionExpression": "attribute_not_exists(pk)"}
    return {
        "ConditionExpression": "issuer = :old",
        "ExpressionAttributeValues": {":old": {"S": issuer}},
    }


def _this_tenants(tenant_id: str) -> dict[str, Any]:
    """The index item is absent or this tenant's."""
    return {
        "ConditionExpression": "attribute_not_exists(pk) OR tenant_id = :tenant",
        "ExpressionAttributeValues": {":tenant": {"S": tenant_id}},
    }


def put_provider_request(
    table: str, tenant_id: str, provider: IdentityProvider, previous: str | None
) -> dict[str, Any]:
    fields = identity_provider_fields(tenant_id, provider)
    mine, unchanged = _this_tenants(tenant_id), _unchanged(previous)
    items: list[dict[str, Any]] = [
        {"Put": {"TableName": table, "Item": identity_provider_key(tenant_id) | fields} | unchanged},
        {"Put": {"TableName": table, "Item": issuer_key(provider.issuer) | fields} | mine},
    ]
    if previous is not None and previous != provider.issuer:
        items.append({"Delete": {"TableName": table, "Key": issuer_key(previous)} | mine})
    return {"TransactItems": items}


def delete_provider_request(table: str, tenant_id: str, previous: str) -> dict[str, Any]:
    return {
        "TransactItems": [
            {"Delete": {"TableName": table, "Key": identity_provider_key(tenant_id), **_unchanged(previous)}},
            {"Delete": {"TableName": table, "Key": issuer_key(previous), **_this_tenants(tenant_id)}},
        ]
    }


class IdentityProviderItems:
    """Reads and writes through the registry's ``send`` (its error translation); ``ConditionFailed``
    is the exception that ``send`` raises for a failed condition."""

    def __init__(self, table: str, send: Send, condition_failed: type[Exception]) -> None:
        self._table = table
        self._send = send
        self._failed = condition_failed

    def _item(self, key: dict[str, Any]) -> dict[str, Any] | None:
        item: dict[str, Any] | None = self._send("get_item", get_request(self._table, key)).get("Item")
        return item or None

    def get(self, tenant_id: str) -> IdentityProvider | None:
        item = self._item(identity_provider_key(tenant_id))
        return IdentityProvider.from_json(item["body"]["S"]) if item else None

    def put(self, tenant_id: str, provider: IdentityProvider) -> None:
        current = self.get(tenant_id)
        request = put_provider_request(self._table, tenant_id, provider, current.issuer if current else None)
        try:
            self._send("transact_write_items", request)
        except self._failed:
            raise errors.Conflict(
                "another tenant already uses this issuer, or the provider changed meanwhile",
                issuer=provider.issuer,
            ) from None

    def delete(self, tenant_id: str) -> bool:
        current = self.get(tenant_id)
        if current is None:
            return False
        try:
            request = delete_provider_request(self._table, tenant_id, current.issuer)
            self._send("transact_write_items", request)
        except self._failed:
            raise errors.Conflict("the identity provider changed meanwhile; retry") from None
        return True

    def find(self, issuer: str) -> tuple[str, IdentityProvider] | None:
        return provider_of_issuer_item(issuer, self._item(issuer_key(issuer)))
