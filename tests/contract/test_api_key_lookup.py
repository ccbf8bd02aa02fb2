"""The ApiKeyLookup contract (the authorizer's reads), against SQLite and DynamoDB (moto server).

Each lookup reads what its backend's TenantRegistry wrote: the keys and tenants below are stored
through the registry and read back through the lookup, so the two cannot drift apart.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.aws.api_keys import DynamoDbApiKeyLookup
from ragline.adapters.aws.tenants import DynamoDbTenantRegistry
from ragline.adapters.embedded.api_keys import SqliteApiKeyLookup
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.domain.keys import KeyGrant
from ragline.domain.tenancy import Tenant
from ragline.ports import ApiKeyLookup, TenantRegistry
from tests.contract.tenant_registry_contract import api_key, key_hash

pytestmark = pytest.mark.contract


@dataclass
class Store:
    registry: TenantRegistry
    lookup: ApiKeyLookup


@pytest.fixture
def tenants_table(dynamodb_client: Any) -> Iterator[str]:
    from tests.support.cfn_tables import create_table_from_template

    table = create_table_from_template(dynamodb_client, "TenantsTable", f"tenants-{uuid.uuid4().hex}")
    yield table
    dynamodb_client.delete_table(TableName=table)


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "sqlite":
        path = tmp_path / "tenants.sqlite"
        return Store(SqliteTenantRegistry(path), SqliteApiKeyLookup(path))
    client = request.getfixturevalue("dynamodb_client")
    table = request.getfixturevalue("tenants_table")
    return Store(DynamoDbTenantRegistry(table, client=client), DynamoDbApiKeyLookup(table, client=client))


def test_a_stored_key_is_found_with_what_it_grants(store: Store) -> None:
    record = api_key("acme", "key_1", scopes=("chat", "admin"), namespaces=("docs", "hr"))
    store.registry.put_api_key(record)
    assert store.lookup.find_grant(record.key_hash) == KeyGrant(
        tenant_id="acme",
        key_id="key_1",
        scopes=frozenset({"chat", "admin"}),
        namespaces=frozenset({"docs", "hr"}),
        revoked=False,
    )


def test_an_unrestricted_key_has_no_allow_list(store: Store) -> None:
    record = api_key("acme", "key_1")
    store.registry.put_api_key(record)
    grant = store.lookup.find_grant(record.key_hash)
    assert grant is not None and grant.namespaces == frozenset() and grant.scopes == frozenset(record.scopes)


def test_a_revoked_key_is_found_revoked(store: Store) -> None:
    record = api_key("acme", "key_1")
    store.registry.put_api_key(record)
    store.registry.revoke_api_key("acme", "key_1")
    grant = store.lookup.find_grant(record.key_hash)
    assert grant is not None and grant.revoked


def test_unknown_keys_and_non_digests_are_not_found(store: Store) -> None:
    store.registry.put_api_key(api_key("acme", "key_1", secret="rl_real"))
    assert store.lookup.find_grant(key_hash("rl_other")) is None
    assert store.lookup.find_grant("rl_real") is None  # a plaintext key is never stored, never read
    assert store.lookup.find_grant("") is None


def test_a_tenants_status_is_read_and_a_missing_tenant_has_none(store: Store) -> None:
    store.registry.create_tenant(Tenant(tenant_id="acme"))
    store.registry.create_tenant(Tenant(tenant_id="globex", status="suspended"))
    assert store.lookup.tenant_status("acme") == "active"
    assert store.lookup.tenant_status("globex") == "suspended"
    assert store.lookup.tenant_status("initech") is None


def test_touch_records_the_last_use_at_most_once_a_minute(store: Store) -> None:
    old, recent = api_key("acme", "key_1"), api_key("acme", "key_2")
    store.registry.put_api_key(
        old.model_copy(update={"last_used_at": datetime.now(UTC) - timedelta(hours=1)})
    )
    store.registry.put_api_key(recent.model_copy(update={"last_used_at": datetime.now(UTC)}))
    before = datetime.now(UTC)
    store.lookup.touch_api_key(old.key_hash)
    store.lookup.touch_api_key(recent.key_hash)
    store.lookup.touch_api_key(key_hash("rl_nobody"))  # no such key: a silent no-op
    store.lookup.touch_api_key("not-a-digest")
    touched = store.registry.find_api_key(old.key_hash)
    assert touched is not None and touched.last_used_at is not None and touched.last_used_at >= before
    kept = store.registry.find_api_key(recent.key_hash)
    assert kept is not None and kept.last_used_at is not None and kept.last_used_at < before
    assert store.registry.find_api_key(key_hash("rl_nobody")) is None
