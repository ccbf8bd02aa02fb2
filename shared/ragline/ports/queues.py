"""Work run later, off the request: a reindex's or a sync's steps, and background chat runs.

Part of :mod:`ragline.ports` (which re-exports every port); the docstrings are the contracts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: importing the ports must stay cheap (cold starts)
    from ragline.domain.generations import ReindexStep
    from ragline.domain.sources import SyncStep


class StepQueue(Protocol):
    """Runs a reindex's or a source sync's steps later, one at a time per rebuild or sync (each step
    queues its successor): the ingestion queue on AWS, a background thread in a local server, the
    CLI's own loop."""

    def submit(self, step: ReindexStep | SyncStep, *, delay_seconds: float = 0.0) -> None:
        """Queue ``step`` to run after ``delay_seconds`` (at least; SQS caps a delay at 900 s)."""
        ...


@runtime_checkable
class RunQueue(Protocol):
    """Runs a background chat run without its client: a thread of this process locally, the runs
    queue (drained by the chat function) on AWS."""

    def submit(self, tenant_id: str, run_id: str, message: str) -> None:
        """Queue the run; ``message`` is what the worker needs to run it (see
        :mod:`ragline.services.background`)."""
        ...
