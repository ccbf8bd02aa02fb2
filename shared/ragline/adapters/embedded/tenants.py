"""Embedded :class:`~ragline.ports.TenantRegistry`: tenants, namespaces and API keys in a SQLite file.

- Namespaces do not require their tenant to exist: the local CLI works in tenant ``local`` without
  ever creating it.
- API keys are rows keyed by the SHA-256 hex digest of the key (the key itself is never received);
  ``key_id`` is unique per tenant, like every other id. The mutable fields (``last_used_at``,
  ``revoked_at``) are columns, so touching and revoking are single conditional ``UPDATE``s.
- ``touch_api_key`` writes at most once per :data:`~ragline.domain.keys.TOUCH_INTERVAL` per key,
  like the DynamoDB adapter. Key hashes and times follow :mod:`ragline.domain.keys` and
  :mod:`ragline.domain.keys`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragline import errors
from ragline.adapters.embedded.sqlite import maps_sqlite_errors, open_sqlite
from ragline.adapters.embedded.tenants_schema import FIND_IDENTITY_PROVIDER, SCHEMA, TOUCH_KEY
from ragline.domain.attributes import AttributeType, merge_schema
from ragline.domain.identity import IdentityProvider
from ragline.domain.keys import is_key_hash, require_key_hash, timestamp, touch_cutoff
from ragline.domain.tenancy import ApiKeyRecord, Namespace, Tenant

_MUTABLE_KEY_FIELDS = frozenset({"last_used_at", "revoked_at"})


@maps_sqlite_errors
class SqliteTenantRegistry:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = open_sqlite(self.path, SCHEMA)
        return self._conn

    # -- tenants ---------------------------------------------------------------------------------
    def create_tenant(self, tenant: Tenant) -> Tenant:
        with self._lock:
            try:
                self._db().execute(
                    "INSERT INTO tenants VALUES (?,?)", (tenant.tenant_id, tenant.model_dump_json())
                )
            except sqlite3.IntegrityError as exc:
                raise errors.Conflict(
                    f"tenant {tenant.tenant_id!r} already exists", tenant=tenant.tenant_id
                ) from exc
        return tenant

    def get_tenant(self, tenant_id: str) -> Tenant:
        with self._lock:
            row = self._db().execute("SELECT body FROM tenants WHERE tenant_id=?", (tenant_id,)).fetchone()
        if row is None:
            raise errors.NotFound(f"tenant {tenant_id!r} does not exist", tenant=tenant_id)
        return Tenant.model_validate_json(row[0])

    def update_tenant(self, tenant: Tenant) -> Tenant:
        with self._lock:
            cur = self._db().execute(
                "UPDATE tenants SET body=? WHERE tenant_id=?", (tenant.model_dump_json(), tenant.tenant_id)
            )
        if cur.rowcount != 1:
            raise errors.NotFound(f"tenant {tenant.tenant_id!r} does not exist", tenant=tenant.tenant_id)
        return tenant

    # -- namespaces ------------------------------------------------------------------------------
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
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                stored = _stored_schema(db, namespace.tenant_id, namespace.namespace_id)
                kept = _with_schema(namespace, stored or {})
                if stored is not None:
                    db.execute(
                        "UPDATE namespaces SET body=? WHERE tenant_id=? AND namespace_id=?",
                        (kept.model_dump_json(), namespace.tenant_id, namespace.namespace_id),
                    )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        if stored is None:
            raise errors.NamespaceNotFound(
                f"namespace {namespace.namespace_id!r} does not exist", namespace=namespace.namespace_id
            )
        return kept

    def extend_metadata_schema(
        self, tenant_id: str, namespace_id: str, types: Mapping[str, AttributeType]
    ) -> dict[str, AttributeType]:
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")  # the write lock first: concurrent extenders are serialised
            try:
                stored = _stored_schema(db, tenant_id, namespace_id)
                if stored is None:
                    raise errors.NamespaceNotFound(
                        f"namespace {namespace_id!r} does not exist", namespace=namespace_id
                    )
                merged = merge_schema(stored, types)
                if merged != stored:
                    db.execute(
                        "UPDATE namespaces SET body=json_set(body, '$.settings.metadata_schema', json(?))"
                        " WHERE tenant_id=? AND namespace_id=?",
                        (json.dumps(merged), tenant_id, namespace_id),
                    )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        return merged

    def swap_namespace(self, namespace: Namespace, *, revision: int) -> Namespace | None:
        """Like :meth:`update_namespace`, the stored metadata schema is kept (only
        ``extend_metadata_schema`` writes it)."""
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                schema = _stored_schema(db, namespace.tenant_id, namespace.namespace_id)
                kept = _with_schema(namespace, schema or {}).model_copy(update={"revision": revision + 1})
                cur = db.execute(
                    "UPDATE namespaces SET body=? WHERE tenant_id=? AND namespace_id=?"
                    " AND coalesce(json_extract(body, '$.revision'), 0)=?",
                    (kept.model_dump_json(), namespace.tenant_id, namespace.namespace_id, revision),
                )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        if schema is None:
            raise errors.NamespaceNotFound(
                f"namespace {namespace.namespace_id!r} does not exist", namespace=namespace.namespace_id
            )
        return kept if cur.rowcount == 1 else None

    def clear_default_namespace(self, tenant_id: str, namespace_id: str) -> None:
        with self._lock:
            self._db().execute(
                "UPDATE namespaces SET body=json_set(body, '$.default', json('false'))"
                " WHERE tenant_id=? AND namespace_id=?",
                (tenant_id, namespace_id),
            )

    def delete_namespace(self, tenant_id: str, namespace_id: str) -> None:
        with self._lock:
            cur = self._db().execute(
                "DELETE FROM namespaces WHERE tenant_id=? AND namespace_id=?", (tenant_id, namespace_id)
            )
        if cur.rowcount == 0:
            raise errors.NamespaceNotFound(
                f"namespace {namespace_id!r} does not exist", namespace=namespace_id
            )

    def purge_tenant(self, tenant_id: str) -> None:
        with self._lock, self._db() as db:  # one transaction
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM api_keys WHERE tenant_id=?", (tenant_id,))
            db.execute("DELETE FROM identity_providers WHERE tenant_id=?", (tenant_id,))
            db.execute("DELETE FROM namespaces WHERE tenant_id=?", (tenant_id,))

    # -- API keys --------------------------------------------------------------------------------
    def put_api_key(self, key: ApiKeyRecord) -> ApiKeyRecord:
        require_key_hash(key.key_hash, key.key_id)
        body = key.model_dump_json(exclude=set(_MUTABLE_KEY_FIELDS))
        used = timestamp(key.last_used_at) if key.last_used_at else None
        revoked = timestamp(key.revoked_at) if key.revoked_at else None
        with self._lock:
            try:
                self._db().execute(
                    "INSERT INTO api_keys VALUES (?,?,?,?,?,?)",
                    (key.key_hash, key.tenant_id, key.key_id, body, used, revoked),
                )
            except sqlite3.IntegrityError as exc:  # the hash, or the key id within the tenant
                raise errors.Conflict(f"API key {key.key_id!r} already exists", key_id=key.key_id) from exc
        return key

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        if not is_key_hash(key_hash):  # nothing else is ever stored: skip the read
            return None
        with self._lock:
            row = (
                self._db()
                .execute("SELECT body, last_used_at, revoked_at FROM api_keys WHERE key_hash=?", (key_hash,))
                .fetchone()
            )
        return _key_from_row(row) if row else None

    def list_api_keys(self, tenant_id: str) -> list[ApiKeyRecord]:
        with self._lock:
            rows = (
                self._db()
                .execute(
                    "SELECT body, last_used_at, revoked_at FROM api_keys WHERE tenant_id=? ORDER BY key_id",
                    (tenant_id,),
                )
                .fetchall()
            )
        return [_key_from_row(r) for r in rows]

    def revoke_api_key(self, tenant_id: str, key_id: str) -> ApiKeyRecord:
        at = timestamp(datetime.now(UTC))
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "UPDATE api_keys SET revoked_at=COALESCE(revoked_at, ?) WHERE tenant_id=? AND key_id=?",
                    (at, tenant_id, key_id),
                )
                row = db.execute(
                    "SELECT body, last_used_at, revoked_at FROM api_keys WHERE tenant_id=? AND key_id=?",
                    (tenant_id, key_id),
                ).fetchone()
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        if row is None:
            raise errors.NotFound(f"API key {key_id!r} does not exist", key_id=key_id)
        return _key_from_row(row)

    def touch_api_key(self, key_hash: str) -> None:
        if not is_key_hash(key_hash):
            return
        at = datetime.now(UTC)
        with self._lock:
            self._db().execute(TOUCH_KEY, (timestamp(at), key_hash, touch_cutoff(at)))

    # -- identity providers ----------------------------------------------------------------------
    def put_identity_provider(self, tenant_id: str, provider: IdentityProvider) -> None:
        with self._lock:
            try:
                self._db().execute(
                    "INSERT INTO identity_providers VALUES (?,?,?) ON CONFLICT(tenant_id) DO UPDATE"
                    " SET issuer=excluded.issuer, body=excluded.body",
                    (tenant_id, provider.issuer, provider.to_json()),
                )
            except sqlite3.IntegrityError as exc:  # the issuer is another tenant's
                raise errors.Conflict(
                    "another tenant already uses this issuer", issuer=provider.issuer
                ) from exc

    def get_identity_provider(self, tenant_id: str) -> IdentityProvider | None:
        with self._lock:
            row = (
                self._db()
                .execute("SELECT body FROM identity_providers WHERE tenant_id=?", (tenant_id,))
                .fetchone()
            )
        return IdentityProvider.from_json(row[0]) if row else None

    def delete_identity_provider(self, tenant_id: str) -> bool:
        with self._lock:
            cur = self._db().execute("DELETE FROM identity_providers WHERE tenant_id=?", (tenant_id,))
        return cur.rowcount > 0

    def find_identity_provider(self, issuer: str) -> tuple[str, IdentityProvider] | None:
        with self._lock:
            row = self._db().execute(FIND_IDENTITY_PROVIDER, (issuer,)).fetchone()
        return (str(row[0]), IdentityProvider.from_json(row[1])) if row else None


def _stored_schema(db: sqlite3.Connection, tenant_id: str, namespace_id: str) -> dict[str, Any] | None:
    """The namespace's stored metadata schema (``{}`` when it has none), ``None`` when it is absent."""
    row = db.execute(
        "SELECT json_extract(body, '$.settings.metadata_schema') FROM namespaces"
        " WHERE tenant_id=? AND namespace_id=?",
        (tenant_id, namespace_id),
    ).fetchone()
    if row is None:
        return None
    return dict(json.loads(row[0])) if row[0] else {}


def _with_schema(namespace: Namespace, schema: dict[str, Any]) -> Namespace:
    settings = namespace.settings.model_copy(update={"metadata_schema": schema})
    return namespace.model_copy(update={"settings": settings})


def _key_from_row(row: tuple[str, str | None, str | None]) -> ApiKeyRecord:
    body, last_used_at, revoked_at = row
    data = json.loads(body) | {"last_used_at": last_used_at, "revoked_at": revoked_at}
    return ApiKeyRecord.model_validate(data)
