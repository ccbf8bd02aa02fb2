"""The stored original of every document: what a reindex re-chunks and re-embeds.

A document that came from S3 *is* its object: the version its record names, else the current one. A
document written locally (API text, the CLI) has no object, so its ingest keeps its bytes in the
object store under ``<tenant>/<namespace>/.ragline/originals/<sha256 of the document id>/<version>/
<filename>`` — inside the tenant's folder (a tenant's purge removes them), in a folder S3 ingestion
ignores (it is not a document), named by a digest so no document id can reach another's folder.
``<version>`` is a digest of the bytes, which the write's claim records as its ``version_id``: the
original of the version being written and the one of the version served are both kept until the
newer one replaces the served one, so a document whose newest version failed is still rebuilt from
the version it serves.

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
VERSION_CHARS = 24


@dataclass(frozen=True)
class Original:
    filename: str
    data: bytes
    pinned: bool
    """Whether these are the bytes of the version the record names (else: what S3 serves now under
    the key, which may be a newer object whose own event has not been handled yet)."""


def is_original_key(key: str) -> bool:
    """True for a key under a namespace's originals folder (S3 ingestion skips its events)."""
    parts = key.split("/")
    return len(parts) > 4 and "/".join(parts[2:4]) == ORIGINALS


def original_folder(tenant_id: str, namespace_id: str, document_id: str) -> str:
    digest = hashlib.sha256(document_id.encode()).hexdigest()[:32]
    return f"{tenant_id}/{namespace_id}/{ORIGINALS}/{digest}"


def original_version(data: bytes) -> str:
    """The version id of a locally written document: a digest of its bytes."""
    return hashlib.sha256(data).hexdigest()[:VERSION_CHARS]


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
    """The original of the version ``record`` serves, or is being written (``processing``); ``None``
    when none is stored (an S3 object removed meanwhile: its own event removes the document; a local
    original dropped by the document's delete). An object over ``limit`` bytes raises
    ``DocumentTooLarge`` before its body is read."""
    if objects is None:
        raise errors.ConfigurationError("no object store is configured: a reindex reads originals there")
    version = record.served_version if record.status == "failed" else record.version_id
    key = object_key_of(record.source)
    if key is not None:
        name = key.rsplit("/", 1)[-1]
        if version:
            try:
                return Original(name, objects.get(key, version_id=version, limit=limit), pinned=True)
            except errors.NotFound:
                pass  # that version was deleted since: its own event follows; S3 serves the current
        try:
            return Original(name, objects.get(key, limit=limit), pinned=False)
        except errors.NotFound:
            return None
    folder = original_folder(record.tenant_id, record.namespace_id, record.document_id)
    kept = objects.list(folder)
    if not kept:
        return None
    mine = [k for k in kept if version and _version_of(folder, k) == version]
    key = (mine or kept)[-1]  # else: kept before versions were (one file), or another version's
    try:
        return Original(key.rsplit("/", 1)[-1], objects.get(key, limit=limit), pinned=bool(mine))
    except errors.NotFound:
        return None


def _version_of(folder: str, key: str) -> str:
    """The version folder of a kept key (``""`` for one kept before versions existed)."""
    rest = key[len(folder) + 1 :].split("/")
    return rest[0] if len(rest) > 1 else ""
