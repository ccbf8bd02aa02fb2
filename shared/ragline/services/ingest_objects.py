"""S3 object events: make a document match what S3 serves now — its object and its metadata sidecar.

An S3 event of any kind means "make the document match what S3 serves now": the object is read, and
indexed if it exists, removed if it does not. So a deleted non-current version re-checks (and keeps)
the live document, and removing a delete marker (an undelete) indexes the restored object. Reads are
bounded by the size limit, never by the event's word: an upload event reads the exact version it
names (its own size was checked), falling back to the current object when that version is gone; a
removal event reads the current object. Either read refuses an object over the limit from its
Content-Length, before its body is read (see :meth:`~ragline.ports.ObjectStore.get`).

A sidecar (``<file>.metadata.json``) event syncs its document again: see :meth:`ObjectSync.sidecar`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ragline import errors
from ragline.domain.document_metadata import (
    MAX_SIDECAR_BYTES,
    NO_METADATA,
    SIDECAR_SUFFIX,
    document_of,
    is_sidecar,
    parse_sidecar,
    sidecar_of,
)
from ragline.domain.documents import S3_SOURCE, Claim, DocumentRecord, already_applied, normalise_sequencer
from ragline.domain.models import TenantScope
from ragline.domain.s3_events import parse_notification, split_key
from ragline.services.ingest_context import IngestContext
from ragline.services.ingest_pipeline import VersionPipeline
from ragline.services.ingest_results import SETTLED, IngestResult, document_id_of, ignored, skipped
from ragline.services.metadata import resolve_metadata
from ragline.services.namespaces import require_namespace
from ragline.services.originals import is_original_key

_log = logging.getLogger("ragline.services.ingest")  # the service's logger: its records keep their name


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


class ObjectSync:
    """Claims each S3 event's document and has the pipeline index or remove it."""

    def __init__(self, context: IngestContext, pipeline: VersionPipeline) -> None:
        self._c = context
        self._pipeline = pipeline

    def notification(self, body: str) -> list[IngestResult]:
        """One SQS message of S3 events: each object is synced, in the message's order."""
        results = []
        for s3 in parse_notification(body).records:
            if self._c.bucket and s3.s3.bucket.name != self._c.bucket:
                results.append(ignored(s3.key, f"event for bucket {s3.s3.bucket.name!r}, not ours"))
                continue
            if s3.key.endswith("/"):
                results.append(ignored(s3.key, "a folder marker, not a document"))
                continue
            if is_original_key(s3.key):
                results.append(ignored(s3.key, "a kept original, not a document"))
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
            results.append(self.sidecar(event) if is_sidecar(path) else self.object(event))
        return results

    def object(self, event: ObjectEvent) -> IngestResult:
        """Make the document of an S3 event match what S3 serves now (index, or remove if gone)."""
        scope = event.scope
        doc_id = document_id_of(event.path)
        seq = normalise_sequencer(event.sequencer)
        if self._tenant_deleted(scope.tenant_id):
            # A deleted tenant keeps nothing — not even a record of the event (its own deletion's
            # version removals arrive here too).
            return ignored(event.key, f"tenant {scope.tenant_id!r} was deleted")
        self._c.before_claim(scope, doc_id)
        stored = self._c.documents.get(scope.tenant_id, scope.namespace_id, doc_id)
        if already_applied(stored, seq):
            self._c.announce_again(stored)
            return skipped(stored, "duplicate")  # the cheap path: one registry read
        self._c.announce_again(stored)  # the change this event replaces, in case its event was lost
        claim = self._c.documents.claim(
            scope.tenant_id,
            scope.namespace_id,
            doc_id,
            seq,
            deleting=event.removed,
            source=event.source,
            version_id=event.version_id,
            etag=event.etag,
            size=event.size,
            lease_seconds=self._c.settings.claim_lease_seconds,
        )
        if not claim.granted:
            if claim.reason == "duplicate" and claim.record.sequencer == seq:
                self._c.announce_again(claim.record)
            return self._pipeline.refused(claim.record, claim.reason)
        return self._sync_claimed(claim.record, event, settled=stored)

    def sidecar(self, event: ObjectEvent) -> IngestResult:
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
            return ignored(event.key, f"tenant {scope.tenant_id!r} was deleted")
        stored = self._c.documents.get(scope.tenant_id, scope.namespace_id, doc_id)
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
            return ignored(event.key, "a metadata sidecar; its document's own event reads it")
        if (
            stored.origin == "sidecar"
            and stored.sidecar_sequencer == seq
            and stored.status in ("ready", "deleted")
        ):
            self._c.announce_again(stored)
            return skipped(stored, "duplicate")  # a redelivery: one registry read
        if (
            event.removed
            and stored.status == "ready"
            and not (stored.attributes or stored.readers)
            and not self._present(event.key)
        ):  # no sidecar, and the document carries none: nothing to change (no new version)
            return skipped(stored, "unchanged")
        self._c.before_claim(scope, doc_id)
        self._c.announce_again(stored)
        claim = self._sidecar_claim(event, stored)
        if not claim.granted:
            return self._pipeline.refused(claim.record, claim.reason)
        # a sidecar event that changes nothing (an old one, redelivered after later ones were applied
        # without a new version) is no new change: it settles under the one announced
        same = stored.event_id if stored.status == "ready" else ""
        return self._sync_claimed(claim.record, doc_event, same, settled=stored)

    def _sidecar_claim(self, event: ObjectEvent, stored: DocumentRecord | None) -> Claim:
        claim = self._c.documents.claim(
            event.scope.tenant_id,
            event.scope.namespace_id,
            document_id_of(document_of(event.path)),
            None,
            source=stored.source if stored else document_of(event.source),
            version_id=stored.version_id if stored else "",
            etag=stored.etag if stored else "",
            size=stored.size if stored else 0,
            lease_seconds=self._c.settings.claim_lease_seconds,
            sidecar=event.sequencer,
        )
        if not claim.granted and claim.reason == "duplicate":
            self._c.announce_again(claim.record)
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
            return ignored(event.key, "a metadata sidecar, deleted, of no document")
        self._c.before_claim(event.scope, document_id_of(document.path))
        claim = self._sidecar_claim(event, stored)
        if not claim.granted:
            return self._pipeline.refused(claim.record, claim.reason)
        if present:  # queued for its own event, which reads the sidecar: this one is applied
            self._c.documents.complete(
                claim.record.model_copy(update={"status": "queued", "lease_until": None})
            )
            return skipped(claim.record, "ignored", "a metadata sidecar; its document's own event reads it")
        if not there:
            return self._pipeline.delete(claim.record)
        exc = errors.ReservedName(
            f"{event.path!r} was not indexed: a name ending {SIDECAR_SUFFIX!r} is the metadata sidecar"
            f" of the document {document.path!r}, and there is no such document. Upload"
            f" {document.path!r} beside it, or rename the file to index it as a document.",
            filename=event.path,
        )
        _log.warning("%s: %s", event.key, exc.message)
        self._c.documents.fail(claim.record, exc.code, exc.message)
        return skipped(claim.record, "ignored", exc.message)

    def _present(self, key: str) -> bool:
        """Whether S3 serves an object under ``key`` now (its body is not read)."""
        objects = self._c.require_objects()
        try:
            objects.get(key, limit=0)
        except errors.NotFound:
            return False
        except errors.DocumentTooLarge:
            return True
        return True

    def _sync_claimed(
        self,
        record: DocumentRecord,
        event: ObjectEvent,
        same_change: str = "",
        *,
        settled: DocumentRecord | None,
    ) -> IngestResult:
        """The claimed document made to match S3: its object (removed if gone) and its sidecar.
        ``settled``: the record read before the claim (its served chunks are kept when S3 serves
        the same bytes: see :meth:`~ragline.services.ingest_pipeline.VersionPipeline.index`)."""
        scope = event.scope
        try:
            namespace = require_namespace(self._c.registry, scope.tenant_id, scope.namespace_id)
            try:
                data = self._read(event)
            except errors.DocumentTooLarge as too_large:
                self._pipeline.reject(self._pipeline.serving(namespace).store(), record, too_large)
                raise
            if data is None:
                return self._pipeline.delete(record)  # S3 serves nothing under this key any more
            sidecar = self._read_sidecar(event.key)  # after the object: at least as new as it
            labels = resolve_metadata(
                self._c.registry, namespace, parse_sidecar(sidecar) if sidecar is not None else NO_METADATA
            )
            name = event.path.rsplit("/", 1)[-1]
            return self._pipeline.index(record, namespace, name, data, None, labels, same_change, settled)
        except SETTLED:
            raise  # settled already (a bad file is `failed` with its reason; its message goes to the DLQ)
        except errors.RaglineError as exc:
            self._c.documents.fail(record, exc.code, exc.message)
            raise

    def _read(self, event: ObjectEvent) -> bytes | None:
        """What S3 serves for the event's key, never more than the size limit (``None``: nothing).

        An upload reads the version it names: the event's size is that version's, so one over the
        limit is refused without a request; if that version is gone since, a later event on the key
        exists and the current object is read. A removal names no readable version: the current
        object is read. Every read is bounded (the store refuses an object whose length is over the
        limit before reading its body)."""
        limit = self._c.settings.max_document_bytes
        objects = self._c.require_objects()
        if not event.removed and event.size > limit:
            raise errors.DocumentTooLarge(
                f"{event.path} is {event.size} bytes; the limit is {limit}",
                filename=event.path,
                limit=limit,
            )
        if event.version_id:
            try:
                return objects.get(event.key, version_id=event.version_id, limit=limit)
            except errors.NotFound:
                pass  # that version was deleted since: its own event follows; S3 serves the current
        try:
            return objects.get(event.key, limit=limit)
        except errors.NotFound:
            return None

    def _read_sidecar(self, key: str) -> bytes | None:
        """The object's sidecar as S3 serves it now (``None``: none), never more than its limit (one
        over it reads as over it: :func:`parse_sidecar` refuses it, the version fails with the reason
        and the served one stays)."""
        objects = self._c.require_objects()
        try:
            return objects.get(sidecar_of(key), limit=MAX_SIDECAR_BYTES)
        except errors.NotFound:
            return None
        except errors.DocumentTooLarge:
            return b" " * (MAX_SIDECAR_BYTES + 1)

    def _tenant_deleted(self, tenant_id: str) -> bool:
        """Only ``deleted`` stops the sync: a suspended tenant's bucket is still indexed (suspension
        stops the API, not the index), and a namespace without a tenant record fails as before."""
        try:
            return self._c.registry.get_tenant(tenant_id).status == "deleted"
        except errors.NotFound:
            return False
