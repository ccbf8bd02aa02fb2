from __future__ import annotations

from pathlib import Path

import pytest

from ragline.adapters.sqlite_ledger import SqliteUsageLedger, current_period
from ragline.adapters.sqlite_tenants import SqliteTenantRegistry
from tests.contract.port_contracts import TenantRegistryContract, UsageLedgerContract

pytestmark = pytest.mark.contract


@pytest.fixture
def period() -> str:
    return current_period()


class TestSqliteTenantRegistry(TenantRegistryContract):
    @pytest.fixture
    def registry(self, tmp_path: Path) -> SqliteTenantRegistry:
        return SqliteTenantRegistry(tmp_path / "tenants.sqlite")


class TestSqliteUsageLedger(UsageLedgerContract):
    @pytest.fixture
    def ledger(self, tmp_path: Path) -> SqliteUsageLedger:
        return SqliteUsageLedger(tmp_path / "usage.sqlite")
