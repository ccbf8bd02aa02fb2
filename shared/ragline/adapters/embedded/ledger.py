"""Embedded :class:`~ragline.ports.UsageLedger`: a run is charged once, in one SQLite transaction.

``charges`` holds each run's first charge, keyed by (tenant, run id); ``counters`` the per-period sums;
``markers`` each run id's request fingerprint, state and recorded result; ``ingest_entries`` each
recorded document version (keyed by tenant and entry id) and ``ingest_counters`` their per-period sums
(apart from the runs' counters: ingestion is not a run). ``reserve`` reads the marker
and the counter and writes the ``in_progress`` marker inside one ``BEGIN IMMEDIATE`` transaction (so of
concurrent reservations one wins); ``commit`` inserts the charge, adds it to the counter and completes
the marker inside another, so a second commit of the run (another thread, another process on the same
file) finds the charge and returns it. ``complete_uncharged`` completes the marker alone (no charge,
no counter): a ``completed`` marker without a charge is a run that did no work. The quota is only
checked by ``reserve``: a commit over quota is recorded anyway (logged).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ragline.adapters.embedded.sqlite import maps_sqlite_errors
from ragline.domain.billing import (
    CompletedRun,
    RunMarker,
    check_quota,
    check_replay,
    period_of,
    quota_reached,
)
from ragline.domain.models import IngestUsage, RunUsage

_log = logging.getLogger(__name__)

_FIELDS = tuple(RunUsage.model_fields)
_COLUMNS = ", ".join(_FIELDS)
_INGEST_FIELDS = tuple(IngestUsage.model_fields)
_INGEST_COLUMNS = ", ".join(_INGEST_FIELDS)
_COMPLETE_MARKER = (
    "INSERT INTO markers (tenant_id, run_id, state, fingerprint, started_at, result)"
    " VALUES (?,?,'completed',?,?,?) ON CONFLICT(tenant_id, run_id) DO UPDATE SET"
    " state='completed', result=excluded.result"
)
"""A run's marker completed with its result (charged or not: the charge is a row of its own)."""
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS charges (
    tenant_id TEXT NOT NULL, run_id TEXT NOT NULL, period TEXT NOT NULL,
    {", ".join(f"{f} INTEGER NOT NULL" for f in _FIELDS)},
    PRIMARY KEY (tenant_id, run_id)
);
CREATE TABLE IF NOT EXISTS counters (
    tenant_id TEXT NOT NULL, period TEXT NOT NULL, runs INTEGER NOT NULL DEFAULT 0,
    {", ".join(f"{f} INTEGER NOT NULL DEFAULT 0" for f in _FIELDS)},
    PRIMARY KEY (tenant_id, period)
);
CREATE TABLE IF NOT EXISTS markers (
    tenant_id TEXT NOT NULL, run_id TEXT NOT NULL, state TEXT NOT NULL, fingerprint TEXT NOT NULL,
    started_at TEXT NOT NULL, result TEXT,
    PRIMARY KEY (tenant_id, run_id)
);
CREATE TABLE IF NOT EXISTS ingest_entries (
    tenant_id TEXT NOT NULL, entry_id TEXT NOT NULL, period TEXT NOT NULL,
    {", ".join(f"{f} INTEGER NOT NULL" for f in _INGEST_FIELDS)},
    PRIMARY KEY (tenant_id, entry_id)
);
CREATE TABLE IF NOT EXISTS ingest_counters (
    tenant_id TEXT NOT NULL, period TEXT NOT NULL,
    {", ".join(f"{f} INTEGER NOT NULL DEFAULT 0" for f in _INGEST_FIELDS)},
    PRIMARY KEY (tenant_id, period)
);
"""


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring a file written by an older Ragline up to :data:`_SCHEMA`: usage counters added since
    (e.g. ``llm_cached_input_tokens``) become columns worth 0; charges kept in ``runs`` (keyed by run
    id alone, before they were keyed by tenant) move to ``charges``."""
    for table in ("charges", "counters"):
        have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        for field in _FIELDS:
            if field not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {field} INTEGER NOT NULL DEFAULT 0")
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='runs'").fetchone():
        have = {row[1] for row in conn.execute("PRAGMA table_info(runs)")}
        values = ", ".join(f if f in have else "0" for f in _FIELDS)
        conn.execute(
            f"INSERT OR IGNORE INTO charges (tenant_id, run_id, period, {_COLUMNS})"
            f" SELECT tenant_id, run_id, period, {values} FROM runs"
        )
        conn.execute("DROP TABLE runs")


def _utcnow() -> datetime:
    return datetime.now(UTC)


@maps_sqlite_errors
class SqliteUsageLedger:
    """``clock`` is injectable so tests can age an ``in_progress`` marker past ``STALE_AFTER``."""

    def __init__(self, path: Path | str, *, clock: Callable[[], datetime] = _utcnow) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._clock = clock

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                str(self.path), timeout=10.0, check_same_thread=False, isolation_level=None
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("BEGIN IMMEDIATE")
            try:
                # One statement at a time: executescript() would COMMIT this transaction first.
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                _migrate(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                conn.close()
                raise
            self._conn = conn
        return self._conn

    def reserve(
        self, tenant_id: str, run_id: str, limit: int | None = None, fingerprint: str = ""
    ) -> CompletedRun | None:
        now = self._clock()
        period = period_of(now)
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                marker = self._marker(db, tenant_id, run_id)
                if marker is not None and (replay := check_replay(marker, fingerprint, now)) is not None:
                    db.execute("ROLLBACK")
                    return replay
                if limit is not None:
                    row = db.execute(
                        "SELECT runs FROM counters WHERE tenant_id=? AND period=?", (tenant_id, period)
                    ).fetchone()
                    check_quota(int(row[0]) if row else 0, limit, period)
                db.execute(
                    "INSERT INTO markers (tenant_id, run_id, state, fingerprint, started_at)"
                    " VALUES (?,?,'in_progress',?,?) ON CONFLICT(tenant_id, run_id) DO UPDATE SET"
                    " state='in_progress', fingerprint=excluded.fingerprint,"
                    " started_at=excluded.started_at, result=NULL",
                    (tenant_id, run_id, fingerprint, now.isoformat()),
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return None

    @staticmethod
    def _marker(db: sqlite3.Connection, tenant_id: str, run_id: str) -> RunMarker | None:
        """The run's marker; a charge without one (files from before markers) reads as completed, a
        ``completed`` marker without a charge is a run completed uncharged."""
        charge = db.execute(
            f"SELECT {_COLUMNS} FROM charges WHERE tenant_id=? AND run_id=?", (tenant_id, run_id)
        ).fetchone()
        usage = RunUsage(**dict(zip(_FIELDS, charge, strict=True))) if charge else None
        row = db.execute(
            "SELECT state, fingerprint, started_at, result FROM markers WHERE tenant_id=? AND run_id=?",
            (tenant_id, run_id),
        ).fetchone()
        if row is None:
            if usage is None:
                return None
            return RunMarker(state="completed", fingerprint="", started_at=datetime.min, usage=usage)
        started = datetime.fromisoformat(row[2])
        if usage is None and row[0] == "completed":
            return RunMarker("completed", row[1], started, RunUsage(), row[3], charged=False)
        return RunMarker(
            state="completed" if usage is not None else "in_progress",
            fingerprint=row[1],
            started_at=started,
            usage=usage,
            result=row[3],
        )

    def period_runs(self, tenant_id: str, period: str) -> int:
        with self._lock:
            row = (
                self._db()
                .execute("SELECT runs FROM counters WHERE tenant_id=? AND period=?", (tenant_id, period))
                .fetchone()
            )
        return int(row[0]) if row else 0

    def commit(
        self,
        tenant_id: str,
        run_id: str,
        usage: RunUsage,
        limit: int | None = None,
        result: str | None = None,
        fingerprint: str = "",
    ) -> RunUsage:
        values = [getattr(usage, f) for f in _FIELDS]
        used: list[int] = []

        def charge(db: sqlite3.Connection, period: str) -> None:
            row = db.execute(
                "SELECT runs FROM counters WHERE tenant_id=? AND period=?", (tenant_id, period)
            ).fetchone()
            used.append(int(row[0]) if row else 0)
            db.execute(
                f"INSERT INTO charges (tenant_id, run_id, period, {_COLUMNS})"
                f" VALUES (?,?,?,{','.join('?' * len(_FIELDS))})",
                (tenant_id, run_id, period, *values),
            )
            db.execute(
                f"INSERT INTO counters (tenant_id, period, runs, {_COLUMNS})"
                f" VALUES (?,?,1,{','.join('?' * len(_FIELDS))})"
                " ON CONFLICT(tenant_id, period) DO UPDATE SET runs=runs+1, "
                + ", ".join(f"{f}={f}+excluded.{f}" for f in _FIELDS),
                (tenant_id, period, *values),
            )

        first, period = self._end(tenant_id, run_id, result, fingerprint, charge)
        if first is not None:
            return first
        if quota_reached(used[0], limit):
            _log.warning(
                "tenant %s went over its run quota: run %s charged with %s of %s runs used in %s",
                tenant_id, run_id, used[0], limit, period,
                extra={"tenant_id": tenant_id, "run_id": run_id, "limit": limit, "used": used[0],
                       "period": period},
            )  # fmt: skip
        return usage

    def complete_uncharged(
        self, tenant_id: str, run_id: str, result: str | None = None, fingerprint: str = ""
    ) -> RunUsage:
        """Complete the marker (no ``charges`` row, counters untouched) unless the run already ended."""
        first, _ = self._end(tenant_id, run_id, result, fingerprint, None)
        return first if first is not None else RunUsage()

    def _end(
        self,
        tenant_id: str,
        run_id: str,
        result: str | None,
        fingerprint: str,
        charge: Callable[[sqlite3.Connection, str], None] | None,
    ) -> tuple[RunUsage | None, str]:
        """A run's one ending, in one transaction: nothing when it already ended (its first charge is
        returned), else ``charge`` (if any) and the marker completed with ``result``."""
        now = self._clock()
        period = period_of(now)
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                existing = self._marker(db, tenant_id, run_id)
                if existing is not None and existing.state == "completed":
                    db.execute("ROLLBACK")
                    return existing.usage or RunUsage(), period
                if charge is not None:
                    charge(db, period)
                db.execute(_COMPLETE_MARKER, (tenant_id, run_id, fingerprint, now.isoformat(), result))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return None, period

    def period_usage(self, tenant_id: str, period: str) -> RunUsage:
        with self._lock:
            row = (
                self._db()
                .execute(
                    f"SELECT {_COLUMNS} FROM counters WHERE tenant_id=? AND period=?", (tenant_id, period)
                )
                .fetchone()
            )
        return RunUsage(**dict(zip(_FIELDS, row, strict=True))) if row else RunUsage()

    def record_ingest(self, tenant_id: str, entry_id: str, usage: IngestUsage) -> bool:
        """Insert the entry and add it to the counter in one transaction; a known entry adds nothing."""
        period = period_of(self._clock())
        values = [getattr(usage, f) for f in _INGEST_FIELDS]
        placeholders = ",".join("?" * len(_INGEST_FIELDS))
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                inserted = db.execute(
                    f"INSERT INTO ingest_entries (tenant_id, entry_id, period, {_INGEST_COLUMNS})"
                    f" VALUES (?,?,?,{placeholders}) ON CONFLICT(tenant_id, entry_id) DO NOTHING",
                    (tenant_id, entry_id, period, *values),
                ).rowcount
                if inserted:
                    db.execute(
                        f"INSERT INTO ingest_counters (tenant_id, period, {_INGEST_COLUMNS})"
                        f" VALUES (?,?,{placeholders}) ON CONFLICT(tenant_id, period) DO UPDATE SET "
                        + ", ".join(f"{f}={f}+excluded.{f}" for f in _INGEST_FIELDS),
                        (tenant_id, period, *values),
                    )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return bool(inserted)

    def period_ingestion(self, tenant_id: str, period: str) -> IngestUsage:
        with self._lock:
            row = (
                self._db()
                .execute(
                    f"SELECT {_INGEST_COLUMNS} FROM ingest_counters WHERE tenant_id=? AND period=?",
                    (tenant_id, period),
                )
                .fetchone()
            )
        return IngestUsage(**dict(zip(_INGEST_FIELDS, row, strict=True))) if row else IngestUsage()

    def purge_tenant(self, tenant_id: str) -> int:
        with self._lock, self._db() as db:  # one transaction
            db.execute("BEGIN IMMEDIATE")
            results = db.execute(
                "UPDATE markers SET result=NULL WHERE tenant_id=? AND result IS NOT NULL", (tenant_id,)
            ).rowcount
            entries = db.execute("DELETE FROM ingest_entries WHERE tenant_id=?", (tenant_id,)).rowcount
        return results + entries
