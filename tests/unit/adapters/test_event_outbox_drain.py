"""The outbox's drain at a process's end is bounded: it starts no delivery after its seconds, and
waits no longer than them for a relay already running; what it leaves stays pending."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from ragline.adapters.embedded.events import SqliteEventOutbox
from ragline.domain.events import Event, quota_threshold


def events(n: int) -> list[Event]:
    now = datetime.now(UTC)
    return [
        quota_threshold(tenant_id=f"t{i}", period="2026-12", percent=80, limit=10, runs=8, time=now)
        for i in range(n)
    ]


def test_drain_delivers_what_is_due_in_publish_order(tmp_path: Path) -> None:
    got: list[str] = []
    outbox = SqliteEventOutbox(
        tmp_path / "o.sqlite", deliver=lambda e: got.append(e.tenant_id), background=False
    )
    outbox.publish(events(3))
    assert outbox.drain(5.0) == 3
    assert got == ["t0", "t1", "t2"]
    assert outbox.drain(5.0) == 0  # delivered once


def test_drain_starts_no_delivery_after_its_seconds(tmp_path: Path) -> None:
    started: list[str] = []

    def slow(event: Event) -> None:
        started.append(event.tenant_id)
        time.sleep(1.0)

    outbox = SqliteEventOutbox(tmp_path / "o.sqlite", deliver=slow, background=False)
    published = events(3)
    outbox.publish(published)
    assert outbox.drain(0.5) == 1  # the first began in time; after it, the deadline had passed
    assert started == ["t0"]
    assert [outbox.status(e.id) for e in published[1:]] == [("pending", 0), ("pending", 0)]


def test_drain_waits_no_longer_than_its_seconds_for_a_relay_in_progress(tmp_path: Path) -> None:
    release = threading.Event()
    outbox = SqliteEventOutbox(tmp_path / "o.sqlite", deliver=lambda e: release.wait(10), background=False)
    outbox.publish(events(1))
    relay = threading.Thread(target=outbox.relay)
    relay.start()
    try:
        time.sleep(0.2)  # the relay holds its delivery (for 10 s)
        began = time.monotonic()
        assert outbox.drain(0.3) == 0
        assert time.monotonic() - began < 5.0  # gave up on the lock, not waited for the relay
    finally:
        release.set()
        relay.join()
