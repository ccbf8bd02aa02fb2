"""The RateLimiter contract (see :class:`ragline.ports.RateLimiter`), one suite for every adapter.

A subclass provides ``limiters``: a factory of limiters that share ONE store (two processes on one
SQLite file, two Lambdas on one table), all reading the ``clock`` fixture (microseconds).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.domain.limits import MICROS, Bucket, Rate, admit
from ragline.ports import RateLimiter

Factory = Callable[[], RateLimiter]
RATE = Rate.of(10, 5)  # 5 at once, then one every 100 ms


class Clock:
    """Microseconds a test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_700_000_000 * MICROS

    def __call__(self) -> int:
        return self.now

    def advance(self, micros: int) -> None:
        self.now += micros


def in_threads(n: int, target: Callable[[], Any]) -> list[Any]:
    """``target`` from ``n`` threads released together; their results (a failure re-raises)."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    failures: list[BaseException] = []

    def work(i: int) -> None:
        try:
            barrier.wait()
            results[i] = target()
        except BaseException as exc:  # re-raised below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    if failures:
        raise failures[0]
    return results


def round_robin(processes: list[RateLimiter], call: Callable[[RateLimiter], Any]) -> Callable[[], Any]:
    """A thread target that calls ``call`` on the next of ``processes`` (each thread another one)."""
    turn, lock = iter(range(1_000_000)), threading.Lock()

    def target() -> Any:
        with lock:
            mine = processes[next(turn) % len(processes)]
        return call(mine)

    return target


def fresh_tenant() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


class RateLimiterContract:
    @pytest.fixture
    def clock(self) -> Clock:
        return Clock()

    @pytest.fixture
    def limiters(self, clock: Clock) -> Factory:
        raise NotImplementedError

    @pytest.fixture
    def limiter(self, limiters: Factory) -> RateLimiter:
        return limiters()

    # -- token buckets ----------------------------------------------------------------------------
    def test_a_fresh_bucket_admits_its_burst_then_refuses_for_one_interval(
        self, limiter: RateLimiter
    ) -> None:
        bucket = Bucket(fresh_tenant())
        assert [limiter.take(bucket, RATE) for _ in range(5)] == [0] * 5
        assert limiter.take(bucket, RATE) == RATE.interval

    def test_a_refusal_takes_nothing_and_a_token_comes_back_each_interval(
        self, limiter: RateLimiter, clock: Clock
    ) -> None:
        bucket = Bucket(fresh_tenant())
        for _ in range(5):
            limiter.take(bucket, RATE)
        for _ in range(10):  # a burst of refusals does not push the next token further away
            assert limiter.take(bucket, RATE) > 0
        clock.advance(RATE.interval // 2)
        assert limiter.take(bucket, RATE) == RATE.interval // 2
        clock.advance(RATE.interval // 2)
        assert limiter.take(bucket, RATE) == 0
        assert limiter.take(bucket, RATE) == RATE.interval

    def test_a_quiet_bucket_refills_to_its_burst_and_no_further(
        self, limiter: RateLimiter, clock: Clock
    ) -> None:
        bucket = Bucket(fresh_tenant())
        for _ in range(5):
            limiter.take(bucket, RATE)
        clock.advance(3600 * MICROS)
        assert [limiter.take(bucket, RATE) for _ in range(6)] == [0] * 5 + [RATE.interval]

    def test_tenants_and_keys_have_buckets_of_their_own(self, limiter: RateLimiter) -> None:
        a, b = fresh_tenant(), fresh_tenant()
        for _ in range(5):
            limiter.take(Bucket(a), RATE)
        assert limiter.take(Bucket(a), RATE) > 0
        assert limiter.take(Bucket(b), RATE) == 0
        assert limiter.take(Bucket(a, "key1"), RATE) == 0
        assert limiter.take(Bucket(a, "key2"), RATE) == 0

    def test_concurrent_takes_admit_exactly_the_tokens_there_are(self, limiters: Factory) -> None:
        processes = [limiters() for _ in range(4)]
        bucket = Bucket(fresh_tenant())
        waits = in_threads(12, round_robin(processes, lambda mine: mine.take(bucket, RATE)))
        assert sum(1 for w in waits if w == 0) == 5

    # -- property: any schedule of concurrent takes admits what the serial bucket admits ---------
    @settings(
        max_examples=15,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
    )
    @given(
        steps=st.lists(
            st.tuples(st.integers(0, 6), st.sampled_from([0, 1, 40_000, 100_000, 250_000, 2_000_000])),
            min_size=1,
            max_size=6,
        ),
        burst=st.integers(1, 4),
    )
    def test_property_concurrent_schedules_match_the_serial_bucket(
        self, limiters: Factory, clock: Clock, steps: list[tuple[int, int]], burst: int
    ) -> None:
        rate = Rate.of(10, burst)
        processes = [limiters() for _ in range(3)]
        bucket, tat = Bucket(fresh_tenant(), "k"), None
        for concurrent, later in steps:
            expected = 0
            for _ in range(concurrent):  # all at one instant: the serial order cannot matter
                answer = admit(tat, clock.now, rate)
                expected, tat = expected + answer.admitted, answer.tat
            if concurrent:
                waits = in_threads(concurrent, round_robin(processes, lambda p: p.take(bucket, rate)))
                assert sum(1 for w in waits if w == 0) == expected
            clock.advance(later)

    # -- run slots --------------------------------------------------------------------------------
    def test_leases_hold_at_most_the_slots_and_a_release_frees_one(self, limiter: RateLimiter) -> None:
        bucket = Bucket(fresh_tenant())
        leases = [limiter.lease(bucket, 2, 60) for _ in range(3)]
        assert leases[0] and leases[1] and leases[0] != leases[1]
        assert leases[2] is None
        limiter.release(bucket, leases[0])
        limiter.release(bucket, leases[0])  # idempotent
        assert limiter.lease(bucket, 2, 60) is not None
        assert limiter.lease(bucket, 2, 60) is None

    def test_an_expired_lease_frees_its_slot_and_its_late_release_frees_nothing(
        self, limiter: RateLimiter, clock: Clock
    ) -> None:
        bucket = Bucket(fresh_tenant())
        crashed = limiter.lease(bucket, 1, 30)
        assert crashed is not None and limiter.lease(bucket, 1, 30) is None
        clock.advance(31 * MICROS)
        successor = limiter.lease(bucket, 1, 30)
        assert successor is not None
        limiter.release(bucket, crashed)  # the crashed holder comes back: the successor keeps its slot
        assert limiter.lease(bucket, 1, 30) is None

    def test_slots_of_tenants_and_keys_are_apart(self, limiter: RateLimiter) -> None:
        a = fresh_tenant()
        assert limiter.lease(Bucket(a), 1, 60) is not None
        assert limiter.lease(Bucket(a, "key1"), 1, 60) is not None
        assert limiter.lease(Bucket(fresh_tenant()), 1, 60) is not None
        assert limiter.lease(Bucket(a), 1, 60) is None

    def test_concurrent_leases_never_exceed_the_slots(self, limiters: Factory) -> None:
        processes = [limiters() for _ in range(4)]
        bucket = Bucket(fresh_tenant())
        leases = in_threads(10, round_robin(processes, lambda mine: mine.lease(bucket, 3, 60)))
        held = [lease_id for lease_id in leases if lease_id]
        assert len(held) == 3 and len(set(held)) == 3

    # -- refusal counts and purge -----------------------------------------------------------------
    def test_refusals_are_counted_per_tenant_and_period(self, limiter: RateLimiter) -> None:
        a, b = fresh_tenant(), fresh_tenant()
        assert limiter.refusals(a, "2026-12") == 0
        for _ in range(3):
            limiter.count_refusal(a, "2026-12")
        limiter.count_refusal(a, "2027-01")
        assert (limiter.refusals(a, "2026-12"), limiter.refusals(a, "2027-01")) == (3, 1)
        assert limiter.refusals(b, "2026-12") == 0

    def test_purge_forgets_the_tenant_only(self, limiter: RateLimiter) -> None:
        a, b = fresh_tenant(), fresh_tenant()
        for tenant in (a, b):
            for _ in range(5):
                limiter.take(Bucket(tenant), RATE)
            limiter.lease(Bucket(tenant), 1, 60)
            limiter.count_refusal(tenant, "2026-12")
        assert limiter.purge_tenant(a) >= 3
        assert limiter.purge_tenant(a) == 0
        assert limiter.take(Bucket(a), RATE) == 0 and limiter.take(Bucket(b), RATE) > 0
        assert limiter.lease(Bucket(a), 1, 60) is not None and limiter.lease(Bucket(b), 1, 60) is None
        assert (limiter.refusals(a, "2026-12"), limiter.refusals(b, "2026-12")) == (0, 1)
