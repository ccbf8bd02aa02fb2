"""Ingest and remove documents: claim → fetch → parse → chunk → embed → write new → delete old.

Every ingest and delete first *claims* the document record with its event's sequencer (see
:class:`~ragline.ports.DocumentRegistry`): a redelivered event that already finished, or an event
older than the one already applied, stops there — one registry call, no fetch, no embedding.
Chunks are written at the claim's generation and only then are older generations deleted, so a
reader never sees a document with no chunks or with two versions' chunks; a slow worker holding an
older generation can never overwrite a newer version (the stores refuse it).

Bad input (size, type, unreadable, empty) fails *before* the first chunk write, so nothing of a bad
file is stored; its record ends ``failed`` with the reason.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ragline import errors
from ragline.documents.chunker import chunk_document
from ragline.documents.parsers import parse_document
from ragline.domain.documents import DocumentRecord, normalise_sequencer
from ragline.domain.models import RunUsage, TenantScope
from ragline.domain.s3_events import parse_notification, split_key
from ragline.domain.tenancy import Namespace
from ragline.ports import (
    DocumentRegistry,
    Embedder,
    ObjectStore,
    TenantRegistry,
    Tokenizer,
    VectorStore,
    VectorStoreProvider,
)
from ragline.services.namespaces import claim_embedding_space, require_namespace

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-/]+")
Outcome = Literal["indexed", "unchanged", "deleted", "stale", "duplicate"]


def document_id_for(path: str) -> str:
    """A readable, stable document id from a relative path (``#`` is reserved for chunk ids)."""
    cleaned = _UNSAFE.sub("_", path.strip("/")).strip("_")
    if not cleaned:
        raise errors.InvalidRequest("a document needs a non-empty name", path=path)
    if len(cleaned) > 200:
        cleaned = cleaned[:180] + "-" + hashlib.sha256(path.encode()).hexdigest()[:16]
    return cleaned


def local_sequencer() -> str:
    """For documents that do not come from S3 events: wall-clock order, in S3's sequencer format."""
    return f"{time.time_ns():X}"


@dataclass(frozen=True)
class IngestSettings:
    chunk_tokens: int = 200
    chunk_overlap_tokens: int = 32
    max_document_bytes: int = 50 * 1024 * 1024


@dataclass(frozen=True)
class IngestResult:
    document_id: str
    outcome: Outcome
    chunks: int
    pages: int
    content_hash: str
    usage: RunUsage

    @property
    def skipped(self) -> bool:
        return self.outcome in ("unchanged", "stale", "duplicate")


@dataclass(frozen=True)
class ObjectEvent:
    """One S3 object event, already decoded: ``path`` is the key below ``<tenant>/<namespace>/``."""

    scope: TenantScope
    key: str
    path: str
    sequencer: str
    version_id: str = ""
    etag: str = ""
    size: int = 0
    source: str = ""


class IngestService:
    def __init__(
        self,
        *,
        registry: TenantRegistry,
        documents: DocumentRegistry,
        stores: VectorStoreProvider,
        embedder: Embedder,
        tokenizer: Tokenizer,
        settings: IngestSettings,
        objects: ObjectStore | None = None,
    ) -> None:
        self._registry = registry
        self._documents = documents
        self._stores = stores
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._settings = settings
        self._objects = objects

    # -- entry points -------------------------------------------------------------------------
    def ingest(
        self,
        scope: TenantScope,
        *,
        filename: str,
        data: bytes,
        document_id: str | None = None,
        source: str = "",
        sequencer: str | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> IngestResult:
        """Index bytes already in hand (CLI, API text) as one document of ``scope``."""
        namespace = require_namespace(self._registry, scope.tenant_id, scope.namespace_id)
        doc_id = document_id or document_id_for(filename)
        claim = self._documents.claim(
            scope.tenant_id,
            scope.namespace_id,
            doc_id,
            normalise_sequencer(sequencer or local_sequencer()),
            source=source or filename,
            size=len(data),
        )
        if not claim.granted:
            return _skipped(claim.record, claim.reason)
        return self._index(claim.record, namespace, filename, data, progress)

    def ingest_object(self, event: ObjectEvent) -> IngestResult:
        """Index an S3 object named by an event; unknown namespaces are recorded as failed, not indexed."""
        scope = event.scope
        doc_id = document_id_for(event.path)
        seq = normalise_sequencer(event.sequencer)
        stored = self._documents.get(scope.tenant_id, scope.namespace_id, doc_id)
        if stored is not None and stored.sequencer == seq and stored.status in ("ready", "deleted"):
            return _skipped(stored, "duplicate")  # the cheap path: one registry read
        claim = self._documents.claim(
            scope.tenant_id,
            scope.namespace_id,
            doc_id,
            seq,
            source=event.source,
            version_id=event.version_id,
            etag=event.etag,
            size=event.size,
        )
        if not claim.granted:
            return _skipped(claim.record, claim.reason)
        record = claim.record
        try:
            namespace = require_namespace(self._registry, scope.tenant_id, scope.namespace_id)
            if event.size > self._settings.max_document_bytes:
                raise errors.DocumentTooLarge(
                    f"{event.path} is {event.size} bytes; the limit is {self._settings.max_document_bytes}",
                    filename=event.path,
                    limit=self._settings.max_document_bytes,
                )
            if self._objects is None:
                raise errors.ConfigurationError("no object store is configured for S3 ingestion")
        except errors.RaglineError as exc:
            self._documents.fail(record, exc.code, exc.message)
            raise
        try:
            data = self._objects.get(event.key)
        except errors.NotFound:
            # Deleted since the event was sent: its ObjectRemoved event (newer) will settle the record.
            self._documents.fail(record, "object_gone", f"{event.key} no longer exists")
            return _skipped(record, "stale")
        except errors.RaglineError as exc:
            self._documents.fail(record, exc.code, exc.message)
            raise
        return self._index(record, namespace, event.path.rsplit("/", 1)[-1], data, None)

    def handle_notification(self, body: str) -> list[IngestResult]:
        """One SQS message of S3 events: each object is ingested or removed, in the message's order."""
        results = []
        for s3 in parse_notification(body).records:
            scope, path = split_key(s3.key)
            if s3.removed:
                results.append(self.remove(scope, document_id_for(path), s3.sequencer))
                continue
            obj = s3.s3.object
            event = ObjectEvent(
                scope=scope,
                key=s3.key,
                path=path,
                sequencer=s3.sequencer,
                version_id=obj.version_id or "",
                etag=obj.etag,
                size=obj.size,
                source=f"s3://{s3.s3.bucket.name}/{s3.key}",
            )
            results.append(self.ingest_object(event))
        return results

    def remove(self, scope: TenantScope, document_id: str, sequencer: str | None = None) -> IngestResult:
        """Delete a document's chunks and mark it ``deleted`` (S3 ObjectRemoved, or the API)."""
        claim = self._documents.claim(
            scope.tenant_id,
            scope.namespace_id,
            document_id,
            normalise_sequencer(sequencer or local_sequencer()),
            deleting=True,
        )
        if not claim.granted:
            return _skipped(claim.record, claim.reason)
        self._stores.scoped(scope).delete_document(document_id)
        record = claim.record.model_copy(update={"status": "deleted", "chunk_count": 0})
        self._documents.complete(record)
        return IngestResult(document_id, "deleted", 0, 0, record.content_hash, RunUsage())

    # -- the pipeline -------------------------------------------------------------------------
    def _index(
        self,
        record: DocumentRecord,
        namespace: Namespace,
        filename: str,
        data: bytes,
        progress: Callable[[int], None] | None,
    ) -> IngestResult:
        scope = TenantScope(tenant_id=record.tenant_id, namespace_id=record.namespace_id)
        store = self._stores.scoped(scope)
        try:
            parsed = parse_document(filename, data, max_bytes=self._settings.max_document_bytes)
            if parsed.content_hash == record.content_hash and record.chunk_count == store.count(
                record.document_id
            ):
                # Same bytes as the version already indexed: keep its chunks, just mark the new version.
                self._documents.complete(record.model_copy(update={"status": "ready"}))
                return IngestResult(
                    record.document_id,
                    "unchanged",
                    record.chunk_count,
                    parsed.pages,
                    parsed.content_hash,
                    RunUsage(),
                )
            chunks = chunk_document(
                parsed,
                document_id=record.document_id,
                tokenizer=self._tokenizer,
                chunk_tokens=self._settings.chunk_tokens,
                overlap_tokens=self._settings.chunk_overlap_tokens,
                filename=filename,
                source=record.source or filename,
            )
            if not chunks:
                raise errors.EmptyDocument(f"{filename} holds no indexable text", filename=filename)
            claim_embedding_space(self._registry, namespace, self._embedder)
            texts = [c.text for c in chunks]
            vectors = self._embedder.embed_documents(texts)
            stamped = [
                c.model_copy(update={"embedding": tuple(float(x) for x in vectors[i])})
                for i, c in enumerate(chunks)
            ]
            for start in range(0, len(stamped), 500):
                store.upsert(stamped[start : start + 500], generation=record.generation)
                if progress:
                    progress(min(start + 500, len(stamped)))
        except errors.RaglineError as exc:
            self._documents.fail(record, exc.code, exc.message)
            raise
        done = record.model_copy(
            update={
                "status": "ready",
                "content_hash": parsed.content_hash,
                "chunk_count": len(stamped),
                "pages": parsed.pages,
            }
        )
        self._finish(store, done)
        usage = RunUsage(embedded_tokens=sum(self._tokenizer.count_many(texts)), pages=parsed.pages)
        return IngestResult(
            record.document_id, "indexed", len(stamped), parsed.pages, parsed.content_hash, usage
        )

    def _finish(self, store: VectorStore, done: DocumentRecord) -> None:
        """Drop older generations' chunks, then mark the record; a newer claim may have taken over."""
        store.delete_document(done.document_id, older_than=done.generation)
        self._documents.complete(done)


def _skipped(record: DocumentRecord, reason: str) -> IngestResult:
    outcome: Outcome = "stale" if reason == "stale" else "duplicate"
    return IngestResult(
        record.document_id, outcome, record.chunk_count, record.pages, record.content_hash, RunUsage()
    )
