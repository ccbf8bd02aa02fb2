""":class:`~ragline.ports.RunQueue` in process: each background run on a thread of its own (a local
server's; at most :data:`WORKERS` at once, the others wait their turn)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

logger = logging.getLogger(__name__)
WORKERS = 4


class ThreadRunQueue:
    def __init__(self, work: Callable[[str, str, str], object]) -> None:
        self._work = work
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def submit(self, tenant_id: str, run_id: str, message: str) -> None:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="ragline-runs")
            self._pool.submit(self._one, tenant_id, run_id, message)

    def _one(self, tenant_id: str, run_id: str, message: str) -> None:
        try:
            self._work(tenant_id, run_id, message)
        except Exception:  # the run's own log says what failed; the pool serves the next
            logger.exception("background run failed", extra={"run_id": run_id})

    def drain(self) -> None:
        """Wait for every queued run to end (tests, a server shutting down)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
