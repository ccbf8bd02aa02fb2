"""Embedded :class:`~ragline.ports.UsageLedger`: a run id is charged once, in one SQLite transaction."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

from ragline import errors
from ragline.domain.models import RunUsage

_FIELDS = tuple(RunUsage.model_fields)
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, period TEXT NOT NULL,
    {", ".join(f"{f} INTEGER NOT NULL" for f in _FIELDS)}
);
CREATE TABLE IF NOT EXISTS counters (
    tenant_id TEXT NOT NULL, period TEXT NOT NULL, runs INTEGER NOT NULL DEFAULT 0,
    {", ".join(f"{f} INTEGER NOT NULL DEFAULT 0" for f in _FIELDS)},
    PRIMARY KEY (tenant_id, period)
);
"""


def current_period() -> str:
    return datetime.now(UTC).strftime("%Y-%m")


class SqliteUsageLedger:
    """``max_runs_per_period`` is the quota (``None`` = unlimited)."""

    def __init__(self, path: Path | str, *, max_runs_per_period: int | None = None) -> None:
        self.path = Path(path)
        self.max_runs = max_runs_per_period
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(_SCHEMA)
        return self._conn

    def reserve(self, tenant_id: str, run_id: str) -> None:
        if self.max_runs is None:
            return
        used = self.period_runs(tenant_id, current_period())
        if used >= self.max_runs:
            raise errors.QuotaExceeded(
                "run quota for this period is used up",
                limit=self.max_runs,
                used=used,
                period=current_period(),
            )

    def period_runs(self, tenant_id: str, period: str) -> int:
        with self._lock:
            row = (
                self._db()
                .execute("SELECT runs FROM counters WHERE tenant_id=? AND period=?", (tenant_id, period))
                .fetchone()
            )
        return int(row[0]) if row else 0

    def commit(self, tenant_id: str, run_id: str, usage: RunUsage) -> RunUsage:
        period = current_period()
        values = [getattr(usage, f) for f in _FIELDS]
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                existing = db.execute(
                    f"SELECT {', '.join(_FIELDS)} FROM runs WHERE run_id=?", (run_id,)
                ).fetchone()
                if existing is not None:
                    db.execute("ROLLBACK")
                    return RunUsage(**dict(zip(_FIELDS, existing, strict=True)))
                db.execute(
                    f"INSERT INTO runs VALUES (?,?,?,{','.join('?' * len(_FIELDS))})",
                    (run_id, tenant_id, period, *values),
                )
                db.execute(
                    f"INSERT INTO counters (tenant_id, period, runs, {', '.join(_FIELDS)})"
                    f" VALUES (?,?,1,{','.join('?' * len(_FIELDS))})"
                    " ON CONFLICT(tenant_id, period) DO UPDATE SET runs=runs+1, "
                    + ", ".join(f"{f}={f}+excluded.{f}" for f in _FIELDS),
                    (tenant_id, period, *values),
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return usage

    def period_usage(self, tenant_id: str, period: str) -> RunUsage:
        with self._lock:
            row = (
                self._db()
                .execute(
                    f"SELECT {', '.join(_FIELDS)} FROM counters WHERE tenant_id=? AND period=?",
                    (tenant_id, period),
                )
                .fetchone()
            )
        return RunUsage(**dict(zip(_FIELDS, row, strict=True))) if row else RunUsage()
