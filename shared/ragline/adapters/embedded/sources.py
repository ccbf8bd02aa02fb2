"""Embedded data sources and their items' inventory: one SQLite file (``sources.sqlite``).

Every conditional write is one ``UPDATE … WHERE`` whose row count says whether it held (the same as
DynamoDB's condition expressions); statements run alone on the connection under one lock.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragline import errors
from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite
from ragline.domain.sources import KnownItem, SourceRecord, record_from, settings_json, state_json

SOURCES_FILE = "sources.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    tenant_id TEXT NOT NULL, namespace_id TEXT NOT NULL, source_id TEXT NOT NULL,
    settings TEXT NOT NULL, state TEXT NOT NULL, revision INTEGER NOT NULL,
    lease_token TEXT NOT NULL, lease_until REAL NOT NULL,
    PRIMARY KEY (tenant_id, namespace_id, source_id)
);
CREATE TABLE IF NOT EXISTS source_items (
    tenant_id TEXT NOT NULL, namespace_id TEXT NOT NULL, source_id TEXT NOT NULL, item_id TEXT NOT NULL,
    document_id TEXT NOT NULL, version TEXT NOT NULL, access_key TEXT NOT NULL, seen_run INTEGER NOT NULL,
    state TEXT NOT NULL, memo TEXT NOT NULL, error TEXT NOT NULL,
    PRIMARY KEY (tenant_id, namespace_id, source_id, item_id)
);
"""
_ITEM_COLUMNS = "item_id, document_id, version, access_key, seen_run, state, memo, error"


def _record(row: tuple[Any, ...]) -> SourceRecord:
    tenant_id, namespace_id, source_id, settings, state, revision, lease_token, lease_until = row
    return record_from(
        tenant_id, namespace_id, source_id, settings, state,
        revision=int(revision), lease_token=lease_token, lease_until=float(lease_until),
    )  # fmt: skip


@maps_sqlite_errors
class SqliteSourceRegistry:
    def __init__(self, path: Path | str) -> None:
        self._path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _run(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[tuple[Any, ...]], int]:
        with self._lock:
            if self._conn is None:
                self._conn = open_sqlite(self._path, _SCHEMA)
            cursor = self._conn.execute(sql, tuple(params))
            return cursor.fetchall(), cursor.rowcount

    def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._lock:
            if self._conn is None:
                self._conn = open_sqlite(self._path, _SCHEMA)
            with self._conn:
                self._conn.executemany(sql, [tuple(r) for r in rows])

    # -- sources ------------------------------------------------------------------------------
    def create(self, record: SourceRecord, *, limit: int) -> bool:
        r = record
        try:
            _, written = self._run(
                "INSERT INTO sources SELECT ?, ?, ?, ?, ?, 0, '', 0"
                " WHERE (SELECT COUNT(*) FROM sources WHERE tenant_id = ? AND namespace_id = ?) < ?",
                (r.tenant_id, r.namespace_id, r.source_id, settings_json(r), state_json(r),
                 r.tenant_id, r.namespace_id, limit),
            )  # fmt: skip
        except sqlite3.IntegrityError:
            raise errors.Conflict(f"source {r.source_id!r} exists", source_id=r.source_id) from None
        return written == 1

    def get(self, tenant_id: str, namespace_id: str, source_id: str) -> SourceRecord:
        rows, _ = self._run(
            "SELECT * FROM sources WHERE tenant_id = ? AND namespace_id = ? AND source_id = ?",
            (tenant_id, namespace_id, source_id),
        )
        if not rows:
            raise errors.NotFound(f"no source {source_id!r}", source_id=source_id)
        return _record(rows[0])

    def update_settings(self, record: SourceRecord, *, revision: int) -> SourceRecord | None:
        r = record
        _, written = self._run(
            "UPDATE sources SET settings = ?, revision = revision + 1"
            " WHERE tenant_id = ? AND namespace_id = ? AND source_id = ? AND revision = ?",
            (settings_json(r), r.tenant_id, r.namespace_id, r.source_id, revision),
        )
        return self.get(r.tenant_id, r.namespace_id, r.source_id) if written == 1 else None

    def claim(
        self,
        tenant_id: str,
        namespace_id: str,
        source_id: str,
        *,
        token: str,
        expect: str,
        lease_seconds: float,
        now: float,
    ) -> SourceRecord | None:
        self.get(tenant_id, namespace_id, source_id)  # NotFound
        _, written = self._run(
            "UPDATE sources SET lease_token = ?, lease_until = ?"
            " WHERE tenant_id = ? AND namespace_id = ? AND source_id = ?"
            " AND (lease_token = '' OR lease_token = ? OR lease_until < ?)",
            (token, now + lease_seconds, tenant_id, namespace_id, source_id, expect or "\x00", now),
        )
        return self.get(tenant_id, namespace_id, source_id) if written == 1 else None

    def advance(self, record: SourceRecord, *, token: str) -> bool:
        r = record
        _, written = self._run(
            "UPDATE sources SET state = ?, lease_token = ?, lease_until = ?"
            " WHERE tenant_id = ? AND namespace_id = ? AND source_id = ? AND lease_token = ?",
            (state_json(r), r.lease_token, r.lease_until, r.tenant_id, r.namespace_id, r.source_id, token),
        )
        return written == 1

    def delete(self, tenant_id: str, namespace_id: str, source_id: str) -> None:
        key = (tenant_id, namespace_id, source_id)
        self._run("DELETE FROM source_items WHERE tenant_id = ? AND namespace_id = ? AND source_id = ?", key)
        self._run("DELETE FROM sources WHERE tenant_id = ? AND namespace_id = ? AND source_id = ?", key)

    def purge_tenant(self, tenant_id: str) -> int:
        self._run("DELETE FROM source_items WHERE tenant_id = ?", (tenant_id,))
        _, gone = self._run("DELETE FROM sources WHERE tenant_id = ?", (tenant_id,))
        return gone

    # -- items --------------------------------------------------------------------------------
    def known(
        self, tenant_id: str, namespace_id: str, source_id: str, item_ids: Sequence[str]
    ) -> dict[str, KnownItem]:
        found: dict[str, KnownItem] = {}
        ids = list(dict.fromkeys(item_ids))
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            rows, _ = self._run(
                f"SELECT {_ITEM_COLUMNS} FROM source_items WHERE tenant_id = ? AND namespace_id = ?"
                f" AND source_id = ? AND item_id IN ({','.join('?' * len(part))})",
                (tenant_id, namespace_id, source_id, *part),
            )
            found.update((row[0], KnownItem(*row)) for row in rows)
        return found

    def put_items(
        self, tenant_id: str, namespace_id: str, source_id: str, items: Sequence[KnownItem]
    ) -> None:
        self._many(
            f"INSERT OR REPLACE INTO source_items (tenant_id, namespace_id, source_id, {_ITEM_COLUMNS})"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(tenant_id, namespace_id, source_id, *item) for item in items],
        )

    def drop_items(self, tenant_id: str, namespace_id: str, source_id: str, item_ids: Sequence[str]) -> None:
        self._many(
            "DELETE FROM source_items"
            " WHERE tenant_id = ? AND namespace_id = ? AND source_id = ? AND item_id = ?",
            [(tenant_id, namespace_id, source_id, i) for i in item_ids],
        )

    def unseen(
        self, tenant_id: str, namespace_id: str, source_id: str, *, run: int, limit: int
    ) -> list[KnownItem]:
        rows, _ = self._run(
            f"SELECT {_ITEM_COLUMNS} FROM source_items WHERE tenant_id = ? AND namespace_id = ?"
            " AND source_id = ? AND seen_run < ? ORDER BY item_id LIMIT ?",
            (tenant_id, namespace_id, source_id, run, limit),
        )
        return [KnownItem(*r) for r in rows]

    def items(self, tenant_id: str, namespace_id: str, source_id: str) -> list[KnownItem]:
        rows, _ = self._run(
            f"SELECT {_ITEM_COLUMNS} FROM source_items WHERE tenant_id = ? AND namespace_id = ?"
            " AND source_id = ? ORDER BY item_id",
            (tenant_id, namespace_id, source_id),
        )
        return [KnownItem(*r) for r in rows]

    def list(self, tenant_id: str, namespace_id: str) -> list[SourceRecord]:
        rows, _ = self._run(
            "SELECT * FROM sources WHERE tenant_id = ? AND namespace_id = ? ORDER BY source_id",
            (tenant_id, namespace_id),
        )
        return [_record(r) for r in rows]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
