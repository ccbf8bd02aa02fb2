"""A run's recorded events: what a client that dropped its stream reads again (issue 42).

Every event a chat run produces is recorded in order under a sequence number (1, 2, …), which is the
SSE ``id`` the client saw: ``GET /v1/runs/{runId}/events`` with ``Last-Event-ID: n`` serves the events
after ``n``, then the live tail, until the run ends. The run's head says who may read it, where it
stands, and whether a cancel was asked for. Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

RunStatus = Literal["queued", "running", "completed", "failed", "cancelled"]
ENDED: frozenset[str] = frozenset({"completed", "failed", "cancelled"})

RUN_LOG_TTL_SECONDS = 24 * 3600
"""How long a run's events are kept after it started: a client resumes in seconds or minutes, and a
finished run can be replayed for a day (the DynamoDB TTL then removes it)."""
MAX_RUN_EVENTS = 20_000
"""Events recorded per run. A 5,000-token answer streams about 4,000 ``text`` events; past this,
events still reach the live client, but a resume after the cut gets ``events_not_kept`` and the final
event (which is always recorded)."""
MAX_RUN_LOG_BYTES = 4 * 1024 * 1024
"""Bytes of recorded events per run (measured in docs/benchmarks.md, "Run logs": a run's log is tens
of kilobytes); the same cut as :data:`MAX_RUN_EVENTS`."""
MAX_BATCH_BYTES = 300 * 1024
"""Bytes of events one stored batch holds (a DynamoDB item is at most 400 KB)."""
NOT_KEPT = "events_not_kept"
"""The warning a resume gets in place of events the run's bounds kept from its log."""


def owner_of(user_id: str | None) -> str:
    """Who a run or a conversation belongs to: the end user the request acted for, or ``""`` (the
    tenant's own key, with no end user)."""
    return f"user:{user_id}" if user_id else ""


@dataclass(frozen=True)
class RunHead:
    tenant_id: str
    run_id: str
    owner: str
    """:func:`owner_of` the request that started it: an end user reads only their own runs."""
    key_id: str
    """The key that started it: a key limited to some namespaces reads only the runs it started."""
    status: RunStatus
    created_at: float
    """Unix seconds."""
    expires_at: int
    background: bool = False
    cancel_requested: bool = False
    last_seq: int = 0
    """The last event recorded (0: none yet)."""

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    def with_status(self, status: RunStatus) -> RunHead:
        return replace(self, status=status)


@dataclass(frozen=True)
class LoggedEvent:
    seq: int
    type: str
    data: str
    """The event as the stream sent it (its JSON)."""


def batches(events: list[LoggedEvent], limit: int = MAX_BATCH_BYTES) -> list[list[LoggedEvent]]:
    """``events`` in order, cut into batches of at most ``limit`` bytes of data (one event each at
    least): what one stored item holds."""
    out: list[list[LoggedEvent]] = []
    size = 0
    for event in events:
        weight = len(event.data.encode()) + 32
        if not out or size + weight > limit:
            out.append([])
            size = 0
        out[-1].append(event)
        size += weight
    return out
