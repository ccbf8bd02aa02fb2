"""``usage.quota_threshold``: 80 % and 100 % of the monthly quota, each announced once per period —
by exactly one of many concurrent runs; a failed publish is retried by the next run."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline import errors
from tests.support.event_world import EventWorld
from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.integration


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def charge(world: EventWorld) -> None:
    run = world.container.metering.start("acme")
    run.started = True
    run.finish()


def thresholds(world: EventWorld) -> list[int]:
    published = world.publisher.published
    return sorted(int(e.detail["threshold_percent"]) for e in published if e.type == "usage.quota_threshold")


def test_concurrent_runs_announce_each_threshold_once(tmp_path: Path, receiver: Receiver) -> None:
    # Given a quota of 10 runs, 7 already charged
    world = EventWorld(tmp_path, receiver, max_runs=10)
    for _ in range(7):
        charge(world)
    assert thresholds(world) == []
    # When the last 3 runs finish at once (each of them sees 80 % or more)
    barrier = threading.Barrier(3)

    def run() -> None:
        barrier.wait()
        charge(world)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Then 80 % and 100 % were each announced once
    assert thresholds(world) == [80, 100]


def test_a_failed_announcement_is_retried_by_the_next_run(tmp_path: Path, receiver: Receiver) -> None:
    # Given a quota of 5 runs and a bus that fails once when the 80 % run is charged
    world = EventWorld(tmp_path, receiver, max_runs=5)
    for _ in range(3):
        charge(world)
    world.publisher.fail_next = 1
    charge(world)  # 4 of 5: the run still ends
    assert thresholds(world) == []
    # When the next run is charged
    charge(world)
    # Then both thresholds are announced (80 % late, once)
    assert thresholds(world) == [80, 100]


def test_an_unlimited_tenant_announces_nothing(tmp_path: Path, receiver: Receiver) -> None:
    world = EventWorld(tmp_path, receiver, max_runs=None)
    for _ in range(3):
        charge(world)
    assert thresholds(world) == []


def test_a_refused_run_retries_lost_announcements(tmp_path: Path, receiver: Receiver) -> None:
    # Given a quota of 2 runs whose last run's announcement failed
    world = EventWorld(tmp_path, receiver, max_runs=2)
    charge(world)
    world.publisher.fail_next = 1
    charge(world)
    assert thresholds(world) == []  # the 2nd run reached 80 % and 100 %: both announcements lost
    # When the next run is refused for the quota
    with pytest.raises(errors.QuotaExceeded):
        world.container.metering.start("acme")
    # Then it announces both thresholds
    assert thresholds(world) == [80, 100]
