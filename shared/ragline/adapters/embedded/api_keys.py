"""Embedded :class:`~ragline.ports.ApiKeyLookup`: the authorizer's reads of the tenants SQLite file.

The rows are the ones :class:`~ragline.adapters.embedded.tenants.SqliteTenantRegistry` writes (the
same file, tables and touch statement, from :mod:`ragline.adapters.embedded.tenants_schema`), read as
JSON without its models, so the authorizer imports no pydantic on this backend either.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite
from ragline.adapters.embedded.tenants_schema import FIND_IDENTITY_PROVIDER, SCHEMA, TOUCH_KEY
from ragline.domain.identity import IdentityProvider
from ragline.domain.keys import KeyGrant, is_key_hash, timestamp, touch_cutoff


@maps_sqlite_errors
class SqliteApiKeyLookup:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = open_sqlite(self.path, SCHEMA)
        return self._conn

    def find_grant(self, key_hash: str) -> KeyGrant | None:
        if not is_key_hash(key_hash):  # nothing else is ever stored: skip the read
            return None
        with self._lock:
            row = self._db().execute("SELECT body, revoked_at FROM api_keys WHERE key_hash=?", (key_hash,))
            found = row.fetchone()
        if found is None:
            return None
        body, revoked_at = found
        record = json.loads(body)
        return KeyGrant(
            tenant_id=str(record["tenant_id"]),
            key_id=str(record["key_id"]),
            scopes=frozenset(record.get("scopes") or ()),
            namespaces=frozenset(record.get("namespaces") or ()),
            may_assert_user=record.get("may_assert_user") is True,
            requires_user=record.get("requires_user") is True,
            revoked=revoked_at is not None,
        )

    def tenant_status(self, tenant_id: str) -> str | None:
        with self._lock:
            found = self._db().execute("SELECT body FROM tenants WHERE tenant_id=?", (tenant_id,)).fetchone()
        return None if found is None else str(json.loads(found[0]).get("status", "active"))

    def touch_api_key(self, key_hash: str) -> None:
        if not is_key_hash(key_hash):
            return
        at = datetime.now(UTC)
        with self._lock:
            self._db().execute(TOUCH_KEY, (timestamp(at), key_hash, touch_cutoff(at)))

    def find_identity_provider(self, issuer: str) -> tuple[str, IdentityProvider] | None:
        with self._lock:
            row = self._db().execute(FIND_IDENTITY_PROVIDER, (issuer,)).fetchone()
        return (str(row[0]), IdentityProvider.from_json(row[1])) if row else None
