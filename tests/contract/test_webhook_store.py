"""The WebhookStore and OnceMarks contracts on SQLite (a temp file) and DynamoDB (moto server, tables
created from ``TenantsTable`` and ``UsageTable`` in ``template.yaml``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.aws.webhooks import DynamoDbOnceMarks, DynamoDbWebhookStore
from ragline.adapters.embedded.webhooks import SqliteOnceMarks, SqliteWebhookStore
from tests.contract.webhook_store_contract import OnceMarksContract, WebhookCapContract, WebhookStoreContract

pytestmark = pytest.mark.contract


def _table(client: Any, logical_id: str) -> str:
    from tests.support.cfn_tables import create_table_from_template

    return create_table_from_template(client, logical_id, f"{logical_id.lower()}-{uuid.uuid4().hex}")


@pytest.fixture
def tenants_table(dynamodb_client: Any) -> Iterator[str]:
    table = _table(dynamodb_client, "TenantsTable")
    yield table
    dynamodb_client.delete_table(TableName=table)


@pytest.fixture
def usage_table(dynamodb_client: Any) -> Iterator[str]:
    table = _table(dynamodb_client, "UsageTable")
    yield table
    dynamodb_client.delete_table(TableName=table)


class TestSqliteWebhookStore(WebhookStoreContract, WebhookCapContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> SqliteWebhookStore:
        return SqliteWebhookStore(tmp_path / "events.sqlite")


class TestDynamoDbWebhookStore(WebhookStoreContract, WebhookCapContract):
    @pytest.fixture
    def store(self, dynamodb_client: Any, tenants_table: str) -> DynamoDbWebhookStore:
        return DynamoDbWebhookStore(tenants_table, client=dynamodb_client)


class TestSqliteOnceMarks(OnceMarksContract):
    @pytest.fixture
    def marks(self, tmp_path: Path) -> SqliteOnceMarks:
        return SqliteOnceMarks(tmp_path / "events.sqlite")


class TestDynamoDbOnceMarks(OnceMarksContract):
    @pytest.fixture
    def marks(self, dynamodb_client: Any, usage_table: str) -> DynamoDbOnceMarks:
        return DynamoDbOnceMarks(usage_table, client=dynamodb_client)


def test_an_expired_mark_is_absent_and_can_be_marked_again(tmp_path: Path) -> None:
    marks = SqliteOnceMarks(tmp_path / "events.sqlite")
    assert marks.mark("k", ttl_seconds=0)
    assert not marks.has("k")
    assert marks.mark("k", ttl_seconds=60)


def test_a_subscription_lives_in_its_tenants_partition(dynamodb_client: Any, tenants_table: str) -> None:
    from tests.contract.webhook_store_contract import sub

    DynamoDbWebhookStore(tenants_table, client=dynamodb_client).put(sub("acme", "wh_1"))
    items = dynamodb_client.scan(TableName=tenants_table)["Items"]
    assert [(i["pk"]["S"], i["sk"]["S"]) for i in items] == [("TENANT#acme", "WEBHOOK#wh_1")]
