"""The SourceRegistry contract on SQLite (a temp file) and DynamoDB (moto server, the tables created
from ``TenantsTable`` and ``DocumentsTable`` in ``template.yaml``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.aws.sources import DynamoDbSourceRegistry
from ragline.adapters.embedded.sources import SqliteSourceRegistry
from tests.contract.source_registry_contract import SourceRegistryContract

pytestmark = pytest.mark.contract


def _table(client: Any, logical_id: str) -> str:
    from tests.support.cfn_tables import create_table_from_template

    return create_table_from_template(client, logical_id, f"{logical_id.lower()}-{uuid.uuid4().hex}")


class TestSqliteSourceRegistry(SourceRegistryContract):
    @pytest.fixture
    def sources(self, tmp_path: Path) -> Iterator[SqliteSourceRegistry]:
        registry = SqliteSourceRegistry(tmp_path / "sources.sqlite")
        yield registry
        registry.close()


class TestDynamoDbSourceRegistry(SourceRegistryContract):
    @pytest.fixture
    def sources(self, dynamodb_client: Any) -> Iterator[DynamoDbSourceRegistry]:
        tenants, documents = (
            _table(dynamodb_client, "TenantsTable"),
            _table(dynamodb_client, "DocumentsTable"),
        )
        yield DynamoDbSourceRegistry(tenants, documents, client=dynamodb_client)
        dynamodb_client.delete_table(TableName=tenants)
        dynamodb_client.delete_table(TableName=documents)
