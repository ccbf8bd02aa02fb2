""":class:`~ragline.ports.StepQueue` in process: one background thread runs the steps in order (a
local server's reindex or source sync), a delayed step waits on a timer. ``run`` runs one step."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

from ragline import errors
from ragline.domain.generations import ReindexStep
from ragline.domain.sources import SyncStep

logger = logging.getLogger(__name__)
Step = ReindexStep | SyncStep


RETRIED: tuple[type[errors.RaglineError], ...] = (
    errors.StepBusy,
    errors.DocumentBusy,
    errors.WorkerOutOfTime,
)
"""A step failing so comes back, as an SQS message would (its rebuild waits on something in flight)."""
RETRY_SECONDS = 5.0
"""How long such a step waits before it runs again (in-process: the thread, the CLI)."""


class ThreadStepQueue:
    def __init__(self, run: Callable[[Step], None], *, retry_seconds: float = RETRY_SECONDS) -> None:
        self._run = run
        self._retry_seconds = retry_seconds
        self._steps: queue.Queue[Step] = queue.Queue()
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None

    def submit(self, step: Step, *, delay_seconds: float = 0.0) -> None:
        with self._lock:
            if self._worker is None:
                self._worker = threading.Thread(target=self._loop, name="ragline-steps", daemon=True)
                self._worker.start()
        if delay_seconds > 0:
            timer = threading.Timer(delay_seconds, self._steps.put, args=(step,))
            timer.daemon = True
            timer.start()
        else:
            self._steps.put(step)

    def _loop(self) -> None:
        while True:
            step = self._steps.get()
            try:
                self._run(step)
            except RETRIED as exc:
                logger.info("step retried", extra={"step": step.body(), "reason": exc.message})
                self.submit(step, delay_seconds=self._retry_seconds)
            except (
                Exception
            ):  # the rebuild's or the sync's state says what failed; the thread serves the next
                logger.exception("step failed", extra={"step": step.body()})


class InlineStepQueue:
    """Steps run by whoever drains it (the CLI's reindex command, tests): nothing runs on its own."""

    def __init__(self) -> None:
        self.steps: list[tuple[Step, float]] = []

    def submit(self, step: Step, *, delay_seconds: float = 0.0) -> None:
        self.steps.append((step, delay_seconds))

    def take(self) -> tuple[Step, float] | None:
        return self.steps.pop(0) if self.steps else None
