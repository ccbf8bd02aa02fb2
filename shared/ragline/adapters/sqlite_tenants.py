"""Embedded :class:`~ragline.ports.TenantRegistry`: namespaces in a SQLite file."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from ragline import errors
from ragline.domain.tenancy import Namespace

_SCHEMA = """
CREATE TABLE IF NOT EXISTS namespaces (
    tenant_id TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant_id, namespace_id)
);
"""


class SqliteTenantRegistry:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(_SCHEMA)
        return self._conn

    def create_namespace(self, namespace: Namespace) -> Namespace:
        with self._lock:
            try:
                self._db().execute(
                    "INSERT INTO namespaces VALUES (?,?,?)",
                    (namespace.tenant_id, namespace.namespace_id, namespace.model_dump_json()),
                )
            except sqlite3.IntegrityError as exc:
                raise errors.Conflict(
                    f"namespace {namespace.namespace_id!r} already exists", namespace=namespace.namespace_id
                ) from exc
        return namespace

    def get_namespace(self, tenant_id: str, namespace_id: str) -> Namespace:
        with self._lock:
            row = (
                self._db()
                .execute(
                    "SELECT body FROM namespaces WHERE tenant_id=? AND namespace_id=?",
                    (tenant_id, namespace_id),
                )
                .fetchone()
            )
        if row is None:
            raise errors.NamespaceNotFound(
                f"namespace {namespace_id!r} does not exist", namespace=namespace_id
            )
        return Namespace.model_validate_json(row[0])

    def list_namespaces(self, tenant_id: str) -> list[Namespace]:
        with self._lock:
            rows = (
                self._db()
                .execute("SELECT body FROM namespaces WHERE tenant_id=? ORDER BY namespace_id", (tenant_id,))
                .fetchall()
            )
        return [Namespace.model_validate_json(r[0]) for r in rows]

    def update_namespace(self, namespace: Namespace) -> Namespace:
        with self._lock:
            cur = self._db().execute(
                "UPDATE namespaces SET body=? WHERE tenant_id=? AND namespace_id=?",
                (namespace.model_dump_json(), namespace.tenant_id, namespace.namespace_id),
            )
        if cur.rowcount == 0:
            raise errors.NamespaceNotFound(
                f"namespace {namespace.namespace_id!r} does not exist", namespace=namespace.namespace_id
            )
        return namespace
