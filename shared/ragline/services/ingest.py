"""Ingest and remove documents: claim → fetch → parse → chunk → embed → write → publish → complete.

Every ingest and delete first *claims* the document record (see
:class:`~ragline.ports.DocumentRegistry`): an S3 event with its sequencer, a local write (API text,
CLI) as the newest event the registry has seen. A redelivered event that already finished, an event
older than the one already applied, or a copy of an event another worker holds under a live lease
stops there — no fetch, no embedding (the copy's message fails with
:class:`~ragline.errors.DocumentBusy` and comes back after the lease).

Versions never interleave (the rules are :class:`~ragline.ports.VectorStore`'s): chunks are written at
the claim's generation, beside the served version and unseen by readers, then the worker *publishes*
that generation in the store — the one switch that makes it the served version and sweeps every older
one — and only then completes the record. A worker that dies before its publish leaves the served
version whole; what it wrote stays unseen until the next attempt's publish sweeps it. A worker
overtaken by a newer claim loses at the store (its write or its publish is refused), throws away what
it wrote and fails its message with :class:`~ragline.errors.Superseded`; the redelivery is refused as
stale, which sweeps anything a crashed worker left behind. A delete publishes a generation with no
chunks, so nothing older can come back. In a batch (:meth:`IngestService.batch`: the ingestion
function's SQS batch, the CLI's folder) the publish and the completion wait for the batch's end and
are made for all its documents at once (:mod:`ragline.services.ingest_batch`), with the same
per-document outcome.

This module holds the service's entry points; the stages live beside it, by concern:

- :mod:`~ragline.services.ingest_pipeline`: one claimed version written, metered and published
  (vectors reused, bad input failed before the first write, usage recorded once per version);
- :mod:`~ragline.services.ingest_objects`: S3 object and sidecar events, synced to what S3 serves;
- :mod:`~ragline.services.ingest_context`: the settings, collaborators and bounds they share;
- :mod:`~ragline.services.ingest_results`: what an ingest reports, and how its failures are classed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace

from ragline import errors
from ragline.domain.document_metadata import NO_METADATA, MetadataInput
from ragline.domain.documents import normalise_sequencer
from ragline.domain.models import RunUsage, TenantScope
from ragline.ports import (
    DocumentRegistry,
    Embedder,
    ObjectStore,
    TenantRegistry,
    Tokenizer,
    UsageLedger,
    VectorStoreProvider,
)
from ragline.services.embedding_run import WorkerDeadline
from ragline.services.events import Announcer
from ragline.services.generation_writer import GenerationWriter
from ragline.services.generations import ModelCatalog
from ragline.services.ingest_batch import IngestBatch
from ragline.services.ingest_context import IngestContext, IngestSettings
from ragline.services.ingest_objects import ObjectEvent, ObjectSync
from ragline.services.ingest_pipeline import VersionPipeline
from ragline.services.ingest_results import (
    DOCUMENT_ERRORS,
    SETTLED,
    IngestResult,
    Outcome,
    document_id_of,
    skipped,
)
from ragline.services.metadata import resolve_metadata
from ragline.services.namespaces import require_namespace
from ragline.services.originals import drop_original, keep_original

__all__ = [
    "DOCUMENT_ERRORS",
    "SETTLED",
    "WRITE_BATCH",
    "IngestResult",
    "IngestService",
    "IngestSettings",
    "ObjectEvent",
    "Outcome",
    "document_id_of",
]

WRITE_BATCH = 500
"""Chunks embedded and written together (also the embedder's and the bulk request's unit); read
when a service is made."""


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
        bucket: str = "",
        ledger: UsageLedger | None = None,
        catalog: ModelCatalog | None = None,
        announcer: Announcer | None = None,
    ) -> None:
        # ``embedder``: the configured model (a namespace's generations may use others of the catalog)
        catalog = catalog or ModelCatalog.of(embedder, stores, tokenizer)
        writer = GenerationWriter(registry=registry, catalog=catalog, settings=settings, ledger=ledger)
        self._bind(
            IngestContext(
                registry=registry,
                documents=documents,
                catalog=catalog,
                writer=writer,
                settings=settings,
                write_batch=WRITE_BATCH,
                objects=objects,
                bucket=bucket,
                ledger=ledger,
                announcer=announcer,
            )
        )

    def _bind(self, context: IngestContext) -> None:
        """Build the stages on ``context`` (again, for a copy fitted to a worker or a batch)."""
        self._context = context
        self._registry = context.registry
        self._documents = context.documents
        self._objects = context.objects
        self._settings = context.settings
        self._pipeline = VersionPipeline(context)
        self._objects_sync = ObjectSync(context, self._pipeline)

    def _rebound(self, context: IngestContext) -> IngestService:
        bound = copy.copy(self)
        bound._bind(context)
        return bound

    def batch(self, deadline: WorkerDeadline | None = None) -> IngestBatch:
        """Ingest many documents, publishing them together (see :mod:`ragline.services.ingest_batch`):
        an SQS batch, a folder."""
        return IngestBatch(self, self._documents, deadline)

    def deferring(self, batch: IngestBatch) -> IngestService:
        """This service with its publishes deferred to ``batch``."""
        return self._rebound(replace(self._context, batch=batch))

    def within(self, deadline: WorkerDeadline) -> IngestService:
        """This service for work that must end before ``deadline`` (a Lambda invocation's): each
        document's parse budget and embedding are fitted to the time left. Raises
        :class:`~ragline.errors.WorkerOutOfTime` — nothing started, the message is left for
        redelivery — when less than ``min_start_seconds`` is left."""
        left = deadline.remaining()
        if left < self._settings.min_start_seconds:
            raise errors.WorkerOutOfTime(
                f"not started: {left:.1f} s left, under the {self._settings.min_start_seconds:g} s a"
                " message needs",
                seconds_left=round(left, 1),
            )
        return self._rebound(replace(self._context, worker=deadline))

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
        metadata: MetadataInput = NO_METADATA,
    ) -> IngestResult:
        """Index bytes already in hand (CLI, API text) as one document of ``scope``; a bad file raises.
        Without ``sequencer`` it is a local write: ordered after everything the registry holds.
        ``metadata`` is checked and typed first: refused, nothing is claimed or written."""
        namespace = require_namespace(self._registry, scope.tenant_id, scope.namespace_id)
        doc_id = document_id or document_id_of(filename)
        labels = resolve_metadata(self._registry, namespace, metadata)
        self._context.before_claim(scope, doc_id)
        previous = self._documents.get(scope.tenant_id, scope.namespace_id, doc_id)
        self._context.announce_again(previous)
        version = ""
        if self._objects is not None and not (source or "").startswith("s3://"):
            # before the claim: a reindex that sees the claim reads this version's bytes; the
            # served version's stay until this one replaces it (it may fail)
            kept = (previous.served_version, previous.version_id) if previous else ()
            version = keep_original(
                self._objects, scope.tenant_id, scope.namespace_id, doc_id, filename, data, keep=kept
            )
        claim = self._documents.claim(
            scope.tenant_id,
            scope.namespace_id,
            doc_id,
            normalise_sequencer(sequencer) if sequencer else None,
            source=source or filename,
            version_id=version,
            size=len(data),
            lease_seconds=self._settings.claim_lease_seconds,
        )
        if not claim.granted:
            return self._pipeline.refused(claim.record, claim.reason)
        return self._pipeline.index(
            claim.record, namespace, filename, data, progress, labels, settled=previous
        )

    def sync_object(self, event: ObjectEvent) -> IngestResult:
        """Make the document of an S3 event match what S3 serves now (index, or remove if gone)."""
        return self._objects_sync.object(event)

    def sync_sidecar(self, event: ObjectEvent) -> IngestResult:
        """A sidecar changed: its document is synced again (see :meth:`ObjectSync.sidecar`)."""
        return self._objects_sync.sidecar(event)

    def handle_notification(self, body: str) -> list[IngestResult]:
        """One SQS message of S3 events: each object is synced, in the message's order."""
        return self._objects_sync.notification(body)

    def remove(self, scope: TenantScope, document_id: str, sequencer: str | None = None) -> IngestResult:
        """Delete a document's chunks and mark it ``deleted`` (the API's delete of a text document).
        A delete overtaken by another delete of the document (two callers at once) is done: the
        newer one removes what both meant to, and only its change is announced. A deleted document
        found deleted again settles as the same deletion (no second announcement)."""
        self._context.before_claim(scope, document_id)
        self._context.announce_previous(scope, document_id)
        claim = self._documents.claim(
            scope.tenant_id,
            scope.namespace_id,
            document_id,
            normalise_sequencer(sequencer) if sequencer else None,
            deleting=True,
        )
        if not claim.granted:
            return self._pipeline.refused(claim.record, claim.reason)
        try:
            result = self._pipeline.delete(claim.record)
        except errors.Superseded:
            now = self._documents.get(scope.tenant_id, scope.namespace_id, document_id)
            if now is None or now.status not in ("deleting", "deleted"):
                raise  # a newer write overtook it: the document exists again
            result = skipped(now, "deleted")
        if self._objects is not None:
            drop_original(self._objects, scope.tenant_id, scope.namespace_id, document_id)
        return result

    def relabel(self, scope: TenantScope, document_id: str, metadata: MetadataInput) -> IngestResult:
        """Give a served document new metadata and readers without new content: its served chunks are
        written again, carrying them, as a new version — the normal claim → upsert → publish, so
        readers switch from the old labels to the new in one step, never a mix — with their stored
        vectors (nothing is parsed or embedded). ``metadata`` is checked first: refused, nothing
        changes. A document with no settled version (being indexed, failed, deleted) is a conflict."""
        namespace = require_namespace(self._registry, scope.tenant_id, scope.namespace_id)
        stored = self._documents.get(scope.tenant_id, scope.namespace_id, document_id)
        if stored is None or stored.status == "deleted":
            raise errors.NotFound(f"no document {document_id!r}", document_id=document_id)
        if stored.status != "ready":
            raise errors.Conflict(
                f"document {document_id!r} is {stored.status}: its metadata can change once it is ready",
                document_id=document_id,
                status=stored.status,
            )
        labels = resolve_metadata(self._registry, namespace, metadata)
        self._context.before_claim(scope, document_id)
        claim = self._documents.claim(
            scope.tenant_id, scope.namespace_id, document_id, None, source=stored.source,
            version_id=stored.version_id, etag=stored.etag, size=stored.size,
            lease_seconds=self._settings.claim_lease_seconds,
        )  # fmt: skip
        record = claim.record
        generation = self._pipeline.serving(namespace, record)
        store = generation.store()
        served = self._pipeline.restamp(record, namespace, generation, store, labels)
        assert served is not None  # no count expected: every served chunk is written
        done = record.model_copy(
            update={
                "status": "ready",
                "chunk_count": served,
                "indexed_generation": record.generation,
                "served_version": record.version_id,
                "attributes": labels.attributes,
                "readers": labels.readers,
            }
        )
        self._pipeline.publish(store, record, done)
        return IngestResult(document_id, "indexed", served, done.pages, done.content_hash, RunUsage())
