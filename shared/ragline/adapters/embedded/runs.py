"""Embedded run logs and conversations: one SQLite file (``runs.sqlite``, 0600 like every file of
the home folder's secrets: it holds questions and answers).

Conditional writes are one ``UPDATE … WHERE`` whose row count says whether they held, the same as
DynamoDB's condition expressions; statements run alone on the connection under one lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite
from ragline.domain.conversations import Conversation, turns_from_json, turns_json
from ragline.domain.runs import LoggedEvent, RunHead, RunStatus

RUNS_FILE = "runs.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS run_heads (
    tenant_id TEXT NOT NULL, run_id TEXT NOT NULL, owner TEXT NOT NULL, key_id TEXT NOT NULL,
    status TEXT NOT NULL, created_at REAL NOT NULL, expires_at INTEGER NOT NULL,
    background INTEGER NOT NULL, cancel_requested INTEGER NOT NULL, last_seq INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, run_id)
);
CREATE TABLE IF NOT EXISTS run_events (
    tenant_id TEXT NOT NULL, run_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL,
    data TEXT NOT NULL, PRIMARY KEY (tenant_id, run_id, seq)
);
CREATE TABLE IF NOT EXISTS conversations (
    tenant_id TEXT NOT NULL, conversation_id TEXT NOT NULL, owner TEXT NOT NULL, key_id TEXT NOT NULL,
    created_at REAL NOT NULL, updated_at REAL NOT NULL, turns TEXT NOT NULL, usage TEXT NOT NULL,
    turn_count INTEGER NOT NULL, version INTEGER NOT NULL, title TEXT NOT NULL,
    PRIMARY KEY (tenant_id, conversation_id)
);
"""
_HEAD = "owner, key_id, status, created_at, expires_at, background, cancel_requested, last_seq"
_CONVERSATION = "owner, key_id, created_at, updated_at, turns, usage, turn_count, version, title"


class _Db:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def run(self, *statements: tuple[str, Sequence[Any]]) -> tuple[list[tuple[Any, ...]], int]:
        """The statements in one transaction, alone on the connection: the last one's rows and count."""
        with self._lock:
            if self._conn is None:
                self._conn = open_sqlite(self.path, _SCHEMA)
                with contextlib.suppress(OSError):
                    os.chmod(self.path, 0o600)
            rows: list[tuple[Any, ...]] = []
            count = 0
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for sql, params in statements:
                    cursor = self._conn.execute(sql, tuple(params))
                    rows, count = cursor.fetchall(), cursor.rowcount
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            return rows, count


@maps_sqlite_errors
class SqliteRunLog:
    def __init__(self, path: Path | str) -> None:
        self._db = _Db(path)

    def start(self, head: RunHead) -> None:
        h = head
        key = (h.tenant_id, h.run_id)
        self._db.run(
            ("DELETE FROM run_events WHERE tenant_id = ? AND run_id = ?", key),
            (f"INSERT OR REPLACE INTO run_heads (tenant_id, run_id, {_HEAD}) VALUES (?,?,?,?,?,?,?,?,?,?)",
             (*key, h.owner, h.key_id, h.status, h.created_at, h.expires_at, int(h.background),
              int(h.cancel_requested), h.last_seq)),
        )  # fmt: skip

    def head(self, tenant_id: str, run_id: str) -> RunHead | None:
        rows, _ = self._db.run(
            (f"SELECT {_HEAD} FROM run_heads WHERE tenant_id = ? AND run_id = ?", (tenant_id, run_id))
        )
        if not rows:
            return None
        owner, key_id, status, created_at, expires_at, background, cancel, last_seq = rows[0]
        return RunHead(
            tenant_id, run_id, owner, key_id, status, float(created_at), int(expires_at),
            background=bool(background), cancel_requested=bool(cancel), last_seq=int(last_seq),
        )  # fmt: skip

    def append(self, tenant_id: str, run_id: str, events: Sequence[LoggedEvent]) -> None:
        if not events:
            return
        insert = "INSERT OR REPLACE INTO run_events VALUES (?, ?, ?, ?, ?)"
        statements: list[tuple[str, Sequence[Any]]] = [
            (insert, (tenant_id, run_id, e.seq, e.type, e.data)) for e in events
        ]
        statements.append((
            "UPDATE run_heads SET last_seq = MAX(last_seq, ?) WHERE tenant_id = ? AND run_id = ?",
            (events[-1].seq, tenant_id, run_id),
        ))  # fmt: skip
        self._db.run(*statements)

    def events(self, tenant_id: str, run_id: str, after: int, limit: int) -> list[LoggedEvent]:
        rows, _ = self._db.run((
            "SELECT seq, type, data FROM run_events WHERE tenant_id = ? AND run_id = ? AND seq > ?"
            " ORDER BY seq LIMIT ?",
            (tenant_id, run_id, after, limit),
        ))  # fmt: skip
        return [LoggedEvent(int(seq), str(kind), str(data)) for seq, kind, data in rows]

    def set_status(
        self, tenant_id: str, run_id: str, status: RunStatus, *, expect: tuple[RunStatus, ...]
    ) -> bool:
        marks = ",".join("?" * len(expect))
        _, count = self._db.run((
            f"UPDATE run_heads SET status = ? WHERE tenant_id = ? AND run_id = ? AND status IN ({marks})",
            (status, tenant_id, run_id, *expect),
        ))  # fmt: skip
        return count == 1

    def request_cancel(self, tenant_id: str, run_id: str) -> bool:
        _, count = self._db.run((
            "UPDATE run_heads SET cancel_requested = 1 WHERE tenant_id = ? AND run_id = ?"
            " AND status IN ('queued', 'running')",
            (tenant_id, run_id),
        ))  # fmt: skip
        return count == 1

    def purge_tenant(self, tenant_id: str) -> int:
        self._db.run(("DELETE FROM run_events WHERE tenant_id = ?", (tenant_id,)))
        _, count = self._db.run(("DELETE FROM run_heads WHERE tenant_id = ?", (tenant_id,)))
        return count


@maps_sqlite_errors
class SqliteConversationStore:
    def __init__(self, path: Path | str) -> None:
        self._db = _Db(path)

    def get(self, tenant_id: str, conversation_id: str) -> Conversation | None:
        rows, _ = self._db.run((
            f"SELECT {_CONVERSATION} FROM conversations WHERE tenant_id = ? AND conversation_id = ?",
            (tenant_id, conversation_id),
        ))  # fmt: skip
        return _conversation(tenant_id, conversation_id, rows[0]) if rows else None

    def save(self, conversation: Conversation, *, expect_version: int) -> bool:
        c = conversation
        values = (c.owner, c.key_id, c.created_at, c.updated_at, turns_json(c.turns), json.dumps(c.usage),
                  c.turn_count, expect_version + 1, c.title)  # fmt: skip
        if expect_version == 0:
            _, count = self._db.run((
                f"INSERT OR IGNORE INTO conversations (tenant_id, conversation_id, {_CONVERSATION})"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (c.tenant_id, c.conversation_id, *values),
            ))  # fmt: skip
            return count == 1
        _, count = self._db.run((
            "UPDATE conversations SET owner = ?, key_id = ?, created_at = ?, updated_at = ?, turns = ?,"
            " usage = ?, turn_count = ?, version = ?, title = ? WHERE tenant_id = ? AND conversation_id = ?"
            " AND version = ?",
            (*values, c.tenant_id, c.conversation_id, expect_version),
        ))  # fmt: skip
        return count == 1

    def list(self, tenant_id: str, owner: str | None, limit: int) -> list[Conversation]:
        where, params = "tenant_id = ?", [tenant_id]
        if owner is not None:
            where, params = where + " AND owner = ?", [*params, owner]
        rows, _ = self._db.run((
            f"SELECT conversation_id, {_CONVERSATION} FROM conversations WHERE {where}"
            " ORDER BY updated_at DESC, conversation_id LIMIT ?",
            (*params, limit),
        ))  # fmt: skip
        return [_conversation(tenant_id, row[0], row[1:]) for row in rows]

    def delete(self, tenant_id: str, conversation_id: str) -> bool:
        _, count = self._db.run((
            "DELETE FROM conversations WHERE tenant_id = ? AND conversation_id = ?",
            (tenant_id, conversation_id),
        ))  # fmt: skip
        return count == 1

    def purge_tenant(self, tenant_id: str) -> int:
        _, count = self._db.run(("DELETE FROM conversations WHERE tenant_id = ?", (tenant_id,)))
        return count


def _conversation(tenant_id: str, conversation_id: str, row: Sequence[Any]) -> Conversation:
    owner, key_id, created_at, updated_at, turns, usage, turn_count, version, title = row
    return Conversation(
        tenant_id, conversation_id, owner, key_id, float(created_at), float(updated_at),
        turns=turns_from_json(turns), usage=json.loads(usage), turn_count=int(turn_count),
        version=int(version), title=title,
    )  # fmt: skip
