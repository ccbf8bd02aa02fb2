"""The RunLog and ConversationStore contracts on SQLite (a temp file) and DynamoDB (moto server, the
table created from ``UsageTable`` in ``template.yaml``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.aws.runs import DynamoDbConversationStore, DynamoDbRunLog
from ragline.adapters.embedded.runs import SqliteConversationStore, SqliteRunLog
from tests.contract.run_log_contract import ConversationStoreContract, RunLogContract, events, head

pytestmark = pytest.mark.contract


@pytest.fixture
def usage_table(dynamodb_client: Any) -> Iterator[str]:
    from tests.support.cfn_tables import create_table_from_template

    table = create_table_from_template(dynamodb_client, "UsageTable", f"usage-{uuid.uuid4().hex}")
    yield table
    dynamodb_client.delete_table(TableName=table)


class TestSqliteRunLog(RunLogContract):
    @pytest.fixture
    def log(self, tmp_path: Path) -> SqliteRunLog:
        return SqliteRunLog(tmp_path / "runs.sqlite")


class TestDynamoDbRunLog(RunLogContract):
    @pytest.fixture
    def log(self, dynamodb_client: Any, usage_table: str) -> DynamoDbRunLog:
        return DynamoDbRunLog(usage_table, client=dynamodb_client)


class TestSqliteConversationStore(ConversationStoreContract):
    @pytest.fixture
    def store(self, tmp_path: Path) -> SqliteConversationStore:
        return SqliteConversationStore(tmp_path / "runs.sqlite")


class TestDynamoDbConversationStore(ConversationStoreContract):
    @pytest.fixture
    def store(self, dynamodb_client: Any, usage_table: str) -> DynamoDbConversationStore:
        return DynamoDbConversationStore(usage_table, client=dynamodb_client)


def test_run_logs_expire_by_the_tables_ttl_and_live_in_their_own_partitions(
    dynamodb_client: Any, usage_table: str
) -> None:
    log = DynamoDbRunLog(usage_table, client=dynamodb_client)
    log.start(head())
    log.append("acme", "r1", events(1, 2))
    items = dynamodb_client.scan(TableName=usage_table)["Items"]
    assert {(i["pk"]["S"], i["sk"]["S"]) for i in items} == {
        ("RUNLOG#acme#r1", "HEAD"),
        ("RUNLOG#acme#r1", "E#0000000002"),
    }
    assert all(int(i["expires_at"]["N"]) > 0 for i in items)


def test_the_embedded_file_is_private_to_its_owner(tmp_path: Path) -> None:
    SqliteRunLog(tmp_path / "runs.sqlite").start(head())
    assert (tmp_path / "runs.sqlite").stat().st_mode & 0o077 == 0
