"""The tenant gate reads a tenant's status at most once per ``STATUS_TTL`` per process, and a change
(suspension, reactivation) holds once that interval has passed."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.domain.tenancy import Tenant
from ragline.services.tenant_gate import STATUS_TTL, TenantGate
from tests.support.lambda_harness import authorizer_context

pytestmark = pytest.mark.unit


class Counting(SqliteTenantRegistry):
    reads = 0

    def get_tenant(self, tenant_id: str) -> Tenant:
        self.reads += 1
        return super().get_tenant(tenant_id)


def test_a_status_change_holds_within_the_ttl_with_one_read_per_interval(tmp_path: Path) -> None:
    registry = Counting(tmp_path / "t.sqlite")
    registry.create_tenant(Tenant(tenant_id="acme"))
    now = [0.0]
    gate = TenantGate(registry, clock=lambda: now[0])
    context = authorizer_context("acme")

    for _ in range(5):
        assert gate.caller(context).tenant_id == "acme"
    assert registry.reads == 1  # Given many requests in one interval: one read

    registry.update_tenant(registry.get_tenant("acme").model_copy(update={"status": "suspended"}))
    now[0] += STATUS_TTL  # When the interval has passed since the last read
    with pytest.raises(errors.Unauthorized):
        gate.caller(context)  # Then the suspension holds
    assert registry.reads == 3  # one read to suspend it (the test's), one by the gate
    assert STATUS_TTL < 300  # shorter than API Gateway's authorizer cache


def test_a_tenant_without_a_record_is_the_local_operators_and_passes(tmp_path: Path) -> None:
    gate = TenantGate(SqliteTenantRegistry(tmp_path / "t.sqlite"))
    assert gate.caller(authorizer_context("local")).tenant_id == "local"
