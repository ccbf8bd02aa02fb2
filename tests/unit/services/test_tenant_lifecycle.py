"""Issue 12 #7: a tenant that is suspended, deleted or gone cannot keep working through its keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.services.tenancy import TenancyService

pytestmark = pytest.mark.unit


@pytest.fixture
def svc(tmp_path: Path) -> TenancyService:
    service = TenancyService(SqliteTenantRegistry(tmp_path / "t.sqlite"))
    service.create_tenant("acme", max_runs_per_period=10)
    return service


def bearer(svc: TenancyService, tenant: str = "acme") -> str:
    plaintext, _ = svc.create_key(tenant, scopes=["search"])
    return f"Bearer {plaintext}"


def test_an_active_tenants_key_authenticates(svc: TenancyService) -> None:
    assert svc.authenticate(bearer(svc)).tenant_id == "acme"


def test_a_suspended_tenants_key_is_refused_until_reactivated(svc: TenancyService) -> None:
    key = bearer(svc)
    svc.set_status("acme", "suspended")
    with pytest.raises(errors.Unauthorized):
        svc.authenticate(key)
    with pytest.raises(errors.Conflict):
        svc.create_key("acme", scopes=["search"])  # no new keys for a suspended tenant
    svc.set_status("acme", "active")
    assert svc.authenticate(key).tenant_id == "acme"


def test_a_deleted_tenant_stays_deleted_and_its_keys_are_revoked(svc: TenancyService) -> None:
    key = bearer(svc)
    svc.set_status("acme", "deleted")
    with pytest.raises(errors.Unauthorized):
        svc.authenticate(key)
    assert all(not k.active for k in svc.list_keys("acme"))
    with pytest.raises(errors.Conflict):
        svc.set_status("acme", "active")


def test_a_key_whose_tenant_record_is_gone_is_refused(svc: TenancyService, tmp_path: Path) -> None:
    key = bearer(svc)
    registry = SqliteTenantRegistry(tmp_path / "t.sqlite")
    with registry._lock:  # the record vanishes (a manual delete, a restore without it)
        registry._db().execute("DELETE FROM tenants WHERE tenant_id='acme'")
    with pytest.raises(errors.Unauthorized):
        svc.authenticate(key)
