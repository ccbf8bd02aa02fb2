"""Embedded :class:`~ragline.ports.DocumentRegistry`: document records in a SQLite file.

A claim reads and writes the record inside one ``BEGIN IMMEDIATE`` transaction, which takes the
database's write lock first: concurrent claims, from threads or from other processes on the same file
(a CLI beside a worker), are serialised, so each granted claim sees the previous one's generation.
The grant rule and the claimed record are :mod:`ragline.domain.documents`'s; records stored before
the S3 order had an origin are read through :func:`~ragline.domain.documents.upgrade_stored`.
``complete``/``fail`` are single ``UPDATE … WHERE generation = ?`` statements.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite
from ragline.domain.documents import (
    Claim,
    DocumentRecord,
    claim_update,
    decide_claim,
    normalise_sequencer,
    now,
    upgrade_stored,
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
    def __init__(self, path: Path | str, *, clock: Callable[[], datetime] = now) -> None:
        self.path = Path(path)
        self._clock = clock
        """Claims' time (leases); injectable so a test can let a lease run out."""
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
        sequencer: str | None,
        *,
        deleting: bool = False,
        source: str = "",
        version_id: str = "",
        etag: str = "",
        size: int = 0,
        lease_seconds: float = 0.0,
        sidecar: str | None = None,
    ) -> Claim:
        seq = None if sequencer is None else normalise_sequencer(sequencer)
        key = (tenant_id, namespace_id, document_id)
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute(
                    "SELECT body FROM documents WHERE tenant_id=? AND namespace_id=? AND document_id=?", key
                ).fetchone()
                stored = _decode(row[0]) if row else None
                update = claim_update(
                    seq, deleting=deleting, source=source, version_id=version_id, etag=etag, size=size,
                    at=self._clock(), lease_seconds=lease_seconds,
                    sidecar=None if sidecar is None else normalise_sequencer(sidecar),
                )  # fmt: skip
                claim = decide_claim(stored, *key, update)
                if not claim.granted:
                    db.execute("ROLLBACK")
                    return claim
                db.execute(
                    "INSERT OR REPLACE INTO documents VALUES (?,?,?,?,?)",
                    (*key, claim.record.generation, claim.record.model_dump_json()),
                )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        return claim

    def complete(self, record: DocumentRecord) -> bool:
        return self._write_if_generation(record.model_copy(update={"updated_at": self._clock()}))

    def fail(self, record: DocumentRecord, code: str, message: str) -> bool:
        failed = record.model_copy(
            update={
                "status": "failed", "error_code": code, "error_message": message, "updated_at": self._clock()
            }
        )  # fmt: skip
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
        return _decode(row[0]) if row else None

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
        return [_decode(r[0]) for r in rows]

    def purge_tenant(self, tenant_id: str) -> int:
        with self._lock:
            cur = self._db().execute("DELETE FROM documents WHERE tenant_id=?", (tenant_id,))
        return cur.rowcount


def _decode(body: str) -> DocumentRecord:
    return DocumentRecord.model_validate(upgrade_stored(json.loads(body)))
