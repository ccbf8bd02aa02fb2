"""Embedded :class:`~ragline.ports.RateLimiter`: token buckets and run slots in one SQLite file.

Every operation is one ``BEGIN IMMEDIATE`` transaction (SQLite's write lock taken before the read),
so a bucket's read-decide-write is serial across threads and processes sharing the file: the answers
are :func:`~ragline.domain.limits.admit`'s in the order the transactions took the lock.
"""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite
from ragline.domain.limits import MICROS, Bucket, Rate, admit, now_micros

_SCHEMA = """
CREATE TABLE IF NOT EXISTS buckets (
    tenant_id TEXT NOT NULL, bucket TEXT NOT NULL, tat INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, bucket)
);
CREATE TABLE IF NOT EXISTS slots (
    tenant_id TEXT NOT NULL, bucket TEXT NOT NULL, slot INTEGER NOT NULL,
    lease_id TEXT NOT NULL, expires INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, bucket, slot)
);
CREATE TABLE IF NOT EXISTS refusals (
    tenant_id TEXT NOT NULL, period TEXT NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, period)
);
"""


@maps_sqlite_errors
class SqliteRateLimiter:
    """``clock`` (microseconds) is injectable: tests move time by hand."""

    def __init__(self, path: Path | str, *, clock: Callable[[], int] = now_micros) -> None:
        self.path = Path(path)
        self.clock = clock
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._conn is None:
                self._conn = open_sqlite(self.path, _SCHEMA, timeout=10.0)
            db = self._conn
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def take(self, bucket: Bucket, rate: Rate) -> int:
        with self._transaction() as db:
            row = db.execute(
                "SELECT tat FROM buckets WHERE tenant_id=? AND bucket=?", (bucket.tenant_id, bucket.name)
            ).fetchone()
            answer = admit(row[0] if row else None, self.clock(), rate)
            if answer.admitted:
                db.execute(
                    "INSERT INTO buckets VALUES (?,?,?) ON CONFLICT(tenant_id, bucket) DO UPDATE"
                    " SET tat=excluded.tat",
                    (bucket.tenant_id, bucket.name, answer.tat),
                )
            return answer.wait

    def lease(self, bucket: Bucket, slots: int, seconds: float) -> str | None:
        now = self.clock()
        with self._transaction() as db:
            live = {
                slot
                for (slot,) in db.execute(
                    "SELECT slot FROM slots WHERE tenant_id=? AND bucket=? AND expires>?",
                    (bucket.tenant_id, bucket.name, now),
                )
            }
            free = [slot for slot in range(slots) if slot not in live]
            if not free:
                return None
            lease_id = uuid.uuid4().hex
            db.execute(
                "INSERT OR REPLACE INTO slots VALUES (?,?,?,?,?)",
                (bucket.tenant_id, bucket.name, free[0], lease_id, now + round(seconds * MICROS)),
            )
            return lease_id

    def release(self, bucket: Bucket, lease_id: str) -> None:
        with self._transaction() as db:
            db.execute(
                "DELETE FROM slots WHERE tenant_id=? AND bucket=? AND lease_id=?",
                (bucket.tenant_id, bucket.name, lease_id),
            )

    def count_refusal(self, tenant_id: str, period: str) -> None:
        with self._transaction() as db:
            db.execute(
                "INSERT INTO refusals VALUES (?,?,1) ON CONFLICT(tenant_id, period) DO UPDATE"
                " SET count=count+1",
                (tenant_id, period),
            )

    def refusals(self, tenant_id: str, period: str) -> int:
        with self._transaction() as db:
            row = db.execute(
                "SELECT count FROM refusals WHERE tenant_id=? AND period=?", (tenant_id, period)
            ).fetchone()
        return int(row[0]) if row else 0

    def purge_tenant(self, tenant_id: str) -> int:
        with self._transaction() as db:
            return sum(
                db.execute(f"DELETE FROM {table} WHERE tenant_id=?", (tenant_id,)).rowcount
                for table in ("buckets", "slots", "refusals")
            )
