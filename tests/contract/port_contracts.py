"""Contract suites for the TenantRegistry and UsageLedger ports (embedded now; DynamoDB later)."""

from __future__ import annotations

import threading

import pytest

from ragline import errors
from ragline.domain.models import RunUsage
from ragline.ports import TenantRegistry, UsageLedger
from ragline.services.namespaces import new_namespace


class TenantRegistryContract:
    @pytest.fixture
    def registry(self) -> TenantRegistry:
        raise NotImplementedError

    def test_create_get_list_update(self, registry: TenantRegistry) -> None:
        registry.create_namespace(new_namespace("acme", "docs", "Product docs", default=True))
        registry.create_namespace(new_namespace("acme", "hr"))
        registry.create_namespace(new_namespace("globex", "docs"))
        got = registry.get_namespace("acme", "docs")
        assert got.description == "Product docs" and got.default
        assert [n.namespace_id for n in registry.list_namespaces("acme")] == ["docs", "hr"]
        changed = got.model_copy(update={"description": "new"})
        registry.update_namespace(changed)
        assert registry.get_namespace("acme", "docs").description == "new"
        assert registry.get_namespace("globex", "docs").description == ""

    def test_duplicates_conflict_and_missing_is_not_found(self, registry: TenantRegistry) -> None:
        registry.create_namespace(new_namespace("acme", "docs"))
        with pytest.raises(errors.Conflict):
            registry.create_namespace(new_namespace("acme", "docs"))
        with pytest.raises(errors.NamespaceNotFound):
            registry.get_namespace("globex", "docs")
        with pytest.raises(errors.NamespaceNotFound):
            registry.update_namespace(new_namespace("acme", "ghost"))


class UsageLedgerContract:
    @pytest.fixture
    def ledger(self) -> UsageLedger:
        raise NotImplementedError

    def test_a_run_is_charged_once_however_often_it_is_committed(
        self, ledger: UsageLedger, period: str
    ) -> None:
        usage = RunUsage(retrievals=2, llm_output_tokens=50)
        for _ in range(5):
            assert ledger.commit("acme", "run-1", usage) == usage
        assert ledger.period_usage("acme", period) == usage

    def test_concurrent_commits_of_one_run_charge_once(self, ledger: UsageLedger, period: str) -> None:
        usage = RunUsage(retrievals=1)
        threads = [threading.Thread(target=ledger.commit, args=("acme", "run-x", usage)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert ledger.period_usage("acme", period).retrievals == 1

    def test_a_replay_returns_the_first_charge_not_the_new_numbers(
        self, ledger: UsageLedger, period: str
    ) -> None:
        ledger.commit("acme", "run-2", RunUsage(retrievals=1))
        assert ledger.commit("acme", "run-2", RunUsage(retrievals=9)) == RunUsage(retrievals=1)
        ledger.commit("globex", "run-3", RunUsage(retrievals=4))
        assert ledger.period_usage("acme", period).retrievals == 1
