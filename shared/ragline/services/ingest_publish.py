"""Settling a document version after its publish: its record completes, or it was overtaken.

A version is published on its own (:class:`~ragline.services.ingest.IngestService`) or with its
batch (:class:`~ragline.services.ingest_batch.IngestBatch`); either way what follows the store's
answer is the same, and lives here so that neither module needs the other for it.
"""

from __future__ import annotations

from ragline import errors
from ragline.domain.documents import DocumentRecord
from ragline.ports import DocumentRegistry, VectorStore


def settle(store: VectorStore, documents: DocumentRegistry, done: DocumentRecord, published: bool) -> None:
    """After ``done``'s publish: refused → its version is discarded; else its record completes.
    Overtaken either way → :class:`~ragline.errors.Superseded`."""
    if not published:
        store.discard(done.document_id, generation=done.generation)
        raise errors.Superseded(
            "a newer version of the document was published first; this one was discarded",
            document_id=done.document_id,
        )
    if not documents.complete(done):
        _served_meanwhile(documents, done)
        raise errors.Superseded(
            "a newer event claimed the document while this version was published; it replaces it",
            document_id=done.document_id,
        )


SERVED_FIELDS = (
    "indexed_generation", "served_version", "content_hash", "recipe", "chunk_count", "pages",
    "attributes", "readers",
)  # fmt: skip
"""What a record says of the version readers are served (a claim keeps them from the last one)."""


def _served_meanwhile(documents: DocumentRegistry, done: DocumentRecord) -> None:
    """``done``'s version is served — its publish raised the fence — though a newer claim took the
    record and failed before its own publish: the failed record says which version readers get now
    (a write conditional on that claim: a newer one settles the record itself). A newer claim still
    at work is left alone: it settles the record when it ends."""
    current = documents.get(done.tenant_id, done.namespace_id, done.document_id)
    if current is None or current.generation <= done.generation or current.status != "failed":
        return
    if current.indexed_generation >= done.generation:
        return
    documents.complete(current.model_copy(update={f: getattr(done, f) for f in SERVED_FIELDS}))
