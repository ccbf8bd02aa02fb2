"""The stored original of every document: what a reindex re-chunks and re-embeds.

A document that came from S3 *is* its object (the current version under its key). A document written
locally (API text, the CLI) has no object, so its ingest keeps its bytes in the object store under
``<tenant>/<namespace>/.ragline/originals/<sha256 of the document id>/<filename>`` — inside the
tenant's folder (a tenant's purge removes them), in a folder S3 ingestion ignores (it is not a
document), named by a digest so no document id can reach another's folder.
"""

from __future__ import annotations

import hashlib

from ragline import errors
from ragline.domain.documents import DocumentRecord
from ragline.domain.s3_events import object_key_of
from ragline.ports import ObjectStore

ORIGINALS = ".ragline/originals"


def is_original_key(key: str) -> bool:
    """True for a key under a namespace's originals folder (S3 ingestion skips its events)."""
    parts = key.split("/")
    return len(parts) > 4 and "/".join(parts[2:4]) == ORIGINALS


def original_folder(tenant_id: str, namespace_id: str, document_id: str) -> str:
    digest = hashlib.sha256(document_id.encode()).hexdigest()[:32]
    return f"{tenant_id}/{namespace_id}/{ORIGINALS}/{digest}"


def keep_original(
    objects: ObjectStore, tenant_id: str, namespace_id: str, document_id: str, filename: str, data: bytes
) -> None:
    """Store a locally written document's bytes (replacing what an earlier version kept)."""
    folder = original_folder(tenant_id, namespace_id, document_id)
    name = filename.rsplit("/", 1)[-1] or "document"
    for key in objects.list(folder):
        if key != f"{folder}/{name}":
            objects.delete(key)
    objects.put(f"{folder}/{name}", data)


def drop_original(objects: ObjectStore, tenant_id: str, namespace_id: str, document_id: str) -> None:
    for key in objects.list(original_folder(tenant_id, namespace_id, document_id)):
        objects.delete(key)


def read_original(objects: ObjectStore | None, record: DocumentRecord) -> tuple[str, bytes] | None:
    """(filename, bytes) of the document's current original; ``None`` when none is stored (an S3
    object removed meanwhile: its own event removes the document)."""
    if objects is None:
        raise errors.ConfigurationError("no object store is configured: a reindex reads originals there")
    key = object_key_of(record.source)
    if key is None:
        kept = objects.list(original_folder(record.tenant_id, record.namespace_id, record.document_id))
        if not kept:
            raise errors.UnreadableDocument(
                "its original was not kept (ingested before reindexing existed): ingest it again",
                document_id=record.document_id,
            )
        key = kept[-1]
    try:
        return key.rsplit("/", 1)[-1], objects.get(key)
    except errors.NotFound:
        return None
