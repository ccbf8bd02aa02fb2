"""When writes to an OpenSearch Serverless collection become searchable, and how the store waits.

A collection has no ``_refresh``: a write (or a delete) shows in searches only after the service's
own refresh, seconds later (AWS documented 60 s for vector collections at launch). So the store waits
for what it needs, bounded, by counting:

- each write and delete of this process leaves an :class:`Expectation` ("this query counts n");
  the next read from this process waits until every one holds (the port's read-your-writes);
- ``publish`` waits until every chunk recorded for its generation (in the fence item, by any
  process) is searchable, *then* raises the fence.

Past the bound, :class:`~ragline.errors.DependencyUnavailable` (retryable: the work is redelivered).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragline import errors

FIRST_DELAY = 0.05
MAX_DELAY = 1.0


@dataclass
class Expectation:
    """``query`` (over the chunk index) counts ``count`` hits once the write is searchable; ``then``
    runs after (a write's sweep of the copies it replaced)."""

    query: dict[str, Any]
    count: int
    then: Callable[[], None] | None = field(default=None, compare=False)


class PendingWrites:
    """Expectations of this process per index, not yet seen to hold. Process-wide on purpose, as the
    domain mode's unrefreshed set: two providers over one index see each other's writes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_index: dict[str, list[Expectation]] = {}

    def add(self, index: str, expectation: Expectation) -> None:
        with self._lock:
            self._by_index.setdefault(index, []).append(expectation)

    def take(self, index: str) -> list[Expectation]:
        with self._lock:
            return self._by_index.pop(index, [])

    def give_back(self, index: str, expectations: list[Expectation]) -> None:
        with self._lock:
            self._by_index[index] = expectations + self._by_index.get(index, [])


PENDING = PendingWrites()


def wait_until(
    holds: Callable[[], bool], *, timeout: float, what: str, sleep: Callable[[float], None] = time.sleep
) -> None:
    """Poll ``holds`` with exponential backoff (50 ms doubling to 1 s) until true or ``timeout``."""
    deadline = time.monotonic() + timeout
    delay = FIRST_DELAY
    while not holds():
        if time.monotonic() >= deadline:
            raise errors.DependencyUnavailable(
                f"OpenSearch Serverless: {what} not searchable after {timeout:g} s; retry later"
            )
        sleep(delay)
        delay = min(delay * 2, MAX_DELAY)
