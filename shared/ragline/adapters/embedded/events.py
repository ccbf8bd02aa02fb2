"""The embedded :class:`~ragline.ports.EventPublisher`: an SQLite outbox, relayed in process.

``publish`` inserts each event once (its id is the primary key: a re-announced change adds nothing)
and, with a ``deliver`` callback, wakes one relay thread. The relay hands each due event to
``deliver`` (the webhook delivery service); one that raises is retried with exponential backoff and
after ``max_attempts`` is parked as ``dead`` (the embedded dead-letter queue: ``dead()`` lists them,
``ragline serve``'s log says so). So ``ragline serve`` and the CLI deliver webhooks like the stack does,
with no servers; :meth:`relay` runs the same loop synchronously (tests), :meth:`drain` a bounded one
at a CLI command's end.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite
from ragline.domain.events import Event

_log = logging.getLogger(__name__)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    id TEXT PRIMARY KEY, body TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0, due REAL NOT NULL, last_error TEXT NOT NULL DEFAULT '',
    seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_due ON outbox (status, due, seq);
"""
MAX_ATTEMPTS = 5
BASE_DELAY = 1.0
"""Seconds before the first retry; doubled on each further one (1, 2, 4, 8 s)."""


@maps_sqlite_errors
class SqliteEventOutbox:
    def __init__(
        self,
        path: Path | str,
        *,
        deliver: Callable[[Event], object] | None = None,
        max_attempts: int = MAX_ATTEMPTS,
        base_delay: float = BASE_DELAY,
        clock: Callable[[], float] = time.time,
        background: bool = True,
    ) -> None:
        self.path = Path(path)
        self._deliver = deliver
        self._max_attempts = max_attempts
        self._base_delay = base_delay
        self._clock = clock
        self._background = background
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._relaying = threading.Lock()
        """One relay at a time (the thread's and an explicit :meth:`relay`)."""

    def _db(self) -> sqlite3.Connection:
        with self._lock:
            if self._conn is None:
                self._conn = open_sqlite(self.path, _SCHEMA)
            return self._conn

    def publish(self, events: Sequence[Event]) -> None:
        db = self._db()
        for event in events:
            db.execute(
                "INSERT OR IGNORE INTO outbox (id, body, due, seq) VALUES (?, ?, ?,"
                " (SELECT COALESCE(MAX(seq), 0) + 1 FROM outbox))",
                (event.id, json.dumps(event.to_dict()), self._clock()),
            )
        if self._deliver is not None and self._background:
            self._start()
            self._wake.set()

    def relay(self) -> int:
        """Deliver every due event once, in publish order; the number delivered."""
        if self._deliver is None:
            return 0
        with self._relaying:
            return self._relay_due()

    def drain(self, seconds: float) -> int:
        """:meth:`relay`, before the process exits (a CLI command's end): waits for the thread's relay
        in progress, then delivers what is due, starting no delivery after ``seconds``. What fails or
        is left stays in the outbox for the next process on this home; the number delivered."""
        if self._deliver is None:
            return 0
        until = time.monotonic() + seconds
        if not self._relaying.acquire(timeout=seconds):
            return 0
        try:
            return self._relay_due(until)
        finally:
            self._relaying.release()

    def _relay_due(self, until: float | None = None) -> int:
        assert self._deliver is not None
        delivered = 0
        db = self._db()
        rows = db.execute(
            "SELECT id, body, attempts FROM outbox WHERE status = 'pending' AND due <= ? ORDER BY seq",
            (self._clock(),),
        ).fetchall()
        for event_id, body, attempts in rows:
            if until is not None and time.monotonic() >= until:
                break
            try:
                self._deliver(Event.from_dict(json.loads(body)))
            except Exception as exc:  # recorded on the row: retried, then parked as dead
                tries = attempts + 1
                status = "dead" if tries >= self._max_attempts else "pending"
                due = self._clock() + self._base_delay * 2 ** (tries - 1)
                db.execute(
                    "UPDATE outbox SET attempts = ?, status = ?, due = ?, last_error = ? WHERE id = ?",
                    (tries, status, due, repr(exc)[:500], event_id),
                )
                if status == "dead":
                    _log.warning("event %s dead-lettered after %d attempts: %r", event_id, tries, exc)
                continue
            done = "UPDATE outbox SET status = 'delivered', attempts = ? WHERE id = ?"
            db.execute(done, (attempts + 1, event_id))
            delivered += 1
        return delivered

    def status(self, event_id: str) -> tuple[str, int] | None:
        row = self._db().execute("SELECT status, attempts FROM outbox WHERE id = ?", (event_id,)).fetchone()
        return (str(row[0]), int(row[1])) if row else None

    def dead(self) -> list[str]:
        return [r[0] for r in self._db().execute("SELECT id FROM outbox WHERE status = 'dead' ORDER BY seq")]

    def next_due(self) -> float | None:
        row = self._db().execute("SELECT MIN(due) FROM outbox WHERE status = 'pending'").fetchone()
        return float(row[0]) if row and row[0] is not None else None

    # -- the relay thread ---------------------------------------------------------------------------
    def _start(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="ragline-events", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                self.relay()
                due = self.next_due()
            except Exception:  # the relay keeps running; the event stays in the outbox
                _log.exception("event relay failed")
                due = self._clock() + self._base_delay
            wait = None if due is None else max(0.05, due - self._clock())
            self._wake.wait(timeout=wait)
            self._wake.clear()
