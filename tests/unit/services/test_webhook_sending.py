"""A duplicate message delivered at the same moment by two workers POSTs each receiver once."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.embedded.webhooks import SqliteOnceMarks, SqliteWebhookStore
from ragline.domain.events import Event
from ragline.domain.webhooks import Subscription
from ragline.services.webhooks import WebhookDelivery

pytestmark = pytest.mark.unit
EVENT = Event(id="evt_1", type="document.indexed", tenant_id="acme", time=datetime(2026, 3, 1, tzinfo=UTC))


class SlowReceiver:
    """Answers each POST after ``seconds`` with the next status of ``statuses`` (then 200)."""

    def __init__(self, seconds: float, statuses: tuple[int, ...] = ()) -> None:
        self.seconds = seconds
        self.statuses = list(statuses)
        self.posts = 0
        self._lock = threading.Lock()

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        with self._lock:
            self.posts += 1
            status = self.statuses.pop(0) if self.statuses else 200
        time.sleep(self.seconds)
        return status

    def close(self) -> None:
        pass


def delivery(tmp_path: Path, receiver: SlowReceiver) -> WebhookDelivery:
    store = SqliteWebhookStore(tmp_path / "events.sqlite")
    store.put(Subscription(id="wh_1", tenant_id="acme", url="https://hooks.example.com/r", secret="s"))
    return WebhookDelivery(store, SqliteOnceMarks(tmp_path / "events.sqlite"), receiver)


def test_two_workers_with_the_same_event_post_it_once(tmp_path: Path) -> None:
    receiver = SlowReceiver(0.3)
    worker = delivery(tmp_path, receiver)
    sent: list[int] = []
    barrier = threading.Barrier(2)

    def work() -> None:
        barrier.wait()
        sent.append(worker.deliver(EVENT))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert receiver.posts == 1 and sorted(sent) == [0, 1]
    assert worker.deliver(EVENT) == 0 and receiver.posts == 1  # a later redelivery: already taken


def test_a_failed_send_is_not_held_against_the_retry(tmp_path: Path) -> None:
    receiver = SlowReceiver(0.0, statuses=(503,))
    worker = delivery(tmp_path, receiver)
    with pytest.raises(errors.DependencyUnavailable) as failed:
        worker.deliver(EVENT)
    assert failed.value.details["failures"] == {"wh_1": "http_503"}
    assert worker.deliver(EVENT) == 1 and receiver.posts == 2


class MeetingReceivers:
    """Each POST answers 200 only once ``count`` POSTs are in flight together: POSTs made one after
    another never meet (the first gives up after 5 s and every one answers 500)."""

    def __init__(self, count: int) -> None:
        self.barrier = threading.Barrier(count, timeout=5)

    def post(self, url: str, body: bytes, headers: dict[str, str]) -> int:
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            return 500
        return 200

    def close(self) -> None:
        pass


def test_an_events_webhooks_are_sent_at_once_so_a_slow_one_delays_no_other(tmp_path: Path) -> None:
    store = SqliteWebhookStore(tmp_path / "events.sqlite")
    for n in range(3):
        store.put(
            Subscription(id=f"wh_{n}", tenant_id="acme", url=f"https://hooks.example.com/{n}", secret="s")
        )
    worker = WebhookDelivery(store, SqliteOnceMarks(tmp_path / "events.sqlite"), MeetingReceivers(3))
    assert worker.deliver(EVENT) == 3
