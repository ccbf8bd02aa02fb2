"""Embedded :class:`~ragline.ports.DocumentRegistry`: document records in a SQLite file.

A claim reads and writes the record inside one ``BEGIN IMMEDIATE`` transaction, which takes the
database's write lock first: concurrent claims, from threads or from other processes on the same file
(a CLI beside a worker), are serialised, so each granted claim sees the previous one's generation.
``complete``/``fail`` are single ``UPDATE … WHERE generation = ?`` statements.
"""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime
from pathlib import Path
from typing import Literal

from ragline.adapters.embedded.sqlite import open_sqlite
from ragline.domain.documents import Claim, DocumentRecord, normalise_sequencer, now

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    tenant_id TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    generation INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant_id, namespace_id, document_id)
) WITHOUT ROWID;
"""
_RETRYABLE_STATUSES = frozenset({"queued", "processing", "deleting", "failed"})


def refusal(stored: DocumentRecord, sequencer: str) -> Literal["stale", "duplicate"] | None:
    """Why a claim with ``sequencer`` is refused given the stored record, or None when it is granted."""
    if sequencer > stored.sequencer:
        return None
    if sequencer == stored.sequencer:
        return None if stored.status in _RETRYABLE_STATUSES else "duplicate"
    return "stale"


def claimed(
    stored: DocumentRecord | None,
    key: tuple[str, str, str],
    sequencer: str,
    *,
    deleting: bool,
    source: str,
    version_id: str,
    etag: str,
    size: int,
    at: datetime,
) -> DocumentRecord:
    """The record after a granted claim; counts and hash of the last completed version are kept."""
    tenant_id, namespace_id, document_id = key
    base = stored or DocumentRecord(
        tenant_id=tenant_id, namespace_id=namespace_id, document_id=document_id, created_at=at
    )
    same_event = stored is not None and stored.sequencer == sequencer
    return base.model_copy(
        update={
            "sequencer": sequencer,
            "status": "deleting" if deleting else "processing",
            "generation": base.generation + 1,
            "attempts": base.attempts + 1 if same_event else 1,
            "error_code": "",
            "error_message": "",
            "source": source,
            "version_id": version_id,
            "etag": etag,
            "size": size,
            "updated_at": at,
        }
    )


class SqliteDocumentRegistry:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = open_sqlite(self.path, _SCHEMA)
        return self._conn

    def claim(
        self,
        tenant_id: str,
        namespace_id: str,
        document_id: str,
        sequencer: str,
        *,
        deleting: bool = False,
        source: str = "",
        version_id: str = "",
        etag: str = "",
        size: int = 0,
    ) -> Claim:
        seq = normalise_sequencer(sequencer)
        key = (tenant_id, namespace_id, document_id)
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute(
                    "SELECT body FROM documents WHERE tenant_id=? AND namespace_id=? AND document_id=?", key
                ).fetchone()
                stored = DocumentRecord.model_validate_json(row[0]) if row else None
                reason = refusal(stored, seq) if stored else None
                if stored is not None and reason is not None:
                    db.execute("ROLLBACK")
                    return Claim(granted=False, record=stored, reason=reason)
                record = claimed(
                    stored, key, seq,
                    deleting=deleting, source=source, version_id=version_id, etag=etag, size=size, at=now(),
                )  # fmt: skip
                db.execute(
                    "INSERT OR REPLACE INTO documents VALUES (?,?,?,?,?)",
                    (*key, record.generation, record.model_dump_json()),
                )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        return Claim(granted=True, record=record)

    def complete(self, record: DocumentRecord) -> bool:
        return self._write_if_generation(record.model_copy(update={"updated_at": now()}))

    def fail(self, record: DocumentRecord, code: str, message: str) -> bool:
        failed = record.model_copy(
            update={"status": "failed", "error_code": code, "error_message": message, "updated_at": now()}
        )
        return self._write_if_generation(failed)

    def _write_if_generation(self, record: DocumentRecord) -> bool:
        with self._lock:
            cur = self._db().execute(
                "UPDATE documents SET body=? "
                "WHERE tenant_id=? AND namespace_id=? AND document_id=? AND generation=?",
                (
                    record.model_dump_json(),
                    record.tenant_id,
                    record.namespace_id,
                    record.document_id,
                    record.generation,
                ),
            )
        return cur.rowcount == 1

    def get(self, tenant_id: str, namespace_id: str, document_id: str) -> DocumentRecord | None:
        with self._lock:
            row = (
                self._db()
                .execute(
                    "SELECT body FROM documents WHERE tenant_id=? AND namespace_id=? AND document_id=?",
                    (tenant_id, namespace_id, document_id),
                )
                .fetchone()
            )
        return DocumentRecord.model_validate_json(row[0]) if row else None

    def list(self, tenant_id: str, namespace_id: str) -> list[DocumentRecord]:
        with self._lock:
            rows = (
                self._db()
                .execute(
                    "SELECT body FROM documents WHERE tenant_id=? AND namespace_id=? ORDER BY document_id",
                    (tenant_id, namespace_id),
                )
                .fetchall()
            )
        return [DocumentRecord.model_validate_json(r[0]) for r in rows]
