"""One claimed document version through the pipeline: parse → chunk → embed → write → meter → publish,
and the other ways a claim ends (a deletion, a rejected file, a refused claim).

Chunks are written at the claim's generation, beside the served version and unseen by readers; the
publish is the one switch that serves them (deferred to the batch's end in a batch). Vectors of chunk
texts already stored for the document are reused, so an edit embeds only what changed. A version whose
bytes and recipe (:func:`~ragline.services.generation_writer.recipe_of`) are those of the version
served is not even parsed: the served chunks are written again at its generation, with their stored
vectors and its metadata (:meth:`VersionPipeline.restamp`) — an unchanged re-ingest, or a relabel when
only its metadata changed. Bad input (size, type, unreadable, empty, over the parse deadline) fails
*before* the first chunk write; the document then serves nothing and its record ends ``failed`` with
the reason.

Each new version's usage (one document, its chunks and pages, the tokens actually embedded) is
recorded in the tenant's :class:`~ragline.ports.UsageLedger` once, after its chunks are written and
before it is published, keyed by the event that made it (see :meth:`VersionPipeline.meter`). A
version that changes nothing served, or only its metadata, records nothing: nothing was parsed or
embedded for it (a parse that found the served chunks again records only what its chunker embedded).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ragline import errors
from ragline.documents.limits import Deadline
from ragline.documents.parsers import ParsedDocument
from ragline.documents.strategies import Chunked
from ragline.domain.document_metadata import DocumentMetadata
from ragline.domain.documents import DocumentRecord
from ragline.domain.models import MAX_SEQUENCE_NUMBER, IngestUsage, RunUsage
from ragline.domain.tenancy import Namespace
from ragline.ports import VectorStore
from ragline.services.embedding_run import EmbeddingClock, EmbeddingRun
from ragline.services.generation_writer import content_hash_of, parse_and_chunk, recipe_of, stamped
from ragline.services.generations import Generation, serving
from ragline.services.ingest_context import IngestContext
from ragline.services.ingest_publish import settle
from ragline.services.ingest_results import DOCUMENT_ERRORS, IngestResult, Outcome, skipped
from ragline.services.namespaces import claim_embedding_space, require_namespace


class VersionPipeline:
    """Writes, publishes or removes the version a claim holds, within the context's bounds."""

    def __init__(self, context: IngestContext) -> None:
        self._c = context

    def index(
        self,
        record: DocumentRecord,
        namespace: Namespace,
        filename: str,
        data: bytes,
        progress: Callable[[int], None] | None,
        labels: DocumentMetadata,
        same_change: str = "",
        settled: DocumentRecord | None = None,
    ) -> IngestResult:
        """``same_change``: the change the document was last announced ready under, kept when this
        version changes nothing of it (a sidecar event that finds content and labels as they were).
        ``settled``: the record as read just before the claim; when it served this version's bytes by
        the same recipe, the served chunks are kept (see :meth:`_kept`)."""
        generation = self.serving(namespace, record)
        store = generation.store()
        embedder = generation.space.embedder
        recipe = recipe_of(self._c.settings, generation, filename, record.source or filename)
        if self._serves_these(settled, record, data, recipe):
            kept = self._kept(record, namespace, generation, store, len(data), labels, same_change)
            if kept is not None:
                if progress:
                    progress(kept.chunks)
                return kept
        try:
            began = self._c.now()
            parsed, chunked = self._prepare(record, filename, data, generation)
            chunks = stamped(chunked.chunks, labels)
            claim_embedding_space(self._c.registry, namespace, embedder)
            known = store.vectors(record.document_id) if record.generation > 1 else {}
            run = EmbeddingRun(
                embedder,
                known,
                batch_size=self._c.write_batch,
                clock=self._embedding_clock(
                    filename, len({c.text for c in chunks if c.text not in known}), self._c.now() - began
                ),
            )
            done = 0
            for batch in run.batches(chunks):  # vectors of one batch in memory at a time
                store.upsert(batch, generation=record.generation)
                done += len(batch)
                if progress:
                    progress(done)
            embedded = run.embedded
            unchanged = (
                not embedded
                and parsed.content_hash == record.content_hash
                and (labels.attributes, labels.readers) == (record.attributes, record.readers)
            )
            if unchanged:  # the served chunks again: what the chunker embedded is all that was spent
                usage = RunUsage(embedded_tokens=chunked.embedded_tokens)
                self.meter(record, IngestUsage(embedded_tokens=usage.embedded_tokens))
            else:
                tokens = sum(generation.space.tokenizer.count_many(embedded)) + chunked.embedded_tokens
                usage = RunUsage(embedded_tokens=tokens, pages=parsed.pages)
                self.meter(
                    record,
                    IngestUsage(documents=1, chunks=len(chunks), pages=parsed.pages, embedded_tokens=tokens),
                )
            self._c.writer.mirror(namespace, generation.number, record, filename, data, labels)
        except errors.Superseded:
            store.discard(record.document_id, generation=record.generation)
            raise
        except DOCUMENT_ERRORS as exc:  # e.g. its embedding outgrew the run: reject discards what it wrote
            self.reject(store, record, exc)
            raise
        except errors.RaglineError as exc:
            store.discard(record.document_id, generation=record.generation)  # unseen: it goes
            self._c.documents.fail(record, exc.code, exc.message)  # the served version stays as it was
            raise
        self.publish(
            store,
            record,
            record.model_copy(
                update={
                    "status": "ready",
                    "change": same_change if unchanged else "",
                    "content_hash": parsed.content_hash,
                    "recipe": recipe,
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
        return IngestResult(
            record.document_id,
            "unchanged" if unchanged else "indexed",
            len(chunks),
            parsed.pages,
            parsed.content_hash,
            usage,
            notes=tuple(parsed.notes),
        )

    def meter(self, record: DocumentRecord, usage: IngestUsage) -> None:
        """Record the version's indexing once, before it is published: its entry is the event that
        made it (namespace, document, sequencer), so a redelivery after a crash anywhere past this
        point re-claims the same version and records nothing more. A ledger failure raises before the
        publish: the served version stays as it was and the event is retried. Nothing spent, nothing
        recorded (no entry at all: the report's sums are what was done)."""
        if self._c.ledger is None or usage == IngestUsage():
            return
        self._c.ledger.record_ingest(
            record.tenant_id, f"ingest#{record.namespace_id}#{record.document_id}#{record.event_id}", usage
        )

    def _serves_these(
        self, settled: DocumentRecord | None, record: DocumentRecord, data: bytes, recipe: str
    ) -> bool:
        """Whether the store serves ``data``'s chunks now: the record was ``ready`` just before this
        claim — with no claim between, so the version it names is the one published (a claim whose
        publish went through but whose completion failed leaves the record behind the store: never
        trusted) — from the same bytes, by the same recipe, within today's size limit."""
        return (
            settled is not None
            and settled.status == "ready"
            and settled.serves
            and settled.generation + 1 == record.generation
            and settled.indexed_generation == settled.generation
            and settled.recipe == recipe
            and len(data) <= self._c.settings.max_document_bytes
            and settled.content_hash == content_hash_of(data)
        )

    def _kept(
        self,
        record: DocumentRecord,
        namespace: Namespace,
        generation: Generation,
        store: VectorStore,
        size: int,
        labels: DocumentMetadata,
        same_change: str,
    ) -> IngestResult | None:
        """The version served is this one: its chunks written again at the claim's generation with
        ``labels`` — ``unchanged``, or ``indexed`` when the labels are new (a relabel) — and published;
        nothing parsed, embedded or metered. ``None`` (nothing written) when the store serves another
        number of chunks than the record says: the version is then indexed in full."""
        written = self.restamp(record, namespace, generation, store, labels, expected=record.chunk_count)
        if written is None:
            return None
        relabelled = (labels.attributes, labels.readers) != (record.attributes, record.readers)
        done = record.model_copy(
            update={
                "status": "ready",
                "change": "" if relabelled else same_change,
                "size": size,
                "indexed_generation": record.generation,
                "served_version": record.version_id,
                "attributes": labels.attributes,
                "readers": labels.readers,
            }
        )
        self.publish(store, record, done)
        outcome: Outcome = "indexed" if relabelled else "unchanged"
        return IngestResult(
            record.document_id, outcome, written, record.pages, record.content_hash, RunUsage()
        )

    def restamp(
        self,
        record: DocumentRecord,
        namespace: Namespace,
        generation: Generation,
        store: VectorStore,
        labels: DocumentMetadata,
        *,
        expected: int | None = None,
    ) -> int | None:
        """The chunks ``store`` serves for the document written again at the claim's generation,
        carrying ``labels``, with their stored vectors (nothing parsed or embedded), and the same in
        every other generation the namespace serves or builds; how many. ``expected``: the count the
        record says it serves — ``None`` returned, nothing written, when the store serves another."""
        document_id = record.document_id
        try:
            served = store.neighbors(document_id, 0, before=0, after=MAX_SEQUENCE_NUMBER)
            if expected is not None and len(served) != expected:
                return None
            embedder = generation.space.embedder
            run = EmbeddingRun(embedder, store.vectors(document_id), batch_size=self._c.write_batch)
            for batch in run.batches(stamped(served, labels)):
                store.upsert(batch, generation=record.generation)
            self._c.writer.relabel(namespace, generation.number, record, labels)
        except errors.Superseded:
            store.discard(document_id, generation=record.generation)
            raise
        except errors.RaglineError as exc:
            self._c.documents.fail(record, exc.code, exc.message)  # the served version stays as it was
            raise
        return len(served)

    def _prepare(
        self, record: DocumentRecord, filename: str, data: bytes, generation: Generation
    ) -> tuple[ParsedDocument, Chunked]:
        """Parse and chunk within the settings' budget — or the worker's time left, if shorter: a
        document that runs out of the *worker's* time is retried, not failed."""
        settings, worker = self._c.settings, self._c.worker
        seconds = settings.max_document_seconds
        worker_left = worker.remaining() - settings.reserve_seconds if worker else seconds
        clock = worker.clock if worker else time.monotonic
        deadline = Deadline(min(seconds, max(worker_left, 0.0)), clock=clock)
        try:
            parsed, chunked = parse_and_chunk(settings, generation, record, filename, data, deadline)
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
        if self._c.worker is None:
            return None
        return EmbeddingClock(
            deadline=self._c.worker,
            rate=self._c.rate,
            filename=filename,
            reserve_seconds=self._c.settings.reserve_seconds,
            total_texts=texts,
            prepared_seconds=prepared,
        )

    def publish(self, store: VectorStore, claimed: DocumentRecord, done: DocumentRecord) -> None:
        """Make ``done``'s generation the served version, then record it; overtaken → Superseded.
        In a batch, both happen with the batch's publish (see :mod:`ragline.services.ingest_batch`)."""
        if self._c.batch is not None:
            self._c.batch.defer(store, claimed, done)
            return
        settle(store, self._c.documents, done, store.publish(done.document_id, generation=done.generation))

    def delete(self, record: DocumentRecord) -> IngestResult:
        """Publish the claim's generation with no chunks: nothing older can come back."""
        namespace = require_namespace(self._c.registry, record.tenant_id, record.namespace_id)
        generation = self.serving(namespace, record)
        store = generation.store()
        gone = record.model_copy(
            update={
                "status": "deleted",
                "chunk_count": 0,
                "pages": 0,
                "content_hash": "",
                "recipe": "",
                "indexed_generation": record.generation,
                "served_version": "",
                "attributes": {},
                "readers": (),
                "change": record.deleted_change,  # deleted already: the same deletion, not a new one
            }
        )
        self._c.writer.mirror(namespace, generation.number, record, "", None)
        self.publish(store, record, gone)
        return IngestResult(record.document_id, "deleted", 0, 0, "", RunUsage())

    def serving(self, namespace: Namespace, record: DocumentRecord | None = None) -> Generation:
        """Where the namespace's served generation lives and how it is made; a namespace this
        deployment cannot embed for fails ``record`` (its served version stays as it was)."""
        try:
            return serving(self._c.catalog, namespace)
        except errors.RaglineError as exc:
            if record is not None:
                self._c.documents.fail(record, exc.code, exc.message)
            raise

    def reject(self, store: VectorStore, record: DocumentRecord, exc: errors.RaglineError) -> None:
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
                    "recipe": "",
                    "indexed_generation": record.generation,
                    "served_version": "",
                    "attributes": {},
                    "readers": (),
                }
            )
        self._c.documents.fail(record, exc.code, exc.message)

    def refused(self, stored: DocumentRecord, reason: str) -> IngestResult:
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
            namespace = require_namespace(self._c.registry, stored.tenant_id, stored.namespace_id)
            self.serving(namespace).store().publish(stored.document_id, generation=stored.indexed_generation)
        return skipped(stored, "stale" if reason == "stale" else "duplicate")
