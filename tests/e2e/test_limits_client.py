"""Limits through the operator's CLI and the Python client against ``ragline serve --api-keys`` over
real HTTP: a tenant's limit and a key's own limit refuse with a typed ``RateLimited`` (429,
``Retry-After``), the usage report shows the limits in force and the refusals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragline import errors
from ragline.cli.app import app
from ragline.client import RaglineClient
from ragline.domain.limits import Limits
from tests.e2e.test_client import Server

pytestmark = pytest.mark.e2e
runner = CliRunner()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path)
    yield s
    s.stop()


def test_the_operator_sets_limits_with_the_cli_and_the_tenant_sees_them_enforced(server: Server) -> None:
    # Given the operator limits acme to a burst of 2 and one request every 100 s
    home = str(server.container.settings.home)
    result = runner.invoke(
        app, ["tenants", "limits", "acme", "--rps", "0.01", "--burst", "2", "--home", home]
    )
    assert result.exit_code == 0, result.output
    assert "requestsPerSecond=0.01" in result.output
    client = RaglineClient(server.url, server.admin, max_retries=0)

    # When acme's admin asks three times
    first = client.usage()
    client.usage()
    with pytest.raises(errors.RateLimited) as refused:
        client.usage()

    # Then the third is refused with when to come back, and the report showed the limits in force
    assert refused.value.status == 429  # type: ignore[attr-defined]
    assert 90 <= refused.value.retry_after <= 100
    assert refused.value.details["scope"] == "tenant"
    assert first.limits == Limits(requests_per_second=0.01, burst=2)
    # and another tenant is untouched, its report counting none of acme's refusals
    globex = RaglineClient(server.url, server.globex, max_retries=0).usage()
    assert globex.throttled == 0 and globex.limits == Limits()


def test_a_key_created_with_limits_of_its_own_is_refused_alone(server: Server) -> None:
    admin = RaglineClient(server.url, server.globex, max_retries=0)
    created = admin.create_key(["admin"], name="batch", limits=Limits(requests_per_second=0.01, burst=1))
    assert created.limits == Limits(requests_per_second=0.01, burst=1)
    batch = RaglineClient(server.url, created.api_key, max_retries=0)
    batch.usage()
    with pytest.raises(errors.RateLimited) as refused:
        batch.usage()
    assert refused.value.details["scope"] == "key"
    report = admin.usage()  # the tenant's other keys are not slowed
    assert report.throttled == 1


def test_tenants_create_takes_limits(tmp_path: Path) -> None:
    home = str(tmp_path)
    result = runner.invoke(app, ["tenants", "create", "acme", "--max-runs", "4", "--home", home])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["keys", "create", "--tenant", "acme", "--rps", "3", "--home", home])
    assert "limits: requestsPerSecond=3.0" in result.output
    from ragline.config import Settings
    from ragline.wiring import Container

    registry = Container(Settings(home=tmp_path)).registry
    assert registry.get_tenant("acme").limits == Limits(max_concurrent_runs=4)
    assert registry.list_api_keys("acme")[0].limits == Limits(requests_per_second=3)
