"""Production :class:`~ragline.ports.ApiKeyLookup`: the authorizer's reads of the tenants table.

The items are the ones :class:`~ragline.adapters.aws.tenants.DynamoDbTenantRegistry` writes (the same
keys, codec and touch request, from :mod:`ragline.adapters.aws.tenant_items`), read without its
models: one consistent ``GetItem`` of the key record, one of the tenant, and the conditional touch.
Nothing here imports pydantic, and boto3 is imported on the first call (:class:`LazyClient`).
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import Any

from ragline.adapters.aws.batch import Key
from ragline.adapters.aws.errors import CONDITION_FAILED, call
from ragline.adapters.aws.tenant_items import (
    api_key_key,
    decode,
    get_request,
    issuer_key,
    provider_of_issuer_item,
    tenant_key,
    touch_request,
)
from ragline.adapters.boto import LazyClient, error_code
from ragline.domain.identity import IdentityProvider
from ragline.domain.keys import KeyGrant, is_key_hash


class _ConditionFailed(Exception):
    pass


def _condition_failed(exc: Any) -> BaseException | None:
    return _ConditionFailed() if error_code(exc) == CONDITION_FAILED else None


class DynamoDbApiKeyLookup:
    """``client`` is injectable (tests, stubs); ``None`` builds one on first use, never at import."""

    def __init__(self, table_name: str, *, client: Any = None, region: str | None = None) -> None:
        self.table_name = table_name
        self._client = LazyClient("dynamodb", client=client, region=region)

    def _get(self, key: Key) -> dict[str, Any] | None:
        response = call(self._client(), "get_item", get_request(self.table_name, key), _condition_failed)
        item: dict[str, Any] | None = response.get("Item")
        return item or None

    def find_grant(self, key_hash: str) -> KeyGrant | None:
        if not is_key_hash(key_hash):  # nothing else is ever stored: skip the read
            return None
        item = self._get(api_key_key(key_hash))
        if item is None:
            return None
        field = {name: decode(value) for name, value in item.items()}
        return KeyGrant(
            tenant_id=str(field["tenant_id"]),
            key_id=str(field["key_id"]),
            scopes=frozenset(field.get("scopes") or ()),
            namespaces=frozenset(field.get("namespaces") or ()),
            may_assert_user=field.get("may_assert_user") is True,
            requires_user=field.get("requires_user") is True,
            revoked=field.get("revoked_at") is not None,
        )

    def tenant_status(self, tenant_id: str) -> str | None:
        item = self._get(tenant_key(tenant_id))
        if item is None:
            return None
        return str(decode(item["status"])) if "status" in item else "active"  # the model's default

    def touch_api_key(self, key_hash: str) -> None:
        if not is_key_hash(key_hash):
            return
        request = touch_request(self.table_name, key_hash, datetime.now(UTC))
        with contextlib.suppress(_ConditionFailed):  # touched within the interval, or no such key
            call(self._client(), "update_item", request, _condition_failed)

    def find_identity_provider(self, issuer: str) -> tuple[str, IdentityProvider] | None:
        return provider_of_issuer_item(issuer, self._get(issuer_key(issuer)))
