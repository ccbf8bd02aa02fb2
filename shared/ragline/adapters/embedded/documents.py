"""Embedded :class:`~ragline.ports.DocumentRegistry`: document records in a SQLite file.

A claim reads and writes the record inside one ``BEGIN IMMEDIATE`` transaction, which takes the
database's write lock first: concurrent claims, from threads or from other processes on the same file
(a CLI beside a worker), are serialised, so each granted claim sees the previous one's generation.
The grant rule and the claimed record are :mod:`ragline.domain.documents`'s.
``complete``/``fail`` are single ``UPDATE … WHERE generation = ?`` statements.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite
from ragline.domain.documents import (
    Claim,
    DocumentRecord,
    claim_decision,
    claim_update,
    claimed_record,
    normalise_sequencer,
    now,
)

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


@maps_sqlite_errors
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
                decision = claim_decision(stored, seq)
                if stored is not None and decision != "claimed":
                    db.execute("ROLLBACK")
                    return Claim(granted=False, record=stored, reason=decision)
                update = claim_update(
                    seq, deleting=deleting, source=source, version_id=version_id, etag=etag, size=size,
                    at=now(),
                )  # fmt: skip
                record = claimed_record(stored, *key, update)
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

    def purge_tenant(self, tenant_id: str) -> int:
        with self._lock:
            cur = self._db().execute("DELETE FROM documents WHERE tenant_id=?", (tenant_id,))
        return cur.rowcount
