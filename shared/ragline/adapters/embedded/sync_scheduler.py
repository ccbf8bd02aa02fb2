"""Embedded sync schedules: a table in ``sources.sqlite`` that ``ragline serve``'s loop reads (:meth:`due`)
and advances, so a local server syncs each scheduled source in process."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite
from ragline.domain.sources import SyncStep

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sync_schedules (
    tenant_id TEXT NOT NULL, namespace_id TEXT NOT NULL, source_id TEXT NOT NULL,
    every_seconds REAL NOT NULL, next_at REAL NOT NULL,
    PRIMARY KEY (tenant_id, namespace_id, source_id)
);
"""


@maps_sqlite_errors
class SqliteSyncScheduler:
    def __init__(self, path: Path | str, *, clock: Callable[[], float] = time.time) -> None:
        self._path = Path(path)
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _run(self, sql: str, params: tuple[object, ...] = ()) -> tuple[list[tuple[object, ...]], int]:
        with self._lock:
            if self._conn is None:
                self._conn = open_sqlite(self._path, _SCHEMA)
            cursor = self._conn.execute(sql, params)
            return cursor.fetchall(), cursor.rowcount

    def put(self, tenant_id: str, namespace_id: str, source_id: str, every_minutes: int) -> None:
        every = every_minutes * 60.0
        self._run(
            "INSERT OR REPLACE INTO sync_schedules VALUES (?, ?, ?, ?, ?)",
            (tenant_id, namespace_id, source_id, every, self._clock() + every),
        )

    def delete(self, tenant_id: str, namespace_id: str, source_id: str) -> None:
        self._run(
            "DELETE FROM sync_schedules WHERE tenant_id = ? AND namespace_id = ? AND source_id = ?",
            (tenant_id, namespace_id, source_id),
        )

    def purge_tenant(self, tenant_id: str) -> int:
        _, gone = self._run("DELETE FROM sync_schedules WHERE tenant_id = ?", (tenant_id,))
        return gone

    def due(self) -> list[SyncStep]:
        """The first steps of the syncs whose time has come; each schedule moves to its next time."""
        now = self._clock()
        rows, _ = self._run(
            "SELECT tenant_id, namespace_id, source_id, every_seconds FROM sync_schedules WHERE next_at <= ?",
            (now,),
        )
        steps = []
        for tenant_id, namespace_id, source_id, every in rows:
            _, moved = self._run(
                "UPDATE sync_schedules SET next_at = ?"
                " WHERE tenant_id = ? AND namespace_id = ? AND source_id = ? AND next_at <= ?",
                (now + float(every), tenant_id, namespace_id, source_id, now),  # type: ignore[arg-type]
            )
            if moved:
                steps.append(SyncStep(str(tenant_id), str(namespace_id), str(source_id)))
        return steps
