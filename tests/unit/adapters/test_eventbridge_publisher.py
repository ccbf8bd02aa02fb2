"""PutEvents: refused entries (``FailedEntryCount``) are sent again alone, then the publish fails."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.aws.events import EventBridgePublisher, entry
from ragline.domain.events import quota_threshold

T = datetime(2026, 3, 1, tzinfo=UTC)
EVENTS = [
    quota_threshold(tenant_id=f"t{i}", period="2026-03", percent=80, limit=10, runs=8, time=T)
    for i in range(12)
]


class FakeEvents:
    """Refuses the entries whose tenant is in ``refuse`` (each for ``times`` calls)."""

    def __init__(self, refuse: set[str], times: int) -> None:
        self.refuse, self.times, self.calls = refuse, times, []  # type: ignore[var-annotated]

    def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        self.calls.append([json.loads(e["Detail"])["tenant"] for e in Entries])
        refusing = len(self.calls) <= self.times
        results = [
            {"ErrorCode": "InternalFailure"} if refusing and json.loads(e["Detail"])["tenant"] in self.refuse
            else {"EventId": "x"}
            for e in Entries
        ]  # fmt: skip
        return {"FailedEntryCount": sum("ErrorCode" in r for r in results), "Entries": results}


def test_an_entry_is_the_event_as_detail_on_the_bus() -> None:
    made = entry(EVENTS[0], "ragline-dev-events")
    assert made["Source"] == "ragline" and made["DetailType"] == "usage.quota_threshold"
    assert made["EventBusName"] == "ragline-dev-events"
    assert json.loads(made["Detail"]) == EVENTS[0].to_dict()


def test_batches_of_ten_and_refused_entries_retried_alone() -> None:
    client = FakeEvents({"t3"}, times=1)
    EventBridgePublisher("bus", client=client, sleep=lambda s: None).publish(EVENTS)
    assert [len(c) for c in client.calls] == [10, 1, 2]
    assert client.calls[1] == ["t3"]


def test_entries_still_refused_fail_the_publish() -> None:
    client = FakeEvents({"t1"}, times=99)
    publisher = EventBridgePublisher("bus", client=client, attempts=3, sleep=lambda s: None)
    with pytest.raises(errors.DependencyUnavailable):
        publisher.publish(EVENTS[:2])
    assert client.calls == [["t0", "t1"], ["t1"], ["t1"]]
