"""One place that charges: every run (chat or search) is reserved before work and finished once.

:meth:`Metering.start` reserves the run id (its marker, with the request's fingerprint) under the
tenant's quota and returns a :class:`MeteredRun`. When the run id already completed, ``run.replay`` holds
its first charge and recorded result: the caller returns that and does no work. Otherwise
:meth:`~MeteredRun.finish` ends the run exactly once (with the result a replay will get), whether it
is reached on success, on error or on abort: only a run that did work is charged; one that spent
nothing (no namespace to search, refused before its first model call or search) completes uncharged.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from ragline import errors
from ragline.domain.api import ApiModel, ChunkView, IngestionUsage, Usage, UsageReport, WarningView
from ragline.domain.billing import MAX_RESULT_BYTES, CompletedRun, current_period
from ragline.domain.chat import ChatMessage, ChatOptions, ModelEvent, ToolSpec
from ragline.domain.limits import Limits
from ragline.domain.models import RunUsage
from ragline.ports import ChatModel, DocumentRegistry, TenantRegistry, UsageLedger
from ragline.services.authentication import Principal
from ragline.services.events import QuotaWatch
from ragline.services.limits import FairShare
from ragline.services.replays import MASKED, MASKED_MESSAGE, Opened, opened, sealed

R = TypeVar("R", bound=ApiModel)


def recorded_result(response: R | None, *, drop: str, code: str, what: str, read_at: datetime) -> str | None:
    """What a replay returns: the response with the documents its ``drop`` list (of chunks) quotes
    and when they were read (see :func:`~ragline.services.replays.sealed`), without that list (and
    with a warning ``code``) when the whole would be over ``MAX_RESULT_BYTES``; None: no response."""
    if response is None:
        return None
    chunks: list[ChunkView] = getattr(response, drop)
    documents = [(c.namespace, c.document_id) for c in chunks]
    text = sealed(response, documents, read_at)
    if len(text.encode()) <= MAX_RESULT_BYTES:
        return text
    dropped = WarningView(
        code=code,
        message=f"this replay's recorded response was too large to keep its {what}; run a new search",
    )
    warnings = [*getattr(response, "warnings"), dropped]  # noqa: B009 (every replayable response has them)
    return sealed(response.model_copy(update={drop: [], "warnings": warnings}), [], read_at)


def replayed_chunks(opened: Opened, chunks: list[ChunkView]) -> tuple[list[ChunkView], list[WarningView]]:
    """A replay's recorded ``chunks`` without those of documents deleted or changed since the run,
    and the warning saying so (none when nothing was left out)."""
    shown = [c for c in chunks if (c.namespace, c.document_id) in opened.kept]
    if not opened.masked and len(shown) == len(chunks):
        return shown, []
    return shown, [WarningView(code=MASKED, message=MASKED_MESSAGE)]


NO_RESULT = WarningView(
    code="replay_without_result",
    message="the first run under this Idempotency-Key recorded no result (it failed);"
    " send a new key to search again",
)
"""The warning of a replay whose first run ended without a response."""


@dataclass
class MeteredRun:
    tenant_id: str
    run_id: str
    ledger: UsageLedger
    limit: int | None = None
    fingerprint: str = ""
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    """When the run began, before it read any document: what its result quotes was readable then."""
    replay: CompletedRun | None = None
    """Set when the run id already completed: answer from it, do no work, ``finish`` charges nothing."""
    usage: RunUsage = field(default_factory=RunUsage)
    charged: RunUsage | None = None
    watch: QuotaWatch | None = None
    """Announces the quota thresholds a charge crosses (see :class:`~ragline.services.events.QuotaWatch`)."""
    started: bool = False
    """A model answered this run (its first event): work began, though a streamed model reports its
    usage only at the end (a client that hangs up before then is still charged)."""

    @property
    def did_work(self) -> bool:
        """The run spent something (a model token, an embedded token, a search, a rerank, a page) or a
        model began answering it."""
        return self.started or self.usage != RunUsage()

    def watching(self, model: ChatModel) -> ChatModel:
        """``model``, marking this run ``started`` when it yields its first event."""
        return _Watched(model, self)

    def finish(self, result: str | None = None) -> RunUsage:
        """End the run once, recording ``result`` for replays (dropped over ``MAX_RESULT_BYTES``): a
        run that did work is charged its usage; one that did none (refused before its first model
        call or search) completes uncharged, using no quota slot. Later calls return the first charge."""
        if self.replay is not None:
            return self.replay.usage
        if self.charged is None:
            if result is not None and len(result.encode()) > MAX_RESULT_BYTES:
                result = None
            if self.did_work:
                self.charged = self.ledger.commit(
                    self.tenant_id, self.run_id, self.usage, self.limit, result, self.fingerprint
                )
                if self.watch is not None:
                    self.watch.after_charge(self.tenant_id, self.limit)
            else:
                self.charged = self.ledger.complete_uncharged(
                    self.tenant_id, self.run_id, result, self.fingerprint
                )
        return self.charged


class _Watched:
    def __init__(self, inner: ChatModel, run: MeteredRun) -> None:
        self._inner = inner
        self._run = run
        self.name = inner.name

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]:
        for event in self._inner.stream(messages, tools, options):
            self._run.started = True
            yield event


class Metering:
    def __init__(
        self,
        *,
        ledger: UsageLedger,
        registry: TenantRegistry,
        documents: DocumentRegistry,
        fair_share: FairShare | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        quota_watch: QuotaWatch | None = None,
    ) -> None:
        """``documents``: what a replay re-checks its recorded result against; ``fair_share``: the
        limits and refusal counts the usage report shows; ``clock``: when a run starts and a replay
        is served (the result's retention)."""
        self._ledger = ledger
        self._registry = registry
        self._documents = documents
        self._fair_share = fair_share
        self._clock = clock
        self._quota_watch = quota_watch

    def opened(
        self, tenant_id: str, replay: CompletedRun, readers: frozenset[str] | None = None
    ) -> Opened | None:
        """A replay's recorded result re-checked against the documents now, for a user holding
        ``readers`` (None: nothing to serve; see :func:`~ragline.services.replays.opened`)."""
        return opened(self._documents, tenant_id, replay.result, self._clock(), readers)

    def start(self, tenant_id: str, run_id: str | None = None, fingerprint: str = "") -> MeteredRun:
        """Reserve the run before any work: ``QuotaExceeded`` when the quota is used up,
        ``RunInProgress`` while the run id is running, ``IdempotencyKeyReused`` when it named another
        request; a completed run id comes back with ``replay`` set (and is not charged again)."""
        limit = self._limit(tenant_id)
        run = MeteredRun(
            tenant_id=tenant_id,
            run_id=run_id or uuid.uuid4().hex,
            ledger=self._ledger,
            limit=limit,
            fingerprint=fingerprint,
            started_at=self._clock(),
            watch=self._quota_watch,
        )
        try:
            run.replay = self._ledger.reserve(tenant_id, run.run_id, limit, fingerprint)
        except errors.QuotaExceeded:
            if self._quota_watch is not None:  # a 100 % announcement that failed gets another chance
                self._quota_watch.after_charge(tenant_id, limit)
            raise
        return run

    def usage_report(self, principal: Principal, period: str | None = None) -> UsageReport:
        """The tenant's runs, their usage and its ingestion in ``period`` (``YYYY-MM``; default: the
        current one)."""
        principal.require("admin")
        if not principal.unrestricted:  # tenant-wide figures would show other namespaces' use
            raise errors.Forbidden("usage is tenant-wide: it needs an admin key without a namespace list")
        period = period or current_period()
        tenant_limits, throttled = Limits(), 0
        if self._fair_share is not None:
            with suppress(errors.NotFound):  # no record (local use): the deployment's defaults
                tenant_limits = self._registry.get_tenant(principal.tenant_id).limits
            tenant_limits = tenant_limits.over(self._fair_share.defaults)
            throttled = self._fair_share.throttled(principal.tenant_id, period)
        return UsageReport(
            period=period,
            runs=self._ledger.period_runs(principal.tenant_id, period),
            usage=Usage.of(self._ledger.period_usage(principal.tenant_id, period)),
            ingestion=IngestionUsage.of(self._ledger.period_ingestion(principal.tenant_id, period)),
            limits=tenant_limits,
            throttled=throttled,
        )

    def _limit(self, tenant_id: str) -> int | None:
        """The tenant's run quota; a tenant without a record (local use) is unlimited."""
        try:
            return self._registry.get_tenant(tenant_id).max_runs_per_period
        except errors.NotFound:
            return None
