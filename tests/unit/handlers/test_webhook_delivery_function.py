"""The delivery function: a failed delivery is reported for SQS to retry, a message that is no event is
dropped (no redelivery can fix it), and an EventBridge envelope or a bare event both read."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ragline import errors
from ragline.cli.serve import LambdaContext
from ragline.config import Settings
from ragline.domain.events import Event, quota_threshold
from ragline.wiring import Container
from tests.support.lambda_harness import load_handler

pytestmark = pytest.mark.unit
HANDLER = load_handler("webhooks")
T = datetime(2026, 3, 1, tzinfo=UTC)
EVENT = quota_threshold(tenant_id="acme", period="2026-03", percent=80, limit=10, runs=8,
                        time=T)  # fmt: skip


class FakeDelivery:
    def __init__(self, failing: set[str]) -> None:
        self.failing, self.seen = failing, []  # type: ignore[var-annotated]

    def deliver(self, event: Event) -> int:
        self.seen.append(event.id)
        if event.tenant_id in self.failing:
            raise errors.DependencyUnavailable("a receiver failed", failures={"wh_1": "http_500"})
        return 1


def run(tmp_path: Path, delivery: FakeDelivery, bodies: list[str]) -> set[str]:
    container = Container(Settings(home=tmp_path), webhook_delivery=delivery)
    records = [{"messageId": f"m{i}", "body": b} for i, b in enumerate(bodies)]
    result = HANDLER.lambda_handler({"Records": records}, LambdaContext(), container=container)
    return {f["itemIdentifier"] for f in result["batchItemFailures"]}


def test_envelopes_and_bare_events_are_delivered(tmp_path: Path) -> None:
    delivery = FakeDelivery(set())
    envelope = {"version": "0", "detail-type": EVENT.type, "source": "ragline", "detail": EVENT.to_dict()}
    assert run(tmp_path, delivery, [json.dumps(envelope), json.dumps(EVENT.to_dict())]) == set()
    assert delivery.seen == [EVENT.id, EVENT.id]


def test_a_failed_delivery_is_retried_and_garbage_is_dropped(tmp_path: Path) -> None:
    other = quota_threshold(
        tenant_id="globex", period="2026-03", percent=80, limit=10, runs=8, time=EVENT.time
    )
    delivery = FakeDelivery({"globex"})
    bodies = [json.dumps(EVENT.to_dict()), json.dumps(other.to_dict()), "not json", json.dumps({"id": "x"})]
    assert run(tmp_path, delivery, bodies) == {"m1"}
    assert sorted(delivery.seen) == sorted([EVENT.id, other.id])  # records run at once: any order


class MeetingDelivery(FakeDelivery):
    """Delivers only once every tenant's record is being delivered at the same moment (records handled
    one after another never meet: the first gives up after 5 s)."""

    def __init__(self, count: int) -> None:
        super().__init__(set())
        self.barrier = threading.Barrier(count, timeout=5)

    def deliver(self, event: Event) -> int:
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            raise errors.DependencyUnavailable("the receiver hung", failures={"wh_1": "timeout"}) from None
        return super().deliver(event)


def test_a_batchs_records_are_delivered_at_once_so_one_tenants_slow_receiver_holds_no_other(
    tmp_path: Path,
) -> None:
    events = [
        quota_threshold(tenant_id=t, period="2026-03", percent=80, limit=10, runs=8, time=T)
        for t in ("acme", "globex", "initech")
    ]
    delivery = MeetingDelivery(len(events))
    assert run(tmp_path, delivery, [json.dumps(e.to_dict()) for e in events]) == set()
    assert sorted(delivery.seen) == sorted(e.id for e in events)
