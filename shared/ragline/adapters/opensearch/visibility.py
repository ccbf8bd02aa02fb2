"""When OpenSearch writes become searchable: the refresh policies, and this process's unrefreshed indexes.

A refresh makes every write so far searchable by writing a new Lucene segment. Refreshing after every
bulk request (``true``) was the largest cost of the write path: one small segment per request, each
later merged again with its HNSW graph rebuilt. ``on_read`` (the default) keeps the guarantees callers
rely on with far fewer refreshes:

- a write is visible to the next read *from the same process* (the port's read-your-writes): writes
  only mark the index here, and the next search, count, neighbours or vectors read refreshes first;
- a version is visible to *every* process once ``publish`` returns: publish refreshes before its sweep
  (which must see every chunk written so far) and again if the sweep deleted anything.

``true`` and ``wait_for`` are passed to every write request as before; ``false`` refreshes only before a
publish's sweep or a discard (bulk loads that refresh once at the end).
"""

from __future__ import annotations

import threading
from typing import Literal

Refresh = Literal["on_read", "true", "wait_for", "false"]


class UnrefreshedIndexes:
    """Indexes this process wrote to and has not refreshed since. Process-wide on purpose: the promise
    is per process, and two providers (or two clients) over one index must see each other's writes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._names: set[str] = set()

    def mark(self, index: str) -> None:
        with self._lock:
            self._names.add(index)

    def claim(self, index: str) -> bool:
        """True, and forgotten, when the index holds writes of this process not yet refreshed. The
        caller refreshes *after* claiming, so a write marked meanwhile is refreshed by the next reader."""
        with self._lock:
            if index in self._names:
                self._names.discard(index)
                return True
            return False


UNREFRESHED = UnrefreshedIndexes()
