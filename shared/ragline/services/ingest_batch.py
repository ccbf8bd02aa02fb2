"""Ingest batches: many documents written, then published together — one refresh per batch, not one
per document.

An :class:`IngestBatch` runs work items (an SQS message's notification, a file of a folder) one after
another on the :class:`~ragline.services.ingest.IngestService`; each item claims, writes and meters its
documents exactly as on its own, but its *publish* is deferred: :meth:`IngestBatch.finish` publishes
every deferred version with one :meth:`~ragline.ports.VectorStore.publish_many` per scope, then
completes each record. Per document nothing else changes — a version refused at the fence is
discarded and its item fails with :class:`~ragline.errors.Superseded`, a record a newer claim took
meanwhile fails the same way, a document whose publish failed in the store (its own outcome in
``publish_many``'s answer: its fence did not rise) fails its record with the reason and its item,
while every document whose fence rose completes — and each item's outcome (results, or the error
that failed it) is reported on its own. Only a store failing the whole publish (no fence rose) fails
every deferred record.

Two guards keep per-document order: a document already deferred in the batch is published before it
is claimed again (a second event for it in the same batch), and at most ``max_pending`` versions wait
(claims are leased: a long folder ingest publishes as it goes).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ragline import errors
from ragline.domain.document_metadata import NO_METADATA, MetadataInput, parse_sidecar
from ragline.domain.documents import DocumentRecord
from ragline.domain.models import TenantScope
from ragline.ports import DocumentRegistry, VectorStore
from ragline.services.ingest_publish import SERVED_FIELDS, settle
from ragline.services.ingest_results import IngestResult

if TYPE_CHECKING:
    from ragline.services.embedding_run import WorkerDeadline

# ``settle`` and ``SERVED_FIELDS`` live in ingest_publish (a service publishing on its own settles
# with them too), and are still offered here
__all__ = ["MAX_PENDING", "SERVED_FIELDS", "BatchOutcome", "BatchedIngest", "IngestBatch", "settle"]

MAX_PENDING = 100
"""Versions deferred before a batch publishes them anyway (an SQS batch holds at most 10 messages)."""


class BatchedIngest(Protocol):
    """What a batch runs its items on: :class:`~ragline.services.ingest.IngestService`, named by what
    it offers here so that this module needs nothing of the service's (the service makes batches)."""

    def deferring(self, batch: IngestBatch) -> BatchedIngest:
        """The service with its publishes deferred to ``batch``."""
        ...

    def within(self, deadline: WorkerDeadline) -> BatchedIngest:
        """The service fitted to the worker's time left."""
        ...

    def handle_notification(self, body: str) -> list[IngestResult]:
        """One SQS message of S3 events."""
        ...

    def ingest(
        self, scope: TenantScope, *, filename: str, data: bytes, source: str, metadata: MetadataInput
    ) -> IngestResult:
        """Bytes in hand as one document."""
        ...


@dataclass
class BatchOutcome:
    """One work item: its results once every version it wrote is published, or what failed it."""

    key: str
    results: list[IngestResult] = field(default_factory=list)
    error: Exception | None = None


@dataclass(frozen=True)
class _Deferred:
    store: VectorStore
    claimed: DocumentRecord
    done: DocumentRecord
    outcome: BatchOutcome


class IngestBatch:
    def __init__(
        self,
        service: BatchedIngest,
        documents: DocumentRegistry,
        deadline: WorkerDeadline | None = None,
        *,
        max_pending: int = MAX_PENDING,
    ) -> None:
        self._service = service.deferring(self)
        self._documents = documents
        self._deadline = deadline
        self._max_pending = max_pending
        self._deferred: list[_Deferred] = []
        self._outcomes: list[BatchOutcome] = []
        self._current: BatchOutcome | None = None

    def run(
        self, key: str, work: Callable[[BatchedIngest], IngestResult | list[IngestResult]]
    ) -> BatchOutcome:
        """``work`` on the service (fitted to the deadline's time left: an item that would start with
        too little fails with :class:`~ragline.errors.WorkerOutOfTime`, nothing started). Any error is
        the item's own: recorded in its outcome, and the batch goes on."""
        outcome = self._current = BatchOutcome(key)
        self._outcomes.append(outcome)
        try:
            service = self._service.within(self._deadline) if self._deadline else self._service
            done = work(service)
            outcome.results = done if isinstance(done, list) else [done]
        except Exception as exc:  # reported in the outcome: the caller fails this item alone
            outcome.error = exc
        finally:
            self._current = None
        if len(self._deferred) >= self._max_pending:
            self.publish()
        return outcome

    def notification(self, key: str, body: str) -> BatchOutcome:
        """An SQS message of S3 events (see :meth:`IngestService.handle_notification`)."""
        return self.run(key, lambda service: service.handle_notification(body))

    def ingest(
        self,
        key: str,
        scope: TenantScope,
        *,
        filename: str,
        data: bytes,
        source: str,
        sidecar: bytes | None = None,
    ) -> BatchOutcome:
        """Bytes in hand as one document (see :meth:`IngestService.ingest`), with the metadata its
        ``sidecar`` (``<file>.metadata.json``'s bytes) states; a bad sidecar fails the item."""

        def work(service: BatchedIngest) -> IngestResult:
            metadata = parse_sidecar(sidecar) if sidecar is not None else NO_METADATA
            return service.ingest(scope, filename=filename, data=data, source=source, metadata=metadata)

        return self.run(key, work)

    def finish(self) -> list[BatchOutcome]:
        """Publish what is deferred; every item's outcome, in the order run."""
        self.publish()
        return list(self._outcomes)

    # -- called by the service ----------------------------------------------------------------
    def defer(self, store: VectorStore, claimed: DocumentRecord, done: DocumentRecord) -> None:
        """``done``'s generation is written; publish it (and complete ``done``) with the batch."""
        assert self._current is not None, "a publish deferred outside a work item"
        self._deferred.append(_Deferred(store, claimed, done, self._current))

    def before_claim(self, scope: TenantScope, document_id: str) -> None:
        """A document deferred here is published before it is claimed again."""
        if any(_key(d.done) == (scope.tenant_id, scope.namespace_id, document_id) for d in self._deferred):
            self.publish()

    # -- publishing ---------------------------------------------------------------------------
    def publish(self) -> None:
        deferred, self._deferred = self._deferred, []
        by_scope: dict[tuple[str, str], list[_Deferred]] = {}
        for d in deferred:
            by_scope.setdefault((d.done.tenant_id, d.done.namespace_id), []).append(d)
        for group in by_scope.values():
            try:
                published = group[0].store.publish_many(
                    {d.done.document_id: d.done.generation for d in group}
                )
            except Exception as exc:  # no fence rose: the served versions stay, every item here fails
                for d in group:
                    self._unpublished(d, exc)
                continue
            for d in group:
                outcome = published[d.done.document_id]
                if isinstance(outcome, errors.RaglineError):  # this document alone: it serves what it did
                    self._unpublished(d, outcome)
                    continue
                try:
                    settle(d.store, self._documents, d.done, outcome)
                except Exception as exc:
                    self._failed(d, exc)

    def _unpublished(self, d: _Deferred, exc: Exception) -> None:
        """A version whose fence did not rise: what it wrote goes (nothing later may publish it: its
        message's next attempt writes its own), and it fails with ``exc``."""
        with contextlib.suppress(errors.RaglineError):  # down: the document's next publish sweeps them
            d.store.discard(d.done.document_id, generation=d.done.generation)
        self._failed(d, exc)

    def _failed(self, d: _Deferred, exc: Exception) -> None:
        """The item fails with ``exc``; the record too, with the reason, unless the version was
        overtaken (its record belongs to the newer claim)."""
        d.outcome.error = d.outcome.error or exc
        settled = (errors.Superseded, errors.EventNotPublished)  # the record is not the claim's any more
        if isinstance(exc, errors.RaglineError) and not isinstance(exc, settled):
            try:
                self._documents.fail(d.claimed, exc.code, exc.message)
            except Exception as failing:  # the record stays claimed until its lease: the item is retried
                d.outcome.error = failing


def _key(record: DocumentRecord) -> tuple[str, str, str]:
    return (record.tenant_id, record.namespace_id, record.document_id)
