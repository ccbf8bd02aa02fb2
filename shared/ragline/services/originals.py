"""The stored original of every document: what a reindex re-chunks and re-embeds.

A document that came from S3 *is* its object: the version its record names, else the current one. A
document written locally (API text, the CLI) has no object, so its ingest keeps its bytes in the
object store under ``<tenant>/<namespace>/.ragline/originals/<sha256 of the document id>/<version>/
<filename>`` — inside the tenant's folder (a tenant's purge removes them), in a folder S3 ingestion
ignores (it is not a document), named by a digest so no document id can reach another's folder.
``<version>`` is ``kept-`` and a digest of the bytes, which the write's claim records as its
``version_id``: the original of the version being written and the one of the version served are
both kept until the newer one replaces the served one, so a document whose newest version failed is
still rebuilt from the version it serves (also when that failed version is an S3 event's: the
version served names its kept original).

Every read is bounded by the document size limit (an object is refused from its stored length, before
its body is read).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass

from ragline import errors
from ragline.domain.documents import DocumentRecord
from ragline.domain.s3_events import object_key_of
from ragline.ports import ObjectStore

ORIGINALS = ".ragline/originals"
KEPT = "kept-"
"""Prefix of a locally written version's id (never an S3 version id)."""
VERSION_CHARS = 24


@dataclass(frozen=True)
class Original:
    filename: str
    data: bytes
    pinned: bool
    """Whether these are the bytes of the version the record names (else: what S3 serves now under
    the key, or the newest kept original — another version than the record's, maybe a newer one
    whose own write has not claimed the record yet)."""


def is_original_key(key: str) -> bool:
    """True for a key under a namespace's originals folder (S3 ingestion skips its events)."""
    parts = key.split("/")
    return len(parts) > 4 and "/".join(parts[2:4]) == ORIGINALS


def original_folder(tenant_id: str, namespace_id: str, document_id: str) -> str:
    digest = hashlib.sha256(document_id.encode()).hexdigest()[:32]
    return f"{tenant_id}/{namespace_id}/{ORIGINALS}/{digest}"


def original_version(data: bytes) -> str:
    """The version id of a locally written document: a digest of its bytes."""
    return KEPT + hashlib.sha256(data).hexdigest()[:VERSION_CHARS]


def keep_original(
    objects: ObjectStore,
    tenant_id: str,
    namespace_id: str,
    document_id: str,
    filename: str,
    data: bytes,
    keep: Collection[str] = (),
) -> str:
    """Store a locally written document's bytes as a new version (its id returned), dropping every
    kept version but it and ``keep`` (the versions the record still names)."""
    folder = original_folder(tenant_id, namespace_id, document_id)
    version = original_version(data)
    name = filename.rsplit("/", 1)[-1] or "document"
    for key in objects.list(folder):
        if _version_of(folder, key) not in (version, *keep):
            objects.delete(key)
    objects.put(f"{folder}/{version}/{name}", data)
    return version


def drop_original(objects: ObjectStore, tenant_id: str, namespace_id: str, document_id: str) -> None:
    for key in objects.list(original_folder(tenant_id, namespace_id, document_id)):
        objects.delete(key)


def read_original(objects: ObjectStore | None, record: DocumentRecord, *, limit: int) -> Original | None:
    """The original of the version ``record`` serves — pinned — else what is there now (S3's
    current object, the newest kept original); ``None`` when nothing is (an S3 object removed
    meanwhile: its own event removes the document; a local original dropped by the document's
    delete). An object over ``limit`` bytes raises ``DocumentTooLarge`` before its body is read."""
    if objects is None:
        raise errors.ConfigurationError("no object store is configured: a reindex reads originals there")
    version = record.served_version or (record.version_id if record.status == "ready" else "")
    folder = original_folder(record.tenant_id, record.namespace_id, record.document_id)
    key = object_key_of(record.source)
    if version.startswith(KEPT) or key is None:
        kept = objects.list(folder)
        mine = [k for k in kept if _version_of(folder, k) == version]
        if key is None:  # a local document: its version, or (kept before versions were) its one file
            pinned = bool(mine) or (not version and len(kept) == 1 and not _version_of(folder, kept[0]))
            return _read(objects, (mine or kept or [""])[-1], limit, pinned)
        if mine:  # an S3 record whose served version is a local write's (an S3 event failed since)
            return _read(objects, mine[-1], limit, pinned=True)
    elif version:
        try:
            return Original(key.rsplit("/", 1)[-1], objects.get(key, version_id=version, limit=limit), True)
        except errors.NotFound:
            pass  # that version was deleted since: its own event follows
    return _read(objects, key, limit, pinned=False)


def _read(objects: ObjectStore, key: str, limit: int, pinned: bool) -> Original | None:
    if not key:
        return None
    try:
        return Original(key.rsplit("/", 1)[-1], objects.get(key, limit=limit), pinned)
    except errors.NotFound:
        return None


def _version_of(folder: str, key: str) -> str:
    """The version folder of a kept key (``""`` for one kept before versions existed)."""
    rest = key[len(folder) + 1 :].split("/")
    return rest[0] if len(rest) > 1 else ""
