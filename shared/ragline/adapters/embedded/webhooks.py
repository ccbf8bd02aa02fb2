"""Embedded webhook subscriptions and once-marks: one SQLite file (``events.sqlite``).

A mark is a row under a primary key: ``INSERT OR IGNORE`` writes it at most once, and its row count
says whether this call did — the same "first writer wins" as DynamoDB's ``attribute_not_exists``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from datetime import datetime
from pathlib import Path

from ragline import errors
from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite
from ragline.domain.webhooks import Subscription

_SCHEMA = """
CREATE TABLE IF NOT EXISTS webhooks (
    tenant_id TEXT NOT NULL, id TEXT NOT NULL, url TEXT NOT NULL, secret TEXT NOT NULL,
    event_types TEXT NOT NULL, description TEXT NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE TABLE IF NOT EXISTS once_marks (key TEXT PRIMARY KEY, expires_at REAL NOT NULL);
"""


class _Db:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def run(self, *statements: tuple[str, tuple[object, ...]]) -> tuple[list[tuple[str, ...]], int]:
        """The statements in order, alone on the connection: the last one's rows and row count.

        One lock around the whole run: a statement's row count is the connection's last change count,
        so another thread's statement finishing in between would otherwise be counted as this one's."""
        with self._lock:
            if self._conn is None:
                self._conn = open_sqlite(self.path, _SCHEMA)
            rows: list[tuple[str, ...]] = []
            count = 0
            for sql, params in statements:
                cursor = self._conn.execute(sql, params)
                rows, count = cursor.fetchall(), cursor.rowcount
            return rows, count


@maps_sqlite_errors
class SqliteWebhookStore:
    def __init__(self, path: Path | str) -> None:
        self._db = _Db(path)

    def put(self, subscription: Subscription) -> Subscription:
        s = subscription
        self._db.run((
            "INSERT OR REPLACE INTO webhooks VALUES (?, ?, ?, ?, ?, ?, ?)",
            (s.tenant_id, s.id, s.url, s.secret, json.dumps(list(s.event_types)), s.description,
             s.created_at.isoformat()),
        ))  # fmt: skip
        return s

    def add(self, subscription: Subscription, *, limit: int) -> bool:
        s = subscription
        _, written = self._db.run((
            "INSERT INTO webhooks SELECT ?, ?, ?, ?, ?, ?, ?"
            " WHERE (SELECT COUNT(*) FROM webhooks WHERE tenant_id = ?) < ?",
            (s.tenant_id, s.id, s.url, s.secret, json.dumps(list(s.event_types)), s.description,
             s.created_at.isoformat(), s.tenant_id, limit),
        ))  # fmt: skip
        return written == 1

    def replace(self, subscription: Subscription) -> Subscription:
        s = subscription
        _, updated = self._db.run((
            "UPDATE webhooks SET url = ?, secret = ?, event_types = ?, description = ?"
            " WHERE tenant_id = ? AND id = ?",
            (s.url, s.secret, json.dumps(list(s.event_types)), s.description, s.tenant_id, s.id),
        ))  # fmt: skip
        if updated != 1:
            raise errors.NotFound(f"no webhook {s.id!r}", webhook_id=s.id)
        return s

    def get(self, tenant_id: str, subscription_id: str) -> Subscription:
        rows, _ = self._db.run(
            ("SELECT * FROM webhooks WHERE tenant_id = ? AND id = ?", (tenant_id, subscription_id))
        )
        if not rows:
            raise errors.NotFound(f"no webhook {subscription_id!r}", webhook_id=subscription_id)
        return _subscription(rows[0])

    def list(self, tenant_id: str) -> list[Subscription]:
        rows, _ = self._db.run(
            ("SELECT * FROM webhooks WHERE tenant_id = ? ORDER BY created_at, id", (tenant_id,))
        )
        return [_subscription(r) for r in rows]

    def delete(self, tenant_id: str, subscription_id: str) -> Subscription:
        found = self.get(tenant_id, subscription_id)
        self._db.run(("DELETE FROM webhooks WHERE tenant_id = ? AND id = ?", (tenant_id, subscription_id)))
        return found


@maps_sqlite_errors
class SqliteOnceMarks:
    def __init__(self, path: Path | str) -> None:
        self._db = _Db(path)

    def mark(self, key: str, *, ttl_seconds: int) -> bool:
        now = time.time()
        _, written = self._db.run(
            ("DELETE FROM once_marks WHERE key = ? AND expires_at <= ?", (key, now)),
            ("INSERT OR IGNORE INTO once_marks VALUES (?, ?)", (key, now + ttl_seconds)),
        )
        return written == 1

    def has(self, key: str) -> bool:
        rows, _ = self._db.run(
            ("SELECT 1 FROM once_marks WHERE key = ? AND expires_at > ?", (key, time.time()))
        )
        return bool(rows)

    def forget(self, key: str) -> None:
        self._db.run(("DELETE FROM once_marks WHERE key = ?", (key,)))


def _subscription(row: tuple[str, ...]) -> Subscription:
    tenant_id, id_, url, secret, types, description, created = row
    return Subscription(
        id=id_, tenant_id=tenant_id, url=url, secret=secret, event_types=tuple(json.loads(types)),
        description=description, created_at=datetime.fromisoformat(created),
    )  # fmt: skip
