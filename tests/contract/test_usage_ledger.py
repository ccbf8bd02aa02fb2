"""The UsageLedger contract, run against SQLite (a temp file) and DynamoDB (moto server).

The DynamoDB table is created from ``UsageTable`` in ``template.yaml``, fresh for every test.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.aws import ledger as dynamodb_ledger
from ragline.adapters.aws.ledger import DynamoDbUsageLedger
from ragline.adapters.embedded.ledger import SqliteUsageLedger
from ragline.domain.billing import current_period
from ragline.domain.models import RunUsage
from tests.contract.usage_ledger_contract import Clock, UsageLedgerContract
from tests.support.cfn_tables import create_table_from_template, load_template

pytestmark = pytest.mark.contract


@pytest.fixture
def period() -> str:
    return current_period()


class TestSqliteUsageLedger(UsageLedgerContract):
    @pytest.fixture
    def ledger(self, tmp_path: Path, clock: Clock) -> SqliteUsageLedger:
        return SqliteUsageLedger(tmp_path / "usage.sqlite", clock=clock)


@pytest.fixture
def usage_table(dynamodb_client: Any) -> Iterator[str]:
    table = create_table_from_template(dynamodb_client, "UsageTable", f"usage-{uuid.uuid4().hex}")
    yield table
    dynamodb_client.delete_table(TableName=table)


class TestDynamoDbUsageLedger(UsageLedgerContract):
    @pytest.fixture
    def ledger(self, dynamodb_client: Any, usage_table: str, clock: Clock) -> DynamoDbUsageLedger:
        return DynamoDbUsageLedger(usage_table, client=dynamodb_client, clock=clock)


# -- SQLite specifics -----------------------------------------------------------------------------
def test_sqlite_two_ledgers_on_one_file_charge_a_run_once(tmp_path: Path, period: str) -> None:
    """Given a CLI and a server on one file, a run committed by both is charged once."""
    a = SqliteUsageLedger(tmp_path / "u.sqlite")
    b = SqliteUsageLedger(tmp_path / "u.sqlite")
    assert a.commit("acme", "run-1", RunUsage(retrievals=1)) == RunUsage(retrievals=1)
    assert b.commit("acme", "run-1", RunUsage(retrievals=5)) == RunUsage(retrievals=1)
    assert b.period_runs("acme", period) == 1


LEGACY_FIELDS = ("retrievals", "reranks", "llm_input_tokens", "llm_output_tokens", "embedded_tokens", "pages")
"""The usage counters of files written before ``llm_cached_input_tokens`` existed."""


def test_sqlite_files_with_run_id_keyed_charges_are_migrated(tmp_path: Path, period: str) -> None:
    path = tmp_path / "old.sqlite"
    fields = LEGACY_FIELDS
    with sqlite3.connect(path) as db:  # the layout before charges were keyed by tenant
        db.execute(
            "CREATE TABLE runs (run_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, period TEXT NOT NULL, "
            + ", ".join(f"{f} INTEGER NOT NULL" for f in fields)
            + ")"
        )
        db.execute(
            f"INSERT INTO runs VALUES ('run-1', 'acme', ?, {','.join('?' * len(fields))})",
            (period, 2, 0, 0, 0, 0, 0),
        )
    ledger = SqliteUsageLedger(path)
    assert ledger.commit("acme", "run-1", RunUsage(retrievals=9)) == RunUsage(retrievals=2)
    assert ledger.commit("globex", "run-1", RunUsage(retrievals=9)) == RunUsage(retrievals=9)


def test_sqlite_files_without_the_cached_tokens_counter_keep_their_counts(
    tmp_path: Path, period: str
) -> None:
    """Given a file written before ``llm_cached_input_tokens``, its charges and counters still read,
    and new runs count the new field."""
    path = tmp_path / "old.sqlite"
    SqliteUsageLedger(path).commit("acme", "run-1", RunUsage(llm_input_tokens=7))
    with sqlite3.connect(path) as db:  # as an older Ragline left it
        for table in ("charges", "counters"):
            db.execute(f"ALTER TABLE {table} DROP COLUMN llm_cached_input_tokens")

    ledger = SqliteUsageLedger(path)
    assert ledger.commit("acme", "run-1", RunUsage(retrievals=9)) == RunUsage(llm_input_tokens=7)
    ledger.commit("acme", "run-2", RunUsage(llm_input_tokens=5, llm_cached_input_tokens=4))
    assert ledger.period_usage("acme", period) == RunUsage(llm_input_tokens=12, llm_cached_input_tokens=4)


# -- DynamoDB specifics ---------------------------------------------------------------------------
def test_dynamodb_client_is_built_on_first_use_from_the_environment(
    moto_aws_env: dict[str, str], usage_table: str, period: str
) -> None:
    ledger = DynamoDbUsageLedger(usage_table)  # no client, no I/O yet
    assert ledger.period_runs("acme", period) == 0
    assert ledger.commit("acme", "run-1", RunUsage(pages=2)) == RunUsage(pages=2)
    assert ledger.period_usage("acme", period) == RunUsage(pages=2)


def test_dynamodb_item_layout_is_a_counter_and_an_expiring_marker(
    dynamodb_client: Any, usage_table: str, period: str
) -> None:
    DynamoDbUsageLedger(usage_table, client=dynamodb_client).commit("acme", "r1", RunUsage(retrievals=3))
    items = {i["pk"]["S"]: i for i in dynamodb_client.scan(TableName=usage_table)["Items"]}
    counter, marker = items["TENANT#acme"], items[dynamodb_ledger.marker_key("acme", "r1")["pk"]["S"]]
    assert counter["sk"] == {"S": f"PERIOD#{period}"} and "expires_at" not in counter
    assert (counter["runs"], counter["retrievals"], counter["pages"]) == ({"N": "1"}, {"N": "3"}, {"N": "0"})
    assert marker["sk"] == {"S": "RUN"} and marker["period"] == {"S": period}
    assert int(marker["expires_at"]["N"]) == dynamodb_ledger.marker_expiry(period)
    assert marker["over_quota"] == {"BOOL": False} and marker["run_id"] == {"S": "r1"}


def test_dynamodb_over_quota_charge_flags_its_marker(dynamodb_client: Any, usage_table: str) -> None:
    ledger = DynamoDbUsageLedger(usage_table, client=dynamodb_client)
    ledger.commit("acme", "r1", RunUsage(), 1)
    ledger.commit("acme", "r2", RunUsage(), 1)
    marker = dynamodb_client.get_item(TableName=usage_table, Key=dynamodb_ledger.marker_key("acme", "r2"))
    assert marker["Item"]["over_quota"] == {"BOOL": True}


def test_usage_table_expires_markers_by_ttl_and_is_retained() -> None:
    table = load_template()["Resources"]["UsageTable"]
    assert table["Properties"]["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert (table["DeletionPolicy"], table["UpdateReplacePolicy"]) == ("Retain", "Retain")
    assert table["Properties"]["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
