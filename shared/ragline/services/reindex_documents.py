"""One document rebuilt into the generation a reindex builds: which documents a generation must hold,
which version of each, and what to do when that version cannot be read now.

A document rebuilt is the version its record serves — also when its newest version failed — read
within the size limit; one deleted or rewritten while its step ran is left to that newer write, which
writes both generations. A document whose own served version cannot be rebuilt (a parser that refuses
it now) fails the rebuild, naming it: a switch never silently drops a served document.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from ragline import errors
from ragline.domain.documents import DocumentRecord
from ragline.domain.s3_events import object_key_of
from ragline.ports import DocumentRegistry, ObjectStore
from ragline.services.generation_writer import GenerationWriter
from ragline.services.generations import Generation
from ragline.services.originals import Original, read_original

_log = logging.getLogger("ragline.services.reindex")  # the service's logger: its records keep their name


def held(record: DocumentRecord) -> bool:
    """Whether a generation must hold the document: it serves a version (also the one before a
    newest version that failed or is being written now: that write is its worker's, which writes
    the generation being built too once it has seen the rebuild)."""
    return record.serves


def served(record: DocumentRecord) -> DocumentRecord:
    """``record`` as the version it serves, at the generation to write it at: the one published —
    never an in-flight claim's, which its own worker publishes if it completes — except after a
    newest version failed: at that failed claim's, above the copy an ingest may have written of
    it in the generation being built before its own publish failed."""
    if record.status == "failed":
        return record
    return record.model_copy(update={"generation": record.indexed_generation})


class DocumentRebuilder:
    """Writes the version each record serves into a generation being built, from its kept original."""

    def __init__(
        self,
        *,
        documents: DocumentRegistry,
        objects: ObjectStore | None,
        writer: GenerationWriter,
        clock: Callable[[], datetime],
        stall_seconds: float,
    ) -> None:
        self._documents = documents
        self._objects = objects
        self._writer = writer
        self._clock = clock
        self._stall_seconds = stall_seconds
        """No change for this long to a document whose version cannot be read: its change was lost."""

    def rebuild(self, target: Generation, record: DocumentRecord) -> None:
        """Write the version ``record`` holds into ``target`` — that version's bytes only: another
        version's, written under its generation, would mix with what a concurrent write put there.
        Left to the document's newer write (which writes this generation too, or is re-done before the
        switch) when the record moved on meanwhile. When the record's version cannot be read but the
        record has not moved on, its change is in flight (a removed S3 version, a newer object: their
        events are queued): :class:`~ragline.errors.DocumentBusy`, and the step is retried after them.
        Any other failure names the document and fails the rebuild."""
        limit = self._writer.settings.max_document_bytes
        try:
            found = read_original(self._objects, record, limit=limit)
        except errors.DocumentTooLarge as exc:
            if record.size > limit:  # the version itself (the limit was lowered since)
                raise _named(record, exc) from exc
            self._in_flight(record, exc.message)  # a newer object, over the limit
            return
        if found is None:
            if object_key_of(record.source) is not None:
                self._in_flight(record, "S3 serves nothing under its key")  # its removal is queued
                return
            if self.moved_on(record):
                return  # deleted meanwhile: its removal writes this generation too
            raise errors.UnreadableDocument(
                f"{record.document_id}: its original was not kept (ingested before reindexing existed):"
                " ingest it again",
                document_id=record.document_id,
            )
        if not found.pinned and not _unversioned_current(record, found):
            self._in_flight(record, "the version it serves is no longer stored")
            return
        version = served(record)
        try:
            if record.status == "failed":  # that copy goes: the version served replaces it, unmixed
                target.store().discard(record.document_id, generation=version.generation)
            self._writer.write(target, version, found.filename, found.data)
        except errors.WorkerOutOfTime:
            raise
        except errors.RaglineError as exc:
            if self.moved_on(record):
                _log.info("reindex left %s to its newer write: %s", record.document_id, exc.message)
                return
            raise _named(record, exc) from exc

    def moved_on(self, record: DocumentRecord) -> bool:
        """Whether a newer claim (an ingest, a delete) took the document since ``record`` was read."""
        now = self._documents.get(record.tenant_id, record.namespace_id, record.document_id)
        return now is None or now.generation != record.generation

    def _in_flight(self, record: DocumentRecord, reason: str) -> None:
        """Nothing to write now: done when a newer claim took the document (it writes this generation
        too), else retried once the document's queued change has been applied — unless no change came
        for ``stall_seconds`` (an event lost, an expired S3 version): then the rebuild fails naming it."""
        if self.moved_on(record):
            return
        if self._clock() - record.updated_at > timedelta(seconds=self._stall_seconds):
            raise errors.UnreadableDocument(
                f"{record.document_id}: {reason}, and no change to it came since"
                f" {record.updated_at.isoformat()}: ingest it again, or delete it",
                document_id=record.document_id,
            )
        raise errors.DocumentBusy(
            f"{record.document_id}: {reason}; its change is queued, the reindex step is retried after it",
            document_id=record.document_id,
        )


def _unversioned_current(record: DocumentRecord, found: Original) -> bool:
    """Whether ``found`` — S3's current object, in a bucket that keeps no versions (the deployed one
    does), for a settled record that names none — is the record's own: nothing names it better than
    its size (a newer object's event is queued otherwise)."""
    return (
        object_key_of(record.source) is not None
        and record.status == "ready"
        and not record.version_id
        and len(found.data) == record.size
    )


def _named(record: DocumentRecord, exc: errors.RaglineError) -> errors.RaglineError:
    """``exc`` naming the document (what a failed rebuild's reason says)."""
    return type(exc)(f"{record.document_id}: {exc.message}", document_id=record.document_id)
