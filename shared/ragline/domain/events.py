"""Document and usage events: what changed, for whom, once.

An event's ``id`` is derived from the change itself, never drawn at random: the same change —
reported again by a redelivered SQS message, a retried handler or two racing runs — always carries the
same id, so every consumer (the delivery function's per-subscription record, a receiver) dedupes on
it. Standard library only; the delivery signature is :mod:`ragline.domain.signatures`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, get_args

EventType = Literal[
    "document.indexed",
    "document.failed",
    "document.deleted",
    "namespace.reindexed",
    "usage.quota_threshold",
    "run.completed",
    "run.failed",
    "run.cancelled",
]
EVENT_TYPES: tuple[str, ...] = get_args(EventType)
SOURCE = "ragline"
"""The EventBridge ``Source`` of every event (the bus rule matches on it)."""
QUOTA_THRESHOLDS = (80, 100)
"""Percentages of the tenant's monthly run quota announced, each once per period."""


def event_id(event_type: str, tenant_id: str, *parts: object) -> str:
    """``evt_`` + 32 hex digits of SHA-256 over the type, the tenant and the change's own parts."""
    text = "\x1f".join([event_type, tenant_id, *(str(p) for p in parts)])
    return "evt_" + hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Event:
    """One change. ``time`` is when it was recorded as the announcer read it (a document's record
    ``updated_at``); a re-announcement may carry a later ``time``: the ``id`` is what identifies it."""

    id: str
    type: str
    tenant_id: str
    time: datetime
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON body a webhook receives (also the EventBridge entry's ``Detail``)."""
        return {
            "id": self.id,
            "type": self.type,
            "tenant": self.tenant_id,
            "time": self.time.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        return cls(
            id=str(data["id"]),
            type=str(data["type"]),
            tenant_id=str(data["tenant"]),
            time=datetime.fromisoformat(str(data["time"]).replace("Z", "+00:00")),
            detail=dict(data.get("detail") or {}),
        )


def document_event(
    event_type: str,
    *,
    tenant_id: str,
    namespace_id: str,
    document_id: str,
    change: str,
    generation: int,
    time: datetime,
    extra: dict[str, Any] | None = None,
) -> Event:
    """A document's change; ``change`` names the event that made it (its S3 sequencer, or
    ``local-<generation>`` for a local write) — the same on every redelivery of that event."""
    detail: dict[str, Any] = {
        "namespace": namespace_id,
        "document_id": document_id,
        "change": change,
        "generation": generation,
        **(extra or {}),
    }
    reason = (extra or {}).get("reason", {})
    code = reason.get("code", "") if isinstance(reason, dict) else ""
    return Event(
        event_id(event_type, tenant_id, namespace_id, document_id, change, code),
        event_type,
        tenant_id,
        time,
        detail,
    )


def namespace_reindexed(
    *, tenant_id: str, namespace_id: str, generation: int, model: str, documents: int, time: datetime
) -> Event:
    """A reindex switched the namespace to ``generation`` (one switch per generation)."""
    detail = {"namespace": namespace_id, "generation": generation, "model": model, "documents": documents}
    return Event(
        event_id("namespace.reindexed", tenant_id, namespace_id, generation),
        "namespace.reindexed",
        tenant_id,
        time,
        detail,
    )


def quota_threshold(
    *, tenant_id: str, period: str, percent: int, limit: int, runs: int, time: datetime
) -> Event:
    """The tenant's runs in ``period`` reached ``percent`` % of its quota ``limit``."""
    detail = {"period": period, "threshold_percent": percent, "limit": limit, "runs": runs}
    return Event(
        event_id("usage.quota_threshold", tenant_id, period, percent),
        "usage.quota_threshold",
        tenant_id,
        time,
        detail,
    )


def thresholds_reached(runs: int, limit: int | None) -> list[int]:
    """The :data:`QUOTA_THRESHOLDS` that ``runs`` of ``limit`` reach (none without a limit)."""
    if not limit or limit <= 0:
        return []
    return [p for p in QUOTA_THRESHOLDS if runs * 100 >= p * limit]


def run_ended(*, tenant_id: str, run_id: str, status: str, exit_reason: str, time: float) -> Event:
    """A background run ended (``status``: completed, failed or cancelled): one event per run."""
    kind = f"run.{status}"
    detail = {"run_id": run_id, "status": status, "exit_reason": exit_reason}
    at = datetime.fromtimestamp(time, UTC)
    return Event(event_id(kind, tenant_id, run_id), kind, tenant_id, at, detail)
