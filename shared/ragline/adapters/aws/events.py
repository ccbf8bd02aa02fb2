"""The production :class:`~ragline.ports.EventPublisher`: ``PutEvents`` to Ragline's custom bus.

``PutEvents`` answers 200 even when some entries were refused: ``FailedEntryCount`` says how many and
each refused entry carries an ``ErrorCode`` at its index. Those entries alone are sent again, with
backoff, up to ``attempts`` times; entries still refused raise ``DependencyUnavailable`` (the caller's
work is retried, and re-announces with the same event ids). At most 10 entries per call (the API's
limit). The request builder is pure (unit-tested as a dict).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from ragline import errors
from ragline.adapters.aws.errors import call
from ragline.adapters.boto import LazyClient
from ragline.domain.events import SOURCE, Event

PUT_EVENTS_LIMIT = 10


def entry(event: Event, bus_name: str) -> dict[str, Any]:
    """One ``PutEvents`` entry: the event's JSON as ``Detail``, its type as ``DetailType``."""
    return {
        "Source": SOURCE,
        "DetailType": event.type,
        "Detail": json.dumps(event.to_dict(), separators=(",", ":")),
        "EventBusName": bus_name,
        "Resources": [],
    }


class EventBridgePublisher:
    def __init__(
        self,
        bus_name: str,
        *,
        client: Any = None,
        region: str | None = None,
        attempts: int = 4,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.bus_name = bus_name
        self._client = LazyClient("events", client=client, region=region)
        self._attempts = max(1, attempts)
        self._sleep = sleep

    def publish(self, events: Sequence[Event]) -> None:
        for i in range(0, len(events), PUT_EVENTS_LIMIT):
            self._put([entry(e, self.bus_name) for e in events[i : i + PUT_EVENTS_LIMIT]])

    def _put(self, entries: list[dict[str, Any]]) -> None:
        codes: list[str] = []
        for attempt in range(self._attempts):
            if attempt:
                self._sleep(0.1 * 2 ** (attempt - 1))
            response = call(
                self._client(), "put_events", {"Entries": entries}, lambda exc: None, service="EventBridge"
            )
            if not response.get("FailedEntryCount"):
                return
            results = response.get("Entries") or []
            refused = [(e, r) for e, r in zip(entries, results, strict=False) if r.get("ErrorCode")]
            entries = [e for e, _ in refused]
            codes = sorted({str(r.get("ErrorCode")) for _, r in refused})
            if not entries:
                return
        raise errors.DependencyUnavailable(
            f"EventBridge refused {len(entries)} event(s)", service="EventBridge", action="put_events",
            aws_codes=codes,
        )  # fmt: skip
