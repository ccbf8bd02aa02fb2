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

An S3 event of any kind means "make the document match what S3 serves now": the object is read, and
indexed if it exists, removed if it does not. So a deleted non-current version re-checks (and keeps)
the live document, and removing a delete marker (an undelete) indexes the restored object. Reads are
bounded by the size limit, never by the event's word: an upload event reads the exact version it
names (its own size was checked), falling back to the current object when that version is gone; a
removal event reads the current object. Either read refuses an object over the limit from its
Content-Length, before its body is read (see :meth:`~ragline.ports.ObjectStore.get`).

Vectors of chunk texts already stored for the document are reused, so a re-upload of the same bytes
(or of an edit) embeds only what changed. Bad input (size, type, unreadable, empty, over the parse
deadline) fails *before* the first chunk write; the document then serves nothing (S3 no longer holds a
readable version) and its record ends ``failed`` with the reason.

Each indexed version's usage (one document, its chunks and pages, the tokens actually embedded) is
recorded in the tenant's :class:`~ragline.ports.UsageLedger` once, after its chunks are written and
before it is published, keyed by the event that made it (see :meth:`IngestService._meter`).
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ragline import errors
from ragline.documents.limits import Deadline
from ragline.documents.parsers import ParsedDocument
from ragline.documents.strategies import Chunked
from ragline.domain.document_metadata import (
    MAX_SIDECAR_BYTES,
    NO_METADATA,
    SIDECAR_SUFFIX,
    DocumentMetadata,
    MetadataInput,
    document_of,
    is_sidecar,
    parse_sidecar,
    sidecar_of,
)
from ragline.domain.documents import (
    S3_SOURCE,
    Claim,
    DocumentRecord,
    already_applied,
    document_id_for,
    normalise_sequencer,
)
from ragline.domain.models import MAX_SEQUENCE_NUMBER, IngestUsage, RunUsage, TenantScope
from ragline.domain.s3_events import parse_notification, split_key
from ragline.domain.tenancy import Namespace
from ragline.ports import (
    DocumentRegistry,
    Embedder,
    ObjectStore,
    TenantRegistry,
    Tokenizer,
    UsageLedger,
    VectorStore,
    VectorStoreProvider,
)
from ragline.services.embedding_run import (
    EmbeddingClock,
    EmbeddingRate,
    EmbeddingRun,
    WorkerDeadline,
)
from ragline.services.events import Announcer
from ragline.services.generation_writer import GenerationWriter, WriterSettings, parse_and_chunk, stamped
from ragline.services.generations import Generation, ModelCatalog, serving
from ragline.services.ingest_batch import IngestBatch, settle
from ragline.services.metadata import resolve_metadata
from ragline.services.namespaces import claim_embedding_space, require_namespace
from ragline.services.originals import drop_original, is_original_key, keep_original

_log = logging.getLogger(__name__)
Outcome = Literal["indexed", "unchanged", "deleted", "stale", "duplicate", "ignored"]
WRITE_BATCH = 500
"""Chunks embedded and written together (also the embedder's and the bulk request's unit)."""
DOCUMENT_ERRORS: tuple[type[errors.RaglineError], ...] = (
    errors.DocumentTooLarge,
    errors.UnsupportedDocument,
    errors.UnreadableDocument,
    errors.EmptyDocument,
)
"""What is wrong with the file itself: the version settles as ``failed`` and the document serves nothing."""
SETTLED: tuple[type[errors.RaglineError], ...] = (
    errors.Superseded,
    errors.EventNotPublished,
    *DOCUMENT_ERRORS,
)
"""Errors whose record is already written when they propagate (the generic handler must not fail it)."""


def document_id_of(path: str) -> str:
    """:func:`~ragline.domain.documents.document_id_for`, refusing an empty name as a bad request."""
    try:
        return document_id_for(path)
    except ValueError as exc:
        raise errors.InvalidRequest(str(exc), path=path) from exc


@dataclass(frozen=True)
class IngestSettings(WriterSettings):
    """The writer's parsing and chunking, and the worker's timing."""

    reserve_seconds: float = 10.0
    """Of a worker's time (see :meth:`IngestService.within`), what is kept for writing the last
    batch, publishing and completing the records (a batch's, together, after its last message):
    parsing and embedding get the rest."""
    min_start_seconds: float = 20.0
    """A message is not started with less of the worker's time left (it is redelivered)."""
    claim_lease_seconds: float = 330.0
    """How long an S3 event's claim keeps copies of that event away: the ingestion function's 300 s
    timeout and a margin (a worker still alive past it has been killed by Lambda). The SQS
    visibility timeout (1,802 s) is longer, so a backed-off copy comes back after the lease."""


@dataclass(frozen=True)
class IngestResult:
    document_id: str
    outcome: Outcome
    chunks: int
    pages: int
    content_hash: str
    usage: RunUsage
    reason: str = ""

    @property
    def skipped(self) -> bool:
        return self.outcome in ("unchanged", "stale", "duplicate", "ignored")


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
    removed: bool = False


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
        self._registry = registry
        self._announcer = announcer
        """Re-announces a redelivered event's settled change (its first announcement is the
        registry's: :class:`~ragline.services.events.AnnouncingDocuments`)."""
        self._catalog = catalog or ModelCatalog.of(embedder, stores, tokenizer)
        """The embedding models a namespace's generations use (``embedder``: the configured one)."""
        self._writer = GenerationWriter(
            registry=registry,
            catalog=self._catalog,
            settings=settings,
            ledger=ledger,
        )
        """Writes each version into the generation a reindex is building, too."""
        self._documents = documents
        self._stores = stores
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._settings = settings
        self._objects = objects
        self._bucket = bucket
        """Events naming another bucket are ignored (``""``: accept any, for local stores)."""
        self._ledger = ledger
        """Where each indexed version's usage is recorded (``None``: not metered; the wiring always
        passes the tenant ledger)."""
        self._worker: WorkerDeadline | None = None
        """When the worker running this service is killed (see :meth:`within`); ``None``: never."""
        self._rate = EmbeddingRate()
        """The embedder's measured throughput, shared by every :meth:`within` copy (a warm worker
        knows it before its next document embeds)."""
        self._batch: IngestBatch | None = None
        """Where publishes are deferred to (see :meth:`batch`); ``None``: each publishes at once."""

    def batch(self, deadline: WorkerDeadline | None = None) -> IngestBatch:
        """Ingest many documents, publishing them together (see :mod:`ragline.services.ingest_batch`):
        an SQS batch, a folder."""
        return IngestBatch(self, self._documents, deadline)

    def deferring(self, batch: IngestBatch) -> IngestService:
        """This service with its publishes deferred to ``batch``."""
        bound = copy.copy(self)
        bound._batch = batch
        return bound

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
        bound = copy.copy(self)
        bound._worker = deadline
        return bound

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
        self._before_claim(scope, doc_id)
        previous = self._documents.get(scope.tenant_id, scope.namespace_id, doc_id)
        self._announce_again(previous)
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
            return self._refused(claim.record, claim.reason)
        return self._index(claim.record, namespace, filename, data, progress, labels)

    def sync_object(self, event: ObjectEvent) -> IngestResult:
        """Make the document of an S3 event match what S3 serves now (index, or remove if gone)."""
        scope = event.scope
        doc_id = document_id_of(event.path)
        seq = normalise_sequencer(event.sequencer)
        if self._tenant_deleted(scope.tenant_id):
            # A deleted tenant keeps nothing — not even a record of the event (its own deletion's
            # version removals arrive here too).
            return _ignored(event.key, f"tenant {scope.tenant_id!r} was deleted")
        self._before_claim(scope, doc_id)
        stored = self._documents.get(scope.tenant_id, scope.namespace_id, doc_id)
        if already_applied(stored, seq):
            self._announce_again(stored)
            return _skipped(stored, "duplicate")  # the cheap path: one registry read
        self._announce_again(stored)  # the change this event replaces, in case its event was lost
        claim = self._documents.claim(
            scope.tenant_id,
            scope.namespace_id,
            doc_id,
            seq,
            deleting=event.removed,
            source=event.source,
            version_id=event.version_id,
            etag=event.etag,
            size=event.size,
            lease_seconds=self._settings.claim_lease_seconds,
        )
        if not claim.granted:
            if claim.reason == "duplicate" and claim.record.sequencer == seq:
                self._announce_again(claim.record)
            return self._refused(claim.record, claim.reason)
        return self._sync_claimed(claim.record, event)

    def sync_sidecar(self, event: ObjectEvent) -> IngestResult:
        """A sidecar changed (written, replaced, deleted): its document is synced again, reading what
        S3 serves now for both (stored vectors reused: no embedding). S3 orders events per key, so a
        sidecar's sequencer says nothing against its document's: the claim is ordered like a local
        write against the document's events, and by its sequencer against the sidecar's own — a
        redelivered or duplicated sidecar event is the same change, applied once (see
        :func:`~ragline.domain.documents.claim_decision`). Whichever of the document's and the
        sidecar's events is applied last reads the current sidecar, so every order of arrival ends
        on it. A document S3 has not announced yet is left to its own event, which reads the
        sidecar; a sidecar with no document beside it is recorded (:meth:`_sidecar_alone`)."""
        scope, doc_path = event.scope, document_of(event.path)
        doc_id = document_id_of(doc_path)
        seq = normalise_sequencer(event.sequencer)
        if self._tenant_deleted(scope.tenant_id):
            return _ignored(event.key, f"tenant {scope.tenant_id!r} was deleted")
        stored = self._documents.get(scope.tenant_id, scope.namespace_id, doc_id)
        doc_event = ObjectEvent(
            scope=scope,
            key=document_of(event.key),
            path=doc_path,
            sequencer="",
            source=stored.source if stored else document_of(event.source),
        )
        if stored is None or stored.status == "queued" or stored.error_code == errors.ReservedName.code:
            return self._sidecar_alone(event, doc_event, stored)
        if stored.status == "deleted" or not stored.source.startswith(S3_SOURCE):
            return _ignored(event.key, "a metadata sidecar; its document's own event reads it")
        if (
            stored.origin == "sidecar"
            and stored.sidecar_sequencer == seq
            and stored.status in ("ready", "deleted")
        ):
            self._announce_again(stored)
            return _skipped(stored, "duplicate")  # a redelivery: one registry read
        if (
            event.removed
            and stored.status == "ready"
            and not (stored.attributes or stored.readers)
            and not self._present(event.key)
        ):  # no sidecar, and the document carries none: nothing to change (no new version)
            return _skipped(stored, "unchanged")
        self._before_claim(scope, doc_id)
        self._announce_again(stored)
        claim = self._sidecar_claim(event, stored)
        if not claim.granted:
            return self._refused(claim.record, claim.reason)
        # a sidecar event that changes nothing (an old one, redelivered after later ones were applied
        # without a new version) is no new change: it settles under the one announced
        same = stored.event_id if stored.status == "ready" else ""
        return self._sync_claimed(claim.record, doc_event, same)

    def _sidecar_claim(self, event: ObjectEvent, stored: DocumentRecord | None) -> Claim:
        claim = self._documents.claim(
            event.scope.tenant_id,
            event.scope.namespace_id,
            document_id_of(document_of(event.path)),
            None,
            source=stored.source if stored else document_of(event.source),
            version_id=stored.version_id if stored else "",
            etag=stored.etag if stored else "",
            size=stored.size if stored else 0,
            lease_seconds=self._settings.claim_lease_seconds,
            sidecar=event.sequencer,
        )
        if not claim.granted and claim.reason == "duplicate":
            self._announce_again(claim.record)
        return claim

    def _sidecar_alone(
        self, event: ObjectEvent, document: ObjectEvent, stored: DocumentRecord | None
    ) -> IngestResult:
        """A sidecar event for a document with no settled record: names ending ``.metadata.json`` are
        reserved for sidecars, so a file so named is never a document. With its document in S3, the
        document's record is ``queued`` for the document's own event, which reads the sidecar — and
        it keeps this event's sequencer, so the event delivered again is no new change. Without,
        the document's record says so — ``failed``, :class:`~ragline.errors.ReservedName`, naming
        the file — so the upload is not dropped unseen; that record is replaced by the document's
        own event when it comes, and deleted when the sidecar is."""
        present = self._present(document.key)
        there = present or self._present(event.key)
        if stored is None and not there:
            return _ignored(event.key, "a metadata sidecar, deleted, of no document")
        self._before_claim(event.scope, document_id_of(document.path))
        claim = self._sidecar_claim(event, stored)
        if not claim.granted:
            return self._refused(claim.record, claim.reason)
        if present:  # queued for its own event, which reads the sidecar: this one is applied
            self._documents.complete(
                claim.record.model_copy(update={"status": "queued", "lease_until": None})
            )
            return _skipped(claim.record, "ignored", "a metadata sidecar; its document's own event reads it")
        if not there:
            return self._delete(claim.record)
        exc = errors.ReservedName(
            f"{event.path!r} was not indexed: a name ending {SIDECAR_SUFFIX!r} is the metadata sidecar"
            f" of the document {document.path!r}, and there is no such document. Upload"
            f" {document.path!r} beside it, or rename the file to index it as a document.",
            filename=event.path,
        )
        _log.warning("%s: %s", event.key, exc.message)
        self._documents.fail(claim.record, exc.code, exc.message)
        return _skipped(claim.record, "ignored", exc.message)

    def _present(self, key: str) -> bool:
        """Whether S3 serves an object under ``key`` now (its body is not read)."""
        if self._objects is None:
            raise errors.ConfigurationError("no object store is configured for S3 ingestion")
        try:
            self._objects.get(key, limit=0)
        except errors.NotFound:
            return False
        except errors.DocumentTooLarge:
            return True
        return True

    def _sync_claimed(
        self, record: DocumentRecord, event: ObjectEvent, same_change: str = ""
    ) -> IngestResult:
        """The claimed document made to match S3: its object (removed if gone) and its sidecar."""
        scope = event.scope
        try:
            namespace = require_namespace(self._registry, scope.tenant_id, scope.namespace_id)
            try:
                data = self._read(event)
            except errors.DocumentTooLarge as too_large:
                self._reject(self._serving(namespace).store(), record, too_large)
                raise
            if data is None:
                return self._delete(record)  # S3 serves nothing under this key any more
            sidecar = self._read_sidecar(event.key)  # after the object: at least as new as it
            labels = resolve_metadata(
                self._registry, namespace, parse_sidecar(sidecar) if sidecar is not None else NO_METADATA
            )
            name = event.path.rsplit("/", 1)[-1]
            return self._index(record, namespace, name, data, None, labels, same_change)
        except SETTLED:
            raise  # settled already (a bad file is `failed` with its reason; its message goes to the DLQ)
        except errors.RaglineError as exc:
            self._documents.fail(record, exc.code, exc.message)
            raise

    def _read(self, event: ObjectEvent) -> bytes | None:
        """What S3 serves for the event's key, never more than the size limit (``None``: nothing).

        An upload reads the version it names: the event's size is that version's, so one over the
        limit is refused without a request; if that version is gone since, a later event on the key
        exists and the current object is read. A removal names no readable version: the current
        object is read. Every read is bounded (the store refuses an object whose length is over the
        limit before reading its body)."""
        limit = self._settings.max_document_bytes
        if self._objects is None:
            raise errors.ConfigurationError("no object store is configured for S3 ingestion")
        if not event.removed and event.size > limit:
            raise errors.DocumentTooLarge(
                f"{event.path} is {event.size} bytes; the limit is {limit}",
                filename=event.path,
                limit=limit,
            )
        if event.version_id:
            try:
                return self._objects.get(event.key, version_id=event.version_id, limit=limit)
            except errors.NotFound:
                pass  # that version was deleted since: its own event follows; S3 serves the current
        try:
            return self._objects.get(event.key, limit=limit)
        except errors.NotFound:
            return None

    def _read_sidecar(self, key: str) -> bytes | None:
        """The object's sidecar as S3 serves it now (``None``: none), never more than its limit (one
        over it reads as over it: :func:`parse_sidecar` refuses it, the version fails with the reason
        and the served one stays)."""
        if self._objects is None:
            raise errors.ConfigurationError("no object store is configured for S3 ingestion")
        try:
            return self._objects.get(sidecar_of(key), limit=MAX_SIDECAR_BYTES)
        except errors.NotFound:
            return None
        except errors.DocumentTooLarge:
            return b" " * (MAX_SIDECAR_BYTES + 1)

    def handle_notification(self, body: str) -> list[IngestResult]:
        """One SQS message of S3 events: each object is synced, in the message's order."""
        results = []
        for s3 in parse_notification(body).records:
            if self._bucket and s3.s3.bucket.name != self._bucket:
                results.append(_ignored(s3.key, f"event for bucket {s3.s3.bucket.name!r}, not ours"))
                continue
            if s3.key.endswith("/"):
                results.append(_ignored(s3.key, "a folder marker, not a document"))
                continue
            if is_original_key(s3.key):
                results.append(_ignored(s3.key, "a kept original, not a document"))
                continue
            scope, path = split_key(s3.key)
            obj = s3.s3.object
            event = ObjectEvent(
                scope=scope,
                key=s3.key,
                path=path,
                sequencer=s3.sequencer,
                version_id="" if s3.removed else obj.version_id or "",  # a removed version is not served
                etag="" if s3.removed else obj.etag,
                size=obj.size,
                source=f"s3://{s3.s3.bucket.name}/{s3.key}",
                removed=s3.removed,
            )
            results.append(self.sync_sidecar(event) if is_sidecar(path) else self.sync_object(event))
        return results

    def remove(self, scope: TenantScope, document_id: str, sequencer: str | None = None) -> IngestResult:
        """Delete a document's chunks and mark it ``deleted`` (the API's delete of a text document).
        A delete overtaken by another delete of the document (two callers at once) is done: the
        newer one removes what both meant to, and only its change is announced. A deleted document
        found deleted again settles as the same deletion (no second announcement)."""
        self._before_claim(scope, document_id)
        self._announce_previous(scope, document_id)
        claim = self._documents.claim(
            scope.tenant_id,
            scope.namespace_id,
            document_id,
            normalise_sequencer(sequencer) if sequencer else None,
            deleting=True,
        )
        if not claim.granted:
            return self._refused(claim.record, claim.reason)
        try:
            result = self._delete(claim.record)
        except errors.Superseded:
            now = self._documents.get(scope.tenant_id, scope.namespace_id, document_id)
            if now is None or now.status not in ("deleting", "deleted"):
                raise  # a newer write overtook it: the document exists again
            result = _skipped(now, "deleted")
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
        self._before_claim(scope, document_id)
        claim = self._documents.claim(
            scope.tenant_id, scope.namespace_id, document_id, None, source=stored.source,
            version_id=stored.version_id, etag=stored.etag, size=stored.size,
            lease_seconds=self._settings.claim_lease_seconds,
        )  # fmt: skip
        record = claim.record
        generation = self._serving(namespace, record)
        store = generation.store()
        try:
            served = store.neighbors(document_id, 0, before=0, after=MAX_SEQUENCE_NUMBER)
            run = EmbeddingRun(generation.space.embedder, store.vectors(document_id), batch_size=WRITE_BATCH)
            for batch in run.batches(stamped(served, labels)):
                store.upsert(batch, generation=record.generation)
            self._writer.relabel(namespace, generation.number, record, labels)
        except errors.Superseded:
            store.discard(document_id, generation=record.generation)
            raise
        except errors.RaglineError as exc:
            self._documents.fail(record, exc.code, exc.message)  # the served version stays as it was
            raise
        done = record.model_copy(
            update={
                "status": "ready",
                "chunk_count": len(served),
                "indexed_generation": record.generation,
                "served_version": record.version_id,
                "attributes": labels.attributes,
                "readers": labels.readers,
            }
        )
        self._publish(store, record, done)
        return IngestResult(document_id, "indexed", len(served), done.pages, done.content_hash, RunUsage())

    def _announce_again(self, stored: DocumentRecord | None) -> None:
        """The settled change ``stored`` holds, announced again under its id: a redelivered event's
        (its first publish may have been lost with the worker that settled it), or the change a new
        event is about to replace (else a change whose publish failed, superseded before its message
        came back, would never be announced). Consumers dedupe; nothing is sent twice to a webhook."""
        if self._announcer is not None and stored is not None:
            self._announcer.settled(stored)

    def _announce_previous(self, scope: TenantScope, document_id: str) -> None:
        """:meth:`_announce_again` for a local write (one more registry read, only with events on)."""
        if self._announcer is not None and self._announcer.enabled:
            self._announce_again(self._documents.get(scope.tenant_id, scope.namespace_id, document_id))

    def _before_claim(self, scope: TenantScope, document_id: str) -> None:
        if self._batch is not None:
            self._batch.before_claim(scope, document_id)

    def _tenant_deleted(self, tenant_id: str) -> bool:
        """Only ``deleted`` stops the sync: a suspended tenant's bucket is still indexed (suspension
        stops the API, not the index), and a namespace without a tenant record fails as before."""
        try:
            return self._registry.get_tenant(tenant_id).status == "deleted"
        except errors.NotFound:
            return False

    # -- the pipeline -------------------------------------------------------------------------
    def _index(
        self,
        record: DocumentRecord,
        namespace: Namespace,
        filename: str,
        data: bytes,
        progress: Callable[[int], None] | None,
        labels: DocumentMetadata,
        same_change: str = "",
    ) -> IngestResult:
        """``same_change``: the change the document was last announced ready under, kept when this
        version changes nothing of it (a sidecar event that finds content and labels as they were)."""
        generation = self._serving(namespace, record)
        store = generation.store()
        embedder = generation.space.embedder
        try:
            began = self._now()
            parsed, chunked = self._prepare(record, filename, data, generation)
            chunks = stamped(chunked.chunks, labels)
            claim_embedding_space(self._registry, namespace, embedder)
            known = store.vectors(record.document_id) if record.generation > 1 else {}
            run = EmbeddingRun(
                embedder,
                known,
                batch_size=WRITE_BATCH,
                clock=self._embedding_clock(
                    filename, len({c.text for c in chunks if c.text not in known}), self._now() - began
                ),
            )
            done = 0
            for batch in run.batches(chunks):  # vectors of one batch in memory at a time
                store.upsert(batch, generation=record.generation)
                done += len(batch)
                if progress:
                    progress(done)
            embedded = run.embedded
            embedded_tokens = sum(generation.space.tokenizer.count_many(embedded)) + chunked.embedded_tokens
            self._meter(record, chunks=len(chunks), pages=parsed.pages, embedded_tokens=embedded_tokens)
            self._writer.mirror(namespace, generation.number, record, filename, data, labels)
        except errors.Superseded:
            store.discard(record.document_id, generation=record.generation)
            raise
        except DOCUMENT_ERRORS as exc:  # e.g. its embedding outgrew the run: _reject discards what it wrote
            self._reject(store, record, exc)
            raise
        except errors.RaglineError as exc:
            store.discard(record.document_id, generation=record.generation)  # unseen: it goes
            self._documents.fail(record, exc.code, exc.message)  # the served version stays as it was
            raise
        unchanged = (
            not embedded
            and parsed.content_hash == record.content_hash
            and (labels.attributes, labels.readers) == (record.attributes, record.readers)
        )
        self._publish(
            store,
            record,
            record.model_copy(
                update={
                    "status": "ready",
                    "change": same_change if unchanged else "",
                    "content_hash": parsed.content_hash,
                    "chunk_count": len(chunks),
                    "pages": parsed.pages,
                    "size": len(data),  # what was indexed (a removal event names no size)
                    "indexed_generation": record.generation,
                    "served_version": record.version_id,
                    "attributes": labels.attributes,
                    "readers": labels.readers,
                }
            ),
        )
        usage = RunUsage(embedded_tokens=embedded_tokens, pages=parsed.pages)
        return IngestResult(
            record.document_id,
            "unchanged" if unchanged else "indexed",
            len(chunks),
            parsed.pages,
            parsed.content_hash,
            usage,
        )

    def _meter(self, record: DocumentRecord, *, chunks: int, pages: int, embedded_tokens: int) -> None:
        """Record the version's indexing once, before it is published: its entry is the event that
        made it (namespace, document, sequencer), so a redelivery after a crash anywhere past this
        point re-claims the same version and records nothing more. A ledger failure raises before the
        publish: the served version stays as it was and the event is retried."""
        if self._ledger is None:
            return
        self._ledger.record_ingest(
            record.tenant_id,
            f"ingest#{record.namespace_id}#{record.document_id}#{record.event_id}",
            IngestUsage(documents=1, chunks=chunks, pages=pages, embedded_tokens=embedded_tokens),
        )

    def _prepare(
        self, record: DocumentRecord, filename: str, data: bytes, generation: Generation
    ) -> tuple[ParsedDocument, Chunked]:
        """Parse and chunk within the settings' budget — or the worker's time left, if shorter: a
        document that runs out of the *worker's* time is retried, not failed."""
        seconds = self._settings.max_document_seconds
        worker_left = self._worker.remaining() - self._settings.reserve_seconds if self._worker else seconds
        clock = self._worker.clock if self._worker else time.monotonic
        deadline = Deadline(min(seconds, max(worker_left, 0.0)), clock=clock)
        try:
            parsed, chunked = parse_and_chunk(self._settings, generation, record, filename, data, deadline)
        except errors.DocumentDeadlineExceeded as exc:
            if worker_left >= seconds:
                raise  # the document's own budget: its fault
            raise errors.WorkerOutOfTime(
                f"Left {filename!r} for a later invocation: the worker ran out of time while parsing it.",
                filename=filename,
                seconds_left=round(max(worker_left, 0.0), 1),
            ) from exc
        if not chunked.chunks:
            raise errors.EmptyDocument(f"{filename} holds no indexable text", filename=filename)
        return parsed, chunked

    def _embedding_clock(self, filename: str, texts: int, prepared: float) -> EmbeddingClock | None:
        """The worker's clock on one document of ``texts`` texts to embed (``None``: no worker)."""
        if self._worker is None:
            return None
        return EmbeddingClock(
            deadline=self._worker,
            rate=self._rate,
            filename=filename,
            reserve_seconds=self._settings.reserve_seconds,
            total_texts=texts,
            prepared_seconds=prepared,
        )

    def _now(self) -> float:
        return self._worker.clock() if self._worker else time.monotonic()

    def _publish(self, store: VectorStore, claimed: DocumentRecord, done: DocumentRecord) -> None:
        """Make ``done``'s generation the served version, then record it; overtaken → Superseded.
        In a batch, both happen with the batch's publish (see :mod:`ragline.services.ingest_batch`)."""
        if self._batch is not None:
            self._batch.defer(store, claimed, done)
            return
        settle(store, self._documents, done, store.publish(done.document_id, generation=done.generation))

    def _delete(self, record: DocumentRecord) -> IngestResult:
        namespace = require_namespace(self._registry, record.tenant_id, record.namespace_id)
        generation = self._serving(namespace, record)
        store = generation.store()
        gone = record.model_copy(
            update={
                "status": "deleted",
                "chunk_count": 0,
                "pages": 0,
                "content_hash": "",
                "indexed_generation": record.generation,
                "served_version": "",
                "attributes": {},
                "readers": (),
                "change": record.deleted_change,  # deleted already: the same deletion, not a new one
            }
        )
        self._writer.mirror(namespace, generation.number, record, "", None)
        self._publish(store, record, gone)
        return IngestResult(record.document_id, "deleted", 0, 0, "", RunUsage())

    def _serving(self, namespace: Namespace, record: DocumentRecord | None = None) -> Generation:
        """Where the namespace's served generation lives and how it is made; a namespace this
        deployment cannot embed for fails ``record`` (its served version stays as it was)."""
        try:
            return serving(self._catalog, namespace)
        except errors.RaglineError as exc:
            if record is not None:
                self._documents.fail(record, exc.code, exc.message)
            raise

    def _reject(self, store: VectorStore, record: DocumentRecord, exc: errors.RaglineError) -> None:
        """A version that cannot be indexed replaces the served one with nothing (S3 no longer
        serves that content), unless a newer version was published meanwhile. What it wrote before
        it failed goes first: publishing its generation must serve nothing of it."""
        store.discard(record.document_id, generation=record.generation)
        if store.publish(record.document_id, generation=record.generation):
            record = record.model_copy(
                update={
                    "chunk_count": 0,
                    "pages": 0,
                    "content_hash": "",
                    "indexed_generation": record.generation,
                    "served_version": "",
                    "attributes": {},
                    "readers": (),
                }
            )
        self._documents.fail(record, exc.code, exc.message)

    def _refused(self, stored: DocumentRecord, reason: str) -> IngestResult:
        """A stale event whose document is settled sweeps what a crashed, overtaken worker may have
        left (publishing the served generation again is idempotent and refused if a newer one exists).
        A copy of an event another worker holds fails, so its message comes back after the lease."""
        if reason == "busy":
            raise errors.DocumentBusy(
                f"another worker holds this event's claim until {stored.lease_until}; retried after it",
                document_id=stored.document_id,
            )
        if (
            reason == "stale"
            and stored.status in ("ready", "deleted", "failed")
            and stored.indexed_generation
        ):
            namespace = require_namespace(self._registry, stored.tenant_id, stored.namespace_id)
            self._serving(namespace).store().publish(stored.document_id, generation=stored.indexed_generation)
        return _skipped(stored, "stale" if reason == "stale" else "duplicate")


def _skipped(record: DocumentRecord, outcome: Outcome, reason: str = "") -> IngestResult:
    return IngestResult(
        record.document_id, outcome, record.chunk_count, record.pages, record.content_hash, RunUsage(), reason
    )


def _ignored(key: str, reason: str) -> IngestResult:
    return IngestResult(key, "ignored", 0, 0, "", RunUsage(), reason)
