"""Reindex a namespace without downtime: build the next generation beside the served one, switch.

1. :meth:`ReindexService.begin` records the rebuild on the namespace (one conditional write: the
   target model, chunking and generation, state ``building``, documents total) and dispatches its
   first :class:`ReindexStep`. A second request while one builds is refused (409); one this
   deployment cannot honour, before anything is recorded (:mod:`~ragline.services.reindex_request`).
2. Each ``build`` step rebuilds the next :attr:`ReindexSettings.step_documents` served documents (in
   id order, after the last one done) from their stored originals into the new generation's storage
   scope, with the new model's embedder and the new chunking, records the progress, and dispatches
   the next step — so on AWS every step is one short SQS message of the ingestion queue, never one
   long request. A step names where it starts and is leased to one worker: a copy delivered beside
   it backs off, a copy delivered after it does nothing, so one chain of steps runs. Meanwhile
   ingests and deletes write the served generation *and* the one being built
   (:meth:`~ragline.services.generation_writer.GenerationWriter.mirror`). A document rebuilt is the
   version its record serves — also when its newest version failed — read within the size limit; one
   deleted or rewritten while its step ran is left to that newer write, which writes both generations
   (:mod:`~ragline.services.reindex_documents`).
3. The last step re-does every document changed since the rebuild began (a write that raced its
   start), queues the retire step (4), then switches: one conditional write of the namespace moves
   the served generation, its model and chunking. Every reader resolves the served generation per
   run, so a search answers from the old generation or the new one, never both, never neither.
4. A ``retire`` step, ``retire_seconds`` later (runs bound to the old generation just before the
   switch end first), drops the old generation's chunks.

A step that fails marks the rebuild ``failed`` with the reason and drops what it built; the old
generation never stopped serving. A document whose own served version cannot be rebuilt (a parser
that refuses it now) fails the rebuild, naming it: a switch never silently drops a served document.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial

from ragline import errors
from ragline.domain import rebuilds
from ragline.domain.api import NamespaceView, ReindexRequest
from ragline.domain.documents import LEASED_STATUSES, DocumentRecord
from ragline.domain.events import namespace_reindexed
from ragline.domain.generations import Rebuild, ReindexStep, storage_scope
from ragline.domain.tenancy import Namespace
from ragline.ports import DocumentRegistry, ObjectStore, StepQueue, TenantRegistry
from ragline.services.authentication import Principal
from ragline.services.embedding_run import WorkerDeadline
from ragline.services.events import Announcer
from ragline.services.generation_writer import GenerationWriter
from ragline.services.generations import Generation, ModelCatalog, building
from ragline.services.namespaces import change_namespace, require_namespace
from ragline.services.reindex_documents import DocumentRebuilder, held, served
from ragline.services.reindex_request import public_scope, target_of

__all__ = ["ReindexService", "ReindexSettings", "held", "served"]


@dataclass(frozen=True)
class ReindexSettings:
    step_documents: int = 20
    """Documents one step rebuilds (an SQS message's work: well within a Lambda invocation)."""
    retire_seconds: float = 900.0
    """How long the old generation is kept after the switch (a run bound to it ends first)."""
    reserve_seconds: float = 150.0
    """Of an invocation's time, what a step keeps for its last document and its writes: a step
    starts no further document with less left (a document's parse budget is 120 s)."""
    stall_seconds: float = 3600.0
    """A build with no progress for this long has lost its steps: a new reindex replaces it (a step
    takes at most one invocation, 900 s, and a redelivery comes within the queue's visibility)."""
    settle_seconds: float = 330.0
    """Writes claimed this long before the rebuild began may not have seen it: re-done at the end."""
    lease_seconds: float = 960.0
    """How long a step is its worker's (an invocation lasts at most 900 s): a copy of it delivered
    meanwhile backs off; the queue redelivers it later (its visibility timeout is longer)."""


class ReindexService:
    def __init__(
        self,
        *,
        registry: TenantRegistry,
        documents: DocumentRegistry,
        objects: ObjectStore | None,
        catalog: ModelCatalog,
        writer: GenerationWriter,
        queue: StepQueue,
        settings: ReindexSettings,
        announcer: Announcer | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._clock = clock or _now
        self._registry = registry
        self._announcer = announcer
        self._documents = documents
        self._catalog = catalog
        self._writer = writer
        self._queue = queue
        self._settings = settings
        self._rebuilder = DocumentRebuilder(
            documents=documents, objects=objects, writer=writer, clock=self._clock,
            stall_seconds=settings.stall_seconds,
        )  # fmt: skip

    # -- starting --------------------------------------------------------------------------------
    def start(self, principal: Principal, namespace: str, request: ReindexRequest) -> NamespaceView:
        """``POST /namespaces/{ns}/reindex``: rebuild even when nothing changes (e.g. new parsers)."""
        return NamespaceView.of(self.begin(principal, namespace, request, force=True))

    def begin(
        self, principal: Principal, namespace: str, request: ReindexRequest, *, force: bool = False
    ) -> Namespace:
        principal.require("admin", namespace)
        ns = require_namespace(self._registry, principal.tenant_id, namespace)
        # a request this deployment cannot honour is refused here, before anything is recorded
        wanted = target_of(request, ns, self._catalog, self._writer.settings.chunking)
        if wanted.same_as(ns, self._catalog) and not force:
            return ns
        total = len(self._held(ns))

        abandoned: list[Rebuild] = []

        def record(stored: Namespace) -> Namespace:
            running = stored.settings.rebuild
            abandoned.clear()
            if running is not None and running.state == "building" and self._stalled(running):
                abandoned.append(running)  # its steps were lost (a crash, a message in the DLQ)
            elif running is not None and running.state == "building":
                raise errors.Conflict(
                    "a reindex of this namespace is already running",
                    namespace=namespace,
                    generation=running.generation,
                    documents_done=running.documents_done,
                    documents_total=running.documents_total,
                )
            used = max(stored.settings.generation, running.generation if running else 0)
            rebuild = Rebuild(
                generation=used + 1,
                embedding_model=wanted.model,
                embedding_dimension=wanted.space.embedder.dimension,
                chunking=wanted.chunking,
                documents_total=total,
                started_at=self._clock(),
            )
            return rebuilds.started(stored, rebuild)

        saved = change_namespace(self._registry, ns, record)
        rebuild = saved.settings.rebuild
        assert rebuild is not None
        self._queue.submit(ReindexStep(saved.tenant_id, saved.namespace_id, rebuild.generation, after=""))
        for old in abandoned:  # what the stalled build wrote goes
            retire = ReindexStep(
                saved.tenant_id, saved.namespace_id, old.generation, "retire", old.embedding_model
            )
            self._queue.submit(retire)
        return saved

    def _stalled(self, rebuild: Rebuild) -> bool:
        """A build whose last step is older than ``stall_seconds``: its chain of steps was lost."""
        last = rebuild.progressed_at or rebuild.started_at
        return self._clock() - last > timedelta(seconds=self._settings.stall_seconds)

    # -- running ---------------------------------------------------------------------------------
    def run(self, step: ReindexStep, deadline: WorkerDeadline | None = None) -> None:
        """One step; a step of a rebuild that is no longer running (superseded, failed) does nothing.
        With a ``deadline`` (a Lambda invocation's), the step stops early enough to queue the next."""
        if step.kind == "retire":
            self._drop(step.tenant_id, step.namespace_id, step.generation, step.model)
            return
        ns = self._registry.get_namespace(step.tenant_id, step.namespace_id)
        target = building(self._catalog, ns)
        if target is None or target.number != step.generation:
            self._announce(ns, step.generation)  # a redelivered last step: its switch again
            return
        now = self._clock()
        lease = partial(
            rebuilds.leased, generation=target.number, step_after=step.after, at=now,
            until=now + timedelta(seconds=self._settings.lease_seconds),
        )  # fmt: skip
        try:
            ns = change_namespace(self._registry, ns, lease)
        except errors.Superseded:
            return  # a copy of a step that ran: its successor carries the rebuild on
        try:
            switched = self._build(ns, target, step, deadline)
        except (errors.WorkerOutOfTime, errors.DocumentBusy):
            self._release(ns, target, step)
            raise  # the message comes back
        except errors.Superseded:
            return  # the step's lease ran out and a copy of it went on: that chain carries on
        except errors.RaglineError as exc:
            self._fail(ns, target, exc.message)
            return
        if switched is not None:  # outside the try: a failed publish fails the step, which is retried
            self._announce(switched, target.number)

    def _announce(self, ns: Namespace, generation: int) -> None:
        """``namespace.reindexed`` when ``ns`` serves ``generation`` through a finished rebuild."""
        rebuild = ns.settings.rebuild
        if self._announcer is None or ns.settings.generation != generation or rebuild is None:
            return
        if rebuild.state != "ready" or rebuild.generation != generation:
            return
        event = namespace_reindexed(
            tenant_id=ns.tenant_id, namespace_id=ns.namespace_id, generation=generation,
            model=rebuild.embedding_model, documents=rebuild.documents_done,
            time=rebuild.finished_at or _now(),
        )  # fmt: skip
        self._announcer.publish([event])

    def _build(
        self, ns: Namespace, target: Generation, step: ReindexStep, deadline: WorkerDeadline | None
    ) -> Namespace | None:
        """The namespace as switched when this step finished the rebuild, else None."""
        rebuild = ns.settings.rebuild
        assert rebuild is not None
        pending = [r for r in self._held(ns) if r.document_id > rebuild.after]
        batch: list[DocumentRecord] = []
        for record in pending[: self._settings.step_documents]:
            if batch and deadline is not None and deadline.remaining() < self._settings.reserve_seconds:
                break  # the rest in the next step (a new invocation)
            self._rebuilder.rebuild(target, record)
            batch.append(record)
        if len(pending) > len(batch):
            after = batch[-1].document_id
            self._progress(ns, target, step.after, after, len(batch))
            self._queue.submit(ReindexStep(ns.tenant_id, ns.namespace_id, target.number, after=after))
            return None
        return self._finish(ns, target, step.after, len(batch))

    def _finish(self, ns: Namespace, target: Generation, step_after: str | None, done_now: int) -> Namespace:
        rebuild = ns.settings.rebuild
        assert rebuild is not None
        since = rebuild.started_at - timedelta(seconds=self._settings.settle_seconds)
        records = self._documents.list(ns.tenant_id, ns.namespace_id)
        for record in records:  # a write claimed before the rebuild began may not write it: its end first
            if (
                record.status in LEASED_STATUSES
                and record.updated_at < rebuild.started_at
                and record.lease_until is not None
                and record.lease_until > self._clock()
            ):
                raise errors.DocumentBusy(
                    f"{record.document_id} is being written by a worker that may not have seen the"
                    " rebuild; the last reindex step is retried after it",
                    document_id=record.document_id,
                )
        for record in records:
            if record.updated_at < since:
                continue
            if held(record):
                self._rebuilder.rebuild(target, record)
            elif record.status in ("deleted", "failed"):  # serves nothing (removed, or refused)
                self._writer.remove(target, record)
        # Queued before the switch: a worker that dies right after the switch leaves no old
        # generation behind (a retire that finds its generation still serving does nothing).
        old_generation = ns.settings.generation
        old_model = ns.settings.embedding_model or self._catalog.default
        self._queue.submit(
            ReindexStep(ns.tenant_id, ns.namespace_id, old_generation, "retire", old_model),
            delay_seconds=self._settings.retire_seconds,
        )
        switch = partial(
            rebuilds.switched, generation=target.number, step_after=step_after, done=done_now,
            at=self._clock(),
        )  # fmt: skip
        return change_namespace(self._registry, ns, switch)

    def _release(self, ns: Namespace, target: Generation, step: ReindexStep) -> None:
        """The step's lease ends (its message comes back: it may run again at once)."""
        release = partial(rebuilds.released, generation=target.number, step_after=step.after)
        change_namespace(self._registry, ns, release)

    def _progress(
        self, ns: Namespace, target: Generation, step_after: str | None, after: str, done: int
    ) -> None:
        advance = partial(
            rebuilds.advanced, generation=target.number, step_after=step_after, after=after, done=done,
            at=self._clock(),
        )  # fmt: skip
        change_namespace(self._registry, ns, advance)

    def _fail(self, ns: Namespace, target: Generation, reason: str) -> None:
        fail = partial(rebuilds.failed, generation=target.number, reason=reason, at=self._clock())
        change_namespace(self._registry, ns, fail)
        self._drop(ns.tenant_id, ns.namespace_id, target.number, target.space.embedder.model_id)

    def _drop(self, tenant_id: str, namespace_id: str, generation: int, model: str) -> None:
        """Delete every chunk of a generation that no longer serves (the old one, or a failed build)."""
        ns = self._registry.get_namespace(tenant_id, namespace_id)
        if ns.settings.generation == generation:
            return  # serving (never drop what answers queries)
        # a model this deployment no longer has: its generation number is the namespace's alone,
        # so dropping that scope wherever the default model keeps vectors touches nothing else
        space = self._catalog.space(model) or self._catalog.default_space()
        store = space.stores.scoped(storage_scope(public_scope(ns), generation))
        for record in self._documents.list(tenant_id, namespace_id):
            store.delete_document(record.document_id)

    def _held(self, ns: Namespace) -> list[DocumentRecord]:
        records = self._documents.list(ns.tenant_id, ns.namespace_id)
        return sorted((r for r in records if held(r)), key=lambda r: r.document_id)


def _now() -> datetime:
    return datetime.now(UTC)
