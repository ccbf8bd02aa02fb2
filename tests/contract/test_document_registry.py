"""The DocumentRegistry contract, run against SQLite (a temp file) and DynamoDB (moto server).

The DynamoDB table is created from ``DocumentsTable`` in ``template.yaml``, fresh for every test.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.aws.documents import DynamoDbDocumentRegistry, record_to_item
from ragline.adapters.embedded.documents import SqliteDocumentRegistry
from ragline.domain.documents import DocumentRecord
from ragline.ports import DocumentRegistry
from tests.contract.document_registry_contract import S1, DocumentRegistryContract
from tests.support.cfn_tables import create_table_from_template
from tests.support.clock import ManualClock

pytestmark = pytest.mark.contract


class TestSqliteDocumentRegistry(DocumentRegistryContract):
    @pytest.fixture
    def registry(self, tmp_path: Path, clock: ManualClock) -> SqliteDocumentRegistry:
        return SqliteDocumentRegistry(tmp_path / "documents.sqlite", clock=clock)

    def store_as_before(self, registry: DocumentRegistry, fields: dict[str, Any]) -> None:
        assert isinstance(registry, SqliteDocumentRegistry)
        body = DocumentRecord.model_validate(fields).model_dump(
            mode="json", exclude={"origin", "lease_until"}
        )
        key = (fields["tenant_id"], fields["namespace_id"], fields["document_id"])
        registry.get(*key)  # opens the file with its schema
        with sqlite3.connect(registry.path) as db:
            db.execute(
                "INSERT INTO documents VALUES (?,?,?,?,?)", (*key, fields["generation"], json.dumps(body))
            )


@pytest.fixture
def documents_table(dynamodb_client: Any) -> Iterator[str]:
    table = create_table_from_template(dynamodb_client, "DocumentsTable", f"documents-{uuid.uuid4().hex}")
    yield table
    dynamodb_client.delete_table(TableName=table)


class TestDynamoDbDocumentRegistry(DocumentRegistryContract):
    @pytest.fixture
    def registry(
        self, dynamodb_client: Any, documents_table: str, clock: ManualClock
    ) -> DynamoDbDocumentRegistry:
        return DynamoDbDocumentRegistry(documents_table, client=dynamodb_client, clock=clock)

    def store_as_before(self, registry: DocumentRegistry, fields: dict[str, Any]) -> None:
        assert isinstance(registry, DynamoDbDocumentRegistry)
        record = DocumentRecord.model_validate(fields)
        item = record_to_item(record)
        del item["origin"], item["attempts"]
        item[f"attempts#{record.sequencer}"] = {"N": str(record.attempts)}  # where it was kept then
        registry._client().put_item(TableName=registry.table_name, Item=item)


def test_sqlite_claims_from_two_registries_on_one_file_are_serialised(tmp_path: Path) -> None:
    """Given a CLI and a worker on one file, each granted claim still gets its own generation."""
    a = SqliteDocumentRegistry(tmp_path / "d.sqlite")
    b = SqliteDocumentRegistry(tmp_path / "d.sqlite")
    gens = [r.claim("acme", "docs", "x", S1).record.generation for r in (a, b, a, b)]
    assert gens == [1, 2, 3, 4]


def test_dynamodb_client_is_built_on_first_use_from_the_environment(
    moto_aws_env: dict[str, str], documents_table: str
) -> None:
    registry = DynamoDbDocumentRegistry(documents_table)  # no client, no I/O yet
    assert registry.get("acme", "docs", "x") is None
    assert registry.claim("acme", "docs", "x", S1).granted


def test_dynamodb_item_layout_is_the_single_table_key(dynamodb_client: Any, documents_table: str) -> None:
    DynamoDbDocumentRegistry(documents_table, client=dynamodb_client).claim("acme", "docs", "a/b.txt", S1)
    item = dynamodb_client.scan(TableName=documents_table)["Items"][0]
    assert (item["pk"], item["sk"]) == ({"S": "DOC#acme#docs"}, {"S": "a/b.txt"})
    assert item["generation"] == {"N": "1"} and "T" in item["created_at"]["S"]
