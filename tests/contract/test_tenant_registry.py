"""The TenantRegistry contract, run against SQLite (a temp file) and DynamoDB (moto server).

The DynamoDB table is created from ``TenantsTable`` in ``template.yaml``, fresh for every test.
Below the suites: what each adapter adds beyond the contract (touch throttling, item layout).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.aws.tenants import DynamoDbTenantRegistry
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.domain.tenancy import Tenant
from ragline.ports import TenantRegistry
from ragline.services.namespaces import new_namespace
from tests.contract.tenant_registry_contract import TenantRegistryContract, api_key

pytestmark = pytest.mark.contract


class TestSqliteTenantRegistry(TenantRegistryContract):
    @pytest.fixture
    def registry(self, tmp_path: Path) -> SqliteTenantRegistry:
        return SqliteTenantRegistry(tmp_path / "tenants.sqlite")


@pytest.fixture
def tenants_table(dynamodb_client: Any) -> Iterator[str]:
    from tests.support.cfn_tables import create_table_from_template

    table = create_table_from_template(dynamodb_client, "TenantsTable", f"tenants-{uuid.uuid4().hex}")
    yield table
    dynamodb_client.delete_table(TableName=table)


class TestDynamoDbTenantRegistry(TenantRegistryContract):
    @pytest.fixture
    def registry(self, dynamodb_client: Any, tenants_table: str) -> DynamoDbTenantRegistry:
        return DynamoDbTenantRegistry(tenants_table, client=dynamodb_client)


@pytest.fixture(params=["sqlite", "dynamodb"])
def any_registry(request: pytest.FixtureRequest, tmp_path: Path) -> TenantRegistry:
    if request.param == "sqlite":
        return SqliteTenantRegistry(tmp_path / "tenants.sqlite")
    client = request.getfixturevalue("dynamodb_client")
    return DynamoDbTenantRegistry(request.getfixturevalue("tenants_table"), client=client)


def test_touch_writes_at_most_once_a_minute(any_registry: TenantRegistry) -> None:
    recent = datetime.now(UTC) - timedelta(seconds=20)
    key = api_key("acme", "key_1", last_used_at=recent)
    any_registry.put_api_key(key)
    any_registry.touch_api_key(key.key_hash)
    assert any_registry.find_api_key(key.key_hash) == key  # not rewritten within the interval


def test_sqlite_registries_on_one_file_see_each_others_writes(tmp_path: Path) -> None:
    """Given the CLI and a server on one file, a key revoked by one is revoked for the other."""
    a = SqliteTenantRegistry(tmp_path / "t.sqlite")
    b = SqliteTenantRegistry(tmp_path / "t.sqlite")
    key = api_key("acme", "key_1")
    a.put_api_key(key)
    b.revoke_api_key("acme", "key_1")
    found = a.find_api_key(key.key_hash)
    assert found is not None and not found.active


def test_sqlite_file_with_only_namespaces_gains_the_new_tables(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the schema before tenants and keys existed
        db.execute(
            "CREATE TABLE namespaces (tenant_id TEXT NOT NULL, namespace_id TEXT NOT NULL,"
            " body TEXT NOT NULL, PRIMARY KEY (tenant_id, namespace_id))"
        )
        db.execute(
            "INSERT INTO namespaces VALUES (?,?,?)",
            ("local", "docs", new_namespace("local", "docs").model_dump_json()),
        )
    db.close()
    registry = SqliteTenantRegistry(path)
    assert [n.namespace_id for n in registry.list_namespaces("local")] == ["docs"]
    registry.create_tenant(Tenant(tenant_id="local"))
    registry.put_api_key(api_key("local", "key_1"))
    assert [k.key_id for k in registry.list_api_keys("local")] == ["key_1"]


def test_dynamodb_client_is_built_on_first_use_from_the_environment(
    moto_aws_env: dict[str, str], tenants_table: str
) -> None:
    registry = DynamoDbTenantRegistry(tenants_table)  # no client, no I/O yet
    registry.create_tenant(Tenant(tenant_id="acme"))
    assert registry.get_tenant("acme").tenant_id == "acme"


def test_dynamodb_item_layout_is_the_single_table_design(dynamodb_client: Any, tenants_table: str) -> None:
    registry = DynamoDbTenantRegistry(tenants_table, client=dynamodb_client)
    registry.create_tenant(Tenant(tenant_id="acme"))
    registry.create_namespace(new_namespace("acme", "docs"))
    key = api_key("acme", "key_1", "rl_live_secret")
    registry.put_api_key(key)
    items = dynamodb_client.scan(TableName=tenants_table)["Items"]
    keys = sorted((i["pk"]["S"], i["sk"]["S"]) for i in items)
    assert keys == sorted(
        [
            ("TENANT#acme", "TENANT"),
            ("TENANT#acme", "NS#docs"),
            ("TENANT#acme", "KEY#key_1"),
            (f"KEY#{key.key_hash}", "KEY"),
        ]
    )
    assert "rl_live_secret" not in repr(items)  # only the hash is stored, anywhere


def test_dynamodb_many_keys_are_listed_across_query_and_batch_get_pages(
    dynamodb_client: Any, tenants_table: str
) -> None:
    registry = DynamoDbTenantRegistry(tenants_table, client=dynamodb_client)
    for i in range(105):  # > 100: two BatchGetItem calls
        registry.put_api_key(api_key("acme", f"key_{i:03d}"))
    assert [k.key_id for k in registry.list_api_keys("acme")] == [f"key_{i:03d}" for i in range(105)]


def test_namespaces_stored_before_the_metadata_schema_read_and_extend(
    any_registry: TenantRegistry, dynamodb_client: Any, request: pytest.FixtureRequest
) -> None:
    """An item (a body) written before ``metadata_schema`` existed: it reads as no schema, a PATCH
    of its settings still works, and its first typed key creates the map."""
    old = new_namespace("acme", "docs")
    if isinstance(any_registry, DynamoDbTenantRegistry):
        from ragline.adapters.aws.tenants import namespace_to_item

        item = namespace_to_item(old)
        del item["settings"]["M"]["metadata_schema"]
        dynamodb_client.put_item(TableName=any_registry.table_name, Item=item)
    else:
        body = old.model_dump(mode="json")
        del body["settings"]["metadata_schema"]
        any_registry.create_namespace(old)
        import sqlite3

        assert isinstance(any_registry, SqliteTenantRegistry)
        with sqlite3.connect(any_registry.path) as db:
            db.execute("UPDATE namespaces SET body=?", (json.dumps(body),))
        db.close()
    assert any_registry.get_namespace("acme", "docs").settings.metadata_schema == {}
    any_registry.update_namespace(old.model_copy(update={"description": "d"}))
    assert any_registry.extend_metadata_schema("acme", "docs", {"year": "number"}) == {"year": "number"}
    got = any_registry.get_namespace("acme", "docs")
    assert got.settings.metadata_schema == {"year": "number"} and got.description == "d"
