"""Queued work: the runs queue and the step queue, and the services whose work they carry —
background chat runs and answer evaluations, reindexes, data-source syncs (with their connectors) —
plus the namespace service, which starts reindexes.

Above :mod:`.services`: a queue's consumer is a service, and the services here are built on the
request services (a background run is a chat run). Each queue is built with a late-bound consumer
(:meth:`WorkParts.queued_work`, :meth:`WorkParts.run_step`), as the services are built from it.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from ragline import errors

from .services import ServiceParts

if TYPE_CHECKING:
    from ragline.domain.generations import ReindexStep
    from ragline.domain.sources import SourceRecord, SyncStep
    from ragline.ports import RunQueue, Source, StepQueue
    from ragline.services.answer_evals import AnswerEvaluations
    from ragline.services.background import BackgroundRuns
    from ragline.services.namespaces import NamespaceService
    from ragline.services.reindex import ReindexService
    from ragline.services.source_sync import SourceSync
    from ragline.services.sources import SourceService


class WorkParts(ServiceParts):
    """The queues and queued services of :class:`~ragline.wiring.Container`, each built on first use."""

    # -- background runs and answer evaluations (the runs queue) -------------------------------
    @cached_property
    def run_queue(self) -> RunQueue:
        """Where background runs run: the runs queue (``runs_queue_url``), else threads of this process."""
        if self.settings.runs_queue_url:
            from ragline.adapters.aws.run_queue import SqsRunQueue

            return SqsRunQueue(self.settings.runs_queue_url)
        from ragline.adapters.embedded.run_queue import ThreadRunQueue

        # late-bound: the services are built from this queue
        return ThreadRunQueue(self.queued_work)

    def queued_work(self, tenant_id: str, run_id: str, message: str) -> bool:
        """One runs-queue message: an evaluation job's slice, or a background chat run."""
        from ragline.services.answer_evals import is_evaluation

        if is_evaluation(message):
            return self.evaluations.work(tenant_id, run_id)
        return self.background.work(tenant_id, run_id, message)

    @cached_property
    def background(self) -> BackgroundRuns:
        from ragline.services.background import BackgroundRuns

        return BackgroundRuns(self.chat, self.runs, self.run_queue, self.tenant_gate)

    @cached_property
    def evaluations(self) -> AnswerEvaluations:
        from ragline.services.answer_evals import AnswerEvaluations

        s = self.settings
        return AnswerEvaluations(
            chat=self.chat,
            metering=self.metering,
            objects=self.evaluation_objects or self.backend.evaluation_objects(),  # None: the reason
            judge=self.answer_judge,
            queue=self.run_queue,
            slice_s=s.evaluation_slice_s if s.runs_queue_url else None,
        )

    # -- reindexes and source syncs (the step queue) -------------------------------------------
    @cached_property
    def step_queue(self) -> StepQueue:
        """Where a reindex's steps run: the ingestion queue (``reindex_queue_url``), else a thread."""
        if self.settings.reindex_queue_url:
            from ragline.adapters.aws.step_queue import SqsStepQueue

            return SqsStepQueue(self.settings.reindex_queue_url)
        from ragline.adapters.embedded.step_queue import ThreadStepQueue

        return ThreadStepQueue(self.run_step)

    def run_step(self, step: ReindexStep | SyncStep) -> None:
        """A queued step in this process: a reindex's or a source sync's."""
        from ragline.domain.generations import ReindexStep

        if isinstance(step, ReindexStep):
            self.reindex.run(step)
        else:
            self.source_sync.run(step)

    @cached_property
    def reindex(self) -> ReindexService:
        from ragline.services.generation_writer import GenerationWriter, WriterSettings
        from ragline.services.reindex import ReindexService, ReindexSettings

        s = self.settings
        writer = GenerationWriter(
            registry=self.registry,
            catalog=self.catalog,
            settings=WriterSettings(**self._chunking),
            ledger=self.ledger,
        )
        return ReindexService(
            registry=self.registry,
            documents=self.documents,
            objects=self.objects,
            catalog=self.catalog,
            writer=writer,
            queue=self.step_queue,
            settings=ReindexSettings(
                step_documents=s.reindex_step_documents, retire_seconds=s.reindex_retire_seconds
            ),
            announcer=self.announcer,
        )

    def connector(self, record: SourceRecord) -> Source:
        """The connector of a data source, from its kind, settings and credentials."""
        from ragline.adapters.sources.web import WebSource
        from ragline.domain.source_settings import WebSettings

        loopback = self.settings.source_loopback_http
        if record.kind == "web":
            return WebSource(WebSettings.model_validate(record.settings), allow_loopback=loopback)
        try:
            credentials = self.source_secrets.get(record.tenant_id, record.namespace_id, record.source_id)
        except errors.NotFound:
            raise errors.ConfigurationError(
                "the source has no credentials: PATCH them in", source_id=record.source_id
            ) from None
        if record.kind == "confluence":
            from ragline.adapters.sources.confluence import ConfluenceSource
            from ragline.domain.source_settings import ConfluenceSettings

            settings = ConfluenceSettings.model_validate(record.settings)
            return ConfluenceSource(settings, credentials, allow_loopback=loopback)
        if record.kind == "graph":
            from ragline.adapters.sources.graph import GraphSource
            from ragline.domain.source_settings import GraphSettings

            return GraphSource(
                GraphSettings.model_validate(record.settings), credentials, allow_loopback=loopback
            )
        raise errors.ConfigurationError(f"no connector for sources of kind {record.kind!r}", kind=record.kind)

    @cached_property
    def source_sync(self) -> SourceSync:
        from ragline.services.source_sync import SourceSync

        return SourceSync(
            sources=self.sources,
            connector=self.connector,
            ingest=self.ingest,
            documents=self.documents,
            queue=self.step_queue,
        )

    @cached_property
    def source_service(self) -> SourceService:
        from ragline.services.sources import SourceService

        return SourceService(
            registry=self.registry,
            sources=self.sources,
            queue=self.step_queue,
            secrets=self.source_secrets,
            scheduler=self.sync_scheduler,
            loopback_http=self.settings.source_loopback_http,
        )

    # -- namespaces (they start reindexes) -----------------------------------------------------
    @cached_property
    def namespaces(self) -> NamespaceService:
        from ragline.services.namespaces import NamespaceService

        return NamespaceService(
            registry=self.registry, documents=self.documents, reindex=self.reindex, sources=self.sources
        )
