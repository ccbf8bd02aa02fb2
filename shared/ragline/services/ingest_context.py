"""What every stage of an ingest works with: the service's settings and collaborators, and the bounds
of the run at hand (the worker's deadline, the batch its publishes wait for).

:class:`~ragline.services.ingest.IngestService` holds one :class:`IngestContext`; fitting it to a
worker (``within``) or to a batch (``deferring``) is a copy of it with that bound set, shared by the
stages built on it (:mod:`ragline.services.ingest_pipeline`, :mod:`ragline.services.ingest_objects`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ragline import errors
from ragline.domain.documents import DocumentRecord
from ragline.domain.models import TenantScope
from ragline.ports import DocumentRegistry, ObjectStore, TenantRegistry, UsageLedger
from ragline.services.embedding_run import EmbeddingRate, WorkerDeadline
from ragline.services.events import Announcer
from ragline.services.generation_writer import GenerationWriter, WriterSettings
from ragline.services.generations import ModelCatalog
from ragline.services.ingest_batch import IngestBatch


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
class IngestContext:
    """One ingest's collaborators and bounds; frozen: a bound changes by copy, never under a stage."""

    registry: TenantRegistry
    documents: DocumentRegistry
    catalog: ModelCatalog
    """The embedding models a namespace's generations use."""
    writer: GenerationWriter
    """Writes each version into the generation a reindex is building, too."""
    settings: IngestSettings
    write_batch: int
    """Chunks embedded and written together (also the embedder's and the bulk request's unit)."""
    objects: ObjectStore | None = None
    bucket: str = ""
    """Events naming another bucket are ignored (``""``: accept any, for local stores)."""
    ledger: UsageLedger | None = None
    """Where each indexed version's usage is recorded (``None``: not metered; the wiring always
    passes the tenant ledger)."""
    announcer: Announcer | None = None
    """Re-announces a redelivered event's settled change (its first announcement is the
    registry's: :class:`~ragline.services.events.AnnouncingDocuments`)."""
    rate: EmbeddingRate = field(default_factory=EmbeddingRate)
    """The embedder's measured throughput, shared by every copy fitted to a worker (a warm worker
    knows it before its next document embeds)."""
    worker: WorkerDeadline | None = None
    """When the worker running this ingest is killed (see :meth:`IngestService.within`); ``None``:
    never."""
    batch: IngestBatch | None = None
    """Where publishes are deferred to (see :meth:`IngestService.batch`); ``None``: each publishes
    at once."""

    def now(self) -> float:
        return self.worker.clock() if self.worker else time.monotonic()

    def before_claim(self, scope: TenantScope, document_id: str) -> None:
        if self.batch is not None:
            self.batch.before_claim(scope, document_id)

    def announce_again(self, stored: DocumentRecord | None) -> None:
        """The settled change ``stored`` holds, announced again under its id: a redelivered event's
        (its first publish may have been lost with the worker that settled it), or the change a new
        event is about to replace (else a change whose publish failed, superseded before its message
        came back, would never be announced). Consumers dedupe; nothing is sent twice to a webhook."""
        if self.announcer is not None and stored is not None:
            self.announcer.settled(stored)

    def announce_previous(self, scope: TenantScope, document_id: str) -> None:
        """:meth:`announce_again` for a local write (one more registry read, only with events on)."""
        if self.announcer is not None and self.announcer.enabled:
            self.announce_again(self.documents.get(scope.tenant_id, scope.namespace_id, document_id))

    def require_objects(self) -> ObjectStore:
        """The object store S3 ingestion reads; none configured is the deployment's fault."""
        if self.objects is None:
            raise errors.ConfigurationError("no object store is configured for S3 ingestion")
        return self.objects
