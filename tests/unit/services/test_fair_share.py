"""Fair sharing's rules above the limiter: whose bucket goes first, what a refusal says and counts,
the deployment's defaults, run slots released on every path, and the gate reading the limits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.embedded.limits import SqliteRateLimiter
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.domain.billing import current_period
from ragline.domain.limits import MICROS, Limits, Rate
from ragline.domain.tenancy import Tenant
from ragline.services.authentication import Principal
from ragline.services.limits import FairShare
from ragline.services.tenancy import TenancyService
from ragline.services.tenant_gate import TenantGate
from tests.support.lambda_harness import authorizer_context

pytestmark = pytest.mark.unit
NOW = 1_700_000_000 * MICROS


def key(key_id: str, tenant: str = "acme") -> Principal:
    return Principal(tenant_id=tenant, scopes=frozenset({"search"}), key_id=key_id)


@pytest.fixture
def limiter(tmp_path: Path) -> SqliteRateLimiter:
    return SqliteRateLimiter(tmp_path / "limits.sqlite", clock=lambda: NOW)


def test_a_key_over_its_own_limit_spends_none_of_its_tenants_tokens(limiter: SqliteRateLimiter) -> None:
    share = FairShare(limiter)
    tenant, noisy = Limits(requests_per_second=1, burst=3), Limits(requests_per_second=1, burst=1)
    share.admit(key("noisy"), tenant, noisy)
    for _ in range(20):  # Given one key far over its own limit
        with pytest.raises(errors.RateLimited) as refused:
            share.admit(key("noisy"), tenant, noisy)
        assert refused.value.details["scope"] == "key"
    # Then the tenant's other keys still have the tenant's remaining tokens
    share.admit(key("quiet"), tenant)
    share.admit(key("quiet"), tenant)
    with pytest.raises(errors.RateLimited) as refused:
        share.admit(key("quiet"), tenant)
    assert refused.value.details["scope"] == "tenant"


def test_a_refusal_says_when_to_retry_and_is_counted_in_the_period(limiter: SqliteRateLimiter) -> None:
    share = FairShare(limiter)
    slow = Limits(requests_per_second=0.25, burst=1)  # one token every 4 s
    share.admit(key("k"), slow)
    with pytest.raises(errors.RateLimited) as refused:
        share.admit(key("k"), slow)
    assert refused.value.retry_after == 4
    assert refused.value.to_dict()["error"]["code"] == "rate_limited"
    assert refused.value.to_dict()["error"]["details"]["retryAfter"] == 4
    assert share.throttled("acme", current_period()) == 1
    assert share.throttled("globex", current_period()) == 0


def test_the_deployments_defaults_hold_where_the_tenant_sets_none(limiter: SqliteRateLimiter) -> None:
    share = FairShare(limiter, defaults=Limits(requests_per_second=1, burst=1))
    share.admit(key("k"), Limits())
    with pytest.raises(errors.RateLimited):
        share.admit(key("k"), Limits())
    own = Limits(requests_per_second=1, burst=5)  # a tenant's own burst overrides the default's
    for _ in range(5):
        share.admit(key("k", tenant="globex"), own)


def test_no_limit_anywhere_admits_everything(limiter: SqliteRateLimiter) -> None:
    share = FairShare(limiter)
    for _ in range(100):
        share.admit(key("k"), Limits())
    assert share.run_slot(key("k"), Limits()) is not None


def test_a_tenant_without_slots_refuses_and_frees_the_keys_slot(limiter: SqliteRateLimiter) -> None:
    share = FairShare(limiter)
    tenant, one = Limits(max_concurrent_runs=1), Limits(max_concurrent_runs=1)
    running = share.run_slot(key("a"), tenant)
    with pytest.raises(errors.TooManyRuns) as refused:
        share.run_slot(key("b"), tenant, one)  # Given b's own slot free but the tenant's taken
    assert (refused.value.code, refused.value.retry_after) == ("too_many_runs", 1)
    running.release()
    with share.run_slot(key("b"), tenant, one):  # Then b's key slot was not left held
        pass
    with share.run_slot(key("b"), tenant, one):  # and a run's end frees both
        pass


def test_a_stream_frees_its_slot_when_it_ends_fails_or_is_closed(limiter: SqliteRateLimiter) -> None:
    share, one = FairShare(limiter), Limits(max_concurrent_runs=1)

    def events(fail: bool) -> object:
        yield 1
        if fail:
            raise RuntimeError("model down")
        yield 2

    assert list(share.run_slot(key("k"), one).around(iter([1, 2]))) == [1, 2]
    with pytest.raises(RuntimeError):
        list(share.run_slot(key("k"), one).around(events(fail=True)))  # type: ignore[arg-type]
    stream = share.run_slot(key("k"), one).around(events(fail=False))  # type: ignore[arg-type]
    next(stream)
    stream.close()  # the client went away mid-stream
    share.run_slot(key("k"), one).release()


def test_the_gate_reads_tenant_and_key_limits_and_refuses_before_the_caller_is_returned(
    tmp_path: Path, limiter: SqliteRateLimiter
) -> None:
    registry = SqliteTenantRegistry(tmp_path / "t.sqlite")
    tenancy = TenancyService(registry)
    tenancy.create_tenant("acme", limits=Limits(requests_per_second=1, burst=2))
    _, record = tenancy.create_key("acme", scopes=["search"], limits=Limits(requests_per_second=1, burst=1))
    gate = TenantGate(registry, fair_share=FairShare(limiter))
    context = authorizer_context("acme") | {"keyId": record.key_id}
    assert gate.caller(context).key_id == record.key_id
    with pytest.raises(errors.RateLimited) as refused:
        gate.caller(context)
    assert refused.value.details["scope"] == "key"
    other = authorizer_context("acme") | {"keyId": "another"}
    gate.caller(other)
    with pytest.raises(errors.RateLimited) as refused:
        gate.caller(other)
    assert refused.value.details["scope"] == "tenant"


def test_limits_set_by_the_operator_are_kept_on_the_tenant_record(tmp_path: Path) -> None:
    registry = SqliteTenantRegistry(tmp_path / "t.sqlite")
    tenancy = TenancyService(registry)
    tenancy.create_tenant("acme")
    assert registry.get_tenant("acme").limits == Limits()
    tenancy.set_limits("acme", Limits(requests_per_second=5, max_concurrent_runs=2))
    stored: Tenant = registry.get_tenant("acme")
    assert stored.limits == Limits(requests_per_second=5, max_concurrent_runs=2)


def test_deleting_a_tenant_forgets_its_buckets_slots_and_counts(tmp_path: Path) -> None:
    from ragline.config import Settings
    from ragline.wiring import Container

    c = Container(Settings(home=tmp_path))
    c.tenancy.create_tenant("acme", limits=Limits(requests_per_second=1, burst=1, max_concurrent_runs=1))
    c.fair_share.admit(key("k"), Limits(requests_per_second=1, burst=1))
    with pytest.raises(errors.RateLimited):
        c.fair_share.admit(key("k"), Limits(requests_per_second=1, burst=1))
    c.fair_share.run_slot(key("k"), Limits(max_concurrent_runs=1))
    purge = c.tenant_deletion.delete("acme")
    assert purge.usage_details >= 3
    assert c.limiter.refusals("acme", current_period()) == 0


def test_a_tenants_own_rate_keeps_its_own_burst_not_the_defaults() -> None:
    defaults = Limits(requests_per_second=10, burst=20, max_concurrent_runs=10)
    assert Limits(requests_per_second=100).over(defaults) == Limits(
        requests_per_second=100, max_concurrent_runs=10
    )
    assert Limits(requests_per_second=100).over(defaults).rate() == Rate.of(100, 200)
    assert Limits(max_concurrent_runs=2).over(defaults) == Limits(
        requests_per_second=10, burst=20, max_concurrent_runs=2
    )


class CountingLimiter:
    """The SQLite limiter on a hand-moved clock, counting the takes that reach it."""

    def __init__(self, tmp_path: Path) -> None:
        self.now = NOW
        self.inner = SqliteRateLimiter(tmp_path / "counted.sqlite", clock=lambda: self.now)
        self.clock = self.inner.clock
        self.takes = 0

    def take(self, bucket: Any, rate: Rate) -> int:
        self.takes += 1
        return self.inner.take(bucket, rate)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_refused_bucket_is_refused_in_process_until_its_retry_moment(tmp_path: Path) -> None:
    """Given a bucket the limiter refused for 4 s, later requests within those 4 s are refused without
    a store write, with the time left; at the moment itself the limiter is asked again and admits."""
    limiter = CountingLimiter(tmp_path)
    share, slow = FairShare(limiter), Limits(requests_per_second=0.25, burst=1)
    share.admit(key("k"), slow)
    with pytest.raises(errors.RateLimited):
        share.admit(key("k"), slow)
    assert limiter.takes == 2
    limiter.now += 1 * MICROS
    for _ in range(50):  # a burst far over the limit
        with pytest.raises(errors.RateLimited) as refused:
            share.admit(key("k"), slow)
    assert limiter.takes == 2 and refused.value.retry_after == 3
    assert share.throttled("acme", current_period()) == 51  # every refusal still counted
    limiter.now += 3 * MICROS
    share.admit(key("k"), slow)
    assert limiter.takes == 3


def test_a_changed_limit_is_not_held_to_the_old_refusal(tmp_path: Path) -> None:
    limiter = CountingLimiter(tmp_path)
    share = FairShare(limiter)
    share.admit(key("k"), Limits(requests_per_second=0.25, burst=1))
    with pytest.raises(errors.RateLimited):
        share.admit(key("k"), Limits(requests_per_second=0.25, burst=1))
    share.admit(key("k"), Limits(requests_per_second=0.25, burst=5))  # the operator raised the burst


def test_the_refusals_remembered_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ragline.services.limits.REMEMBERED", 10)
    limiter = CountingLimiter(tmp_path)
    share, one = FairShare(limiter), Limits(requests_per_second=0.25, burst=1)
    for i in range(25):
        share.admit(key("k", tenant=f"t{i}"), one)
        with pytest.raises(errors.RateLimited):
            share.admit(key("k", tenant=f"t{i}"), one)
        assert len(share._refused_until) <= 10
