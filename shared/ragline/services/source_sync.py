"""Syncing a data source into its namespace, in bounded steps (see :mod:`ragline.domain.sources`).

A step holds the source's lease (one conditional write: two syncs of one source never run at once) and
works until its deadline, page by page:

1. **listing**: one page of the connector's changes is applied — each item fetched and ingested
   through the same pipeline as an upload (its document id made from the source and the item), or
   re-labelled when only its readers changed, or deleted — and its items' inventory written, and only
   then the cursor moved past the page (with the lease still held: a step whose lease was taken over
   writes nothing). A step cut off anywhere resumes from the last page it finished; the page applied
   again finds its items at their versions and changes nothing. One bad item fails alone: it is
   counted, its error kept, and it is tried again next sync (a document that cannot be parsed waits
   for a new version).
2. **sweeping**, after a full listing's last page: every item of the source the listing did not name
   (its ``seen_run`` older than the run) is deleted from the namespace.
3. **removing**: a deleted source's documents go, in the same bounded batches, then the source.

Past the deadline (or when the source asks to slow down) the step queues its successor with the same
lease token. A step that fails (the source unreachable past its retries) releases the lease and keeps
the cursor, so the next attempt — the queue's redelivery, the schedule, a sync asked for — resumes.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Literal

from ragline import errors
from ragline.domain.document_metadata import MetadataInput
from ragline.domain.models import TenantScope
from ragline.domain.sources import (
    Change,
    ItemAccess,
    KnownItem,
    SourceRecord,
    SyncCounts,
    SyncStep,
    document_path,
)
from ragline.ports import DocumentRegistry, Source, SourceRegistry, StepQueue
from ragline.services.embedding_run import WorkerDeadline
from ragline.services.ingest import DOCUMENT_ERRORS, IngestService, document_id_of

_log = logging.getLogger(__name__)
StepOutcome = Literal["done", "continued", "busy", "superseded", "failed"]
TRANSIENT: tuple[type[errors.RaglineError], ...] = (
    errors.DependencyUnavailable,
    errors.Throttled,
    errors.WorkerOutOfTime,
    errors.Conflict,
)
"""A step failing so is tried again (redelivered); any other failure ends the sync with its error."""
REFUSED: tuple[type[errors.RaglineError], ...] = (*DOCUMENT_ERRORS, errors.InvalidRequest)
"""What an item's own content or readers make the ingest refuse: the item fails alone until it changes."""


@dataclass(frozen=True)
class SyncSettings:
    lease_seconds: float = 900.0
    """A step's hold on its source: longer than a step may run (the ingestion function's 300 s),
    shorter than the wait before a crashed sync is taken over."""
    step_seconds: float = 240.0
    """A step without a worker's deadline (in-process) stops after this long and queues its successor."""
    reserve_seconds: float = 30.0
    """Of a worker's time, what is kept after the last page (applying it, writing the state)."""
    sweep_batch: int = 100


class _Known:
    """:class:`ragline.ports.KnownItems` of one run: the registry, and what this step named."""

    def __init__(self, sources: SourceRegistry, record: SourceRecord) -> None:
        self.run = record.run
        self._sources = sources
        self._record = record
        self._cache: dict[str, KnownItem | None] = {}

    def get(self, item_id: str) -> KnownItem | None:
        if item_id not in self._cache:
            r = self._record
            found = self._sources.known(r.tenant_id, r.namespace_id, r.source_id, [item_id])
            self._cache[item_id] = found.get(item_id)
        return self._cache[item_id]

    def seen(self, item_id: str) -> bool:
        known = self.get(item_id)
        return known is not None and known.seen_run >= self.run

    def remember(self, item: KnownItem) -> None:
        self._cache[item.item_id] = item


class SourceSync:
    def __init__(
        self,
        *,
        sources: SourceRegistry,
        connector: Callable[[SourceRecord], Source],
        ingest: IngestService,
        documents: DocumentRegistry,
        queue: StepQueue | None,
        settings: SyncSettings | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sources = sources
        self._connector = connector
        self._ingest = ingest
        self._documents = documents
        self._queue = queue
        self._settings = settings or SyncSettings()
        self._clock = clock
        self._monotonic = monotonic

    # -- steps ----------------------------------------------------------------------------------
    def run(self, step: SyncStep, deadline: WorkerDeadline | None = None) -> StepOutcome:
        """One step. ``token`` ``""`` starts a sync (or resumes one cut off: its lease ran out). A
        step's token is ``<sync>:<n>``: it takes the lease from step ``n - 1`` of its sync (or a free
        or expired one), so a copy of a step, or a step overtaken by a newer holder, does nothing."""
        token, expect = _tokens(step.token)
        now = self._clock()
        try:
            record = self._sources.claim(
                step.tenant_id, step.namespace_id, step.source_id,
                token=token, expect=expect, lease_seconds=self._settings.lease_seconds, now=now,
            )  # fmt: skip
        except errors.NotFound:
            return "superseded"  # the source was deleted since the step was queued
        if record is None:
            if (
                not step.token
                and self._sources.get(step.tenant_id, step.namespace_id, step.source_id).removing
            ):
                # a removal must not be lost behind a running sync: it comes back after that sync
                raise errors.StepBusy(
                    "the source is being synced: its removal waits", source_id=step.source_id
                )
            return "superseded" if step.token else "busy"
        if not step.token:
            record = self._begin(record, step.full)
        elif record.phase == "idle":  # a copy of a step of a sync that has ended
            self._sources.advance(replace(record, lease_token="", lease_until=0.0), token=token)
            return "superseded"
        until = self._until(deadline)
        try:
            return self._work(record, token, until)
        except errors.RaglineError as exc:
            self._failed(record.source_id, step, token, exc)
            if isinstance(exc, TRANSIENT):
                raise  # the message comes back (on AWS, SQS's redelivery) and resumes the sync
            _log.warning("sync failed", extra={"source": record.source_id, "error": exc.code})
            return "failed"  # bad credentials, no access: the source's status says; the schedule retries

    def _begin(self, record: SourceRecord, full: bool) -> SourceRecord:
        if record.removing:
            return replace(record, phase="sweeping", full=True, run=record.run + 1)
        if record.phase != "idle" and not full:
            return record  # a sync cut off (its lease ran out): it goes on where it stood
        return replace(
            record,
            run=record.run + 1,
            phase="listing",
            full=False,
            cursor="" if full else record.cursor,
            counts=SyncCounts(),
            last_error="",
            started_at=_at(self._clock()),
            finished_at=None,
        )

    def _until(self, deadline: WorkerDeadline | None) -> float:
        start = self._monotonic()
        if deadline is None:
            return start + self._settings.step_seconds
        return start + max(deadline.remaining() - self._settings.reserve_seconds, 0.0)

    def _work(self, record: SourceRecord, token: str, until: float) -> StepOutcome:
        source: Source | None = None  # built when a listing needs it (a removal has no credentials left)
        known = _Known(self._sources, record)
        while True:
            if record.removing and record.phase == "listing":  # removed meanwhile: no more listing
                record = replace(record, phase="sweeping", full=True)
            if record.phase == "listing":
                source = source or self._connector(record)
                record, retry_after = self._list(source, record, known, until)
            elif record.phase == "sweeping":
                record, retry_after = self._sweep(record), 0.0
            else:
                return "done"
            if record.phase == "idle":
                return self._finish(record, token, until)
            record = replace(record, lease_until=self._clock() + self._settings.lease_seconds)
            if not self._sources.advance(replace(record, lease_token=token), token=token):
                return "superseded"
            if retry_after > 0 or self._monotonic() >= until:
                return self._continue(record, token, retry_after)

    def _continue(self, record: SourceRecord, token: str, delay: float) -> StepOutcome:
        sync, n = token.rsplit(":", 1)
        step = SyncStep(record.tenant_id, record.namespace_id, record.source_id, token=f"{sync}:{int(n) + 1}")
        if self._queue is None:
            raise errors.WorkerOutOfTime("the sync goes on in another step", source_id=record.source_id)
        self._queue.submit(step, delay_seconds=delay)
        return "continued"

    def _finish(self, record: SourceRecord, token: str, until: float) -> StepOutcome:
        if record.removing:
            self._sources.delete(record.tenant_id, record.namespace_id, record.source_id)
            return "done"
        if self._sources.get(record.tenant_id, record.namespace_id, record.source_id).removing:
            # removed while this sync ran: its documents go now, in this sync's steps
            removal = replace(record, removing=True, phase="sweeping", run=record.run + 1)
            return self._work(removal, token, until)
        now = self._clock()
        every = record.every_minutes
        # An incremental listing names an item again only when it changes: one that failed is read
        # again by a full listing next time (a full listing fetches only what changed).
        retry = not record.full and record.counts.failed > 0  # (a full one that failed is retried anyway)
        done = replace(
            record,
            cursor="" if retry else record.cursor,
            phase="idle",
            finished_at=_at(now),
            next_run_at=_at(now) + timedelta(minutes=every) if every else None,
            lease_token="",
            lease_until=0.0,
        )
        return "done" if self._sources.advance(done, token=token) else "superseded"

    def _failed(self, source_id: str, step: SyncStep, token: str, exc: errors.RaglineError) -> None:
        """Keep the error and the cursor; free the source for the next attempt."""
        try:
            current = self._sources.get(step.tenant_id, step.namespace_id, source_id)
            self._sources.advance(
                replace(current, last_error=exc.message[:500], lease_token="", lease_until=0.0), token=token
            )
        except errors.RaglineError:
            _log.warning("a failed sync's state could not be written", exc_info=True)

    # -- listing --------------------------------------------------------------------------------
    def _list(
        self, source: Source, record: SourceRecord, known: _Known, until: float
    ) -> tuple[SourceRecord, float]:
        try:
            page = source.changes(record.cursor or None, known, until=until)
        except errors.CursorExpired:
            _log.info("cursor refused: a full listing", extra={"source": record.source_id})
            return replace(record, cursor="", full=False), 0.0
        counts = self._apply(source, record, known, page.changes)
        record = replace(record, cursor=page.cursor, full=page.full, counts=counts)
        if page.done:  # its last page says whether the listing named everything (then: the sweep)
            record = replace(record, phase="sweeping" if page.full else "idle")
        return record, page.retry_after

    def _apply(
        self, source: Source, record: SourceRecord, known: _Known, changes: list[Change]
    ) -> SyncCounts:
        r = record
        stored = self._sources.known(r.tenant_id, r.namespace_id, r.source_id, [c.item_id for c in changes])
        counts = r.counts
        written: list[KnownItem] = []
        dropped: list[str] = []
        for change in changes:
            before = stored.get(change.item_id)
            outcome, item = self._apply_one(source, record, change, before)
            counts = counts.plus(**{outcome: 1}, listed=1 if change.kind != "delete" else 0)
            if item is None:
                if before is not None:
                    dropped.append(change.item_id)
            else:
                written.append(item)
                stored[item.item_id] = item
                known.remember(item)
        if written:
            self._sources.put_items(r.tenant_id, r.namespace_id, r.source_id, written)
        if dropped:
            self._sources.drop_items(r.tenant_id, r.namespace_id, r.source_id, dropped)
        return counts

    def _apply_one(
        self, source: Source, record: SourceRecord, change: Change, before: KnownItem | None
    ) -> tuple[str, KnownItem | None]:
        """What happened (a :class:`SyncCounts` field) and the item's inventory row (None: none)."""
        scope = TenantScope(tenant_id=record.tenant_id, namespace_id=record.namespace_id)
        document_id = document_id_of(document_path(record.source_id, change.item_id))
        seen = record.run
        if change.kind == "delete":
            return ("deleted" if self._remove(scope, document_id) else "unchanged"), None
        if change.kind == "keep":
            return "unchanged", (before._replace(seen_run=seen) if before is not None else None)
        if change.kind == "failed":  # kept as it was (a new item: its error, to show and to try again)
            base = before or KnownItem(change.item_id, document_id, "", "", seen, "failed")
            return "failed", base._replace(seen_run=seen, error=change.error[:500] or base.error)
        item = change.item
        assert item is not None
        if change.kind == "skip":
            deleted = self._remove(scope, document_id)
            row = KnownItem(change.item_id, document_id, item.version, "", seen, "skipped", item.memo, "")
            return ("deleted" if deleted else "unchanged"), row
        try:
            access = item.access if item.access is not None else source.permissions(item)
        except errors.RaglineError as exc:
            return "failed", self._failed_item(before, change.item_id, document_id, seen, exc)
        if not access.readable:
            return ("deleted" if self._remove(scope, document_id) else "unchanged"), None
        row = KnownItem(change.item_id, document_id, item.version, access.key(), seen, "ok", item.memo, "")
        if before is not None and before.version == item.version:
            if before.state == "unreadable":  # this version cannot be parsed: it waits for another
                return "unchanged", row._replace(state="unreadable", error=before.error)
            if before.state == "ok" and before.access_key == access.key():
                return "unchanged", row
            if before.state == "ok" and self._relabel(scope, document_id, access):
                return "relabelled", row
        try:
            data = item.content if item.content is not None else source.fetch(item)
        except errors.NotFound:
            return ("deleted" if self._remove(scope, document_id) else "unchanged"), None
        except errors.RaglineError as exc:
            return "failed", self._failed_item(before, change.item_id, document_id, seen, exc)
        metadata = MetadataInput(users=access.users, groups=access.groups)
        try:
            self._ingest.ingest(
                scope, filename=item.filename, data=data, document_id=document_id, source=item.name,
                metadata=metadata,
            )  # fmt: skip
        except REFUSED as exc:  # this version (or its readers) is refused: it waits for the next
            return "failed", row._replace(state="unreadable", error=exc.message[:500])
        except (errors.Superseded, errors.DocumentBusy) as exc:  # another write of it is in flight
            return "failed", self._failed_item(before, change.item_id, document_id, seen, exc)
        return "indexed", row

    @staticmethod
    def _failed_item(
        before: KnownItem | None, item_id: str, document_id: str, seen: int, exc: errors.RaglineError
    ) -> KnownItem:
        """A transient failure: what the namespace holds stays, and the next sync tries again (the
        version is forgotten)."""
        base = before or KnownItem(item_id, document_id, "", "", seen, "failed")
        return base._replace(version="", seen_run=seen, state="failed", error=exc.message[:500])

    def _relabel(self, scope: TenantScope, document_id: str, access: ItemAccess) -> bool:
        try:
            self._ingest.relabel(scope, document_id, MetadataInput(users=access.users, groups=access.groups))
        except (errors.NotFound, errors.Conflict, errors.InvalidRequest):
            return False  # not served now (deleted, failed, being written): written again in full
        return True

    def _remove(self, scope: TenantScope, document_id: str) -> bool:
        """Delete the item's document if the namespace serves it (also one whose inventory row was
        never written: a step cut off between the ingest and the row)."""
        stored = self._documents.get(scope.tenant_id, scope.namespace_id, document_id)
        if stored is None or stored.status == "deleted":
            return False
        self._ingest.remove(scope, document_id)
        return True

    # -- sweeping -------------------------------------------------------------------------------
    def _sweep(self, record: SourceRecord) -> SourceRecord:
        """Delete one batch of what the listing did not name; the phase ends with the last."""
        r = record
        run = r.run if not r.removing else 1 << 62
        gone = self._sources.unseen(
            r.tenant_id, r.namespace_id, r.source_id, run=run, limit=self._settings.sweep_batch
        )
        scope = TenantScope(tenant_id=r.tenant_id, namespace_id=r.namespace_id)
        deleted = sum(self._remove(scope, item.document_id) for item in gone)
        self._sources.drop_items(r.tenant_id, r.namespace_id, r.source_id, [i.item_id for i in gone])
        record = replace(r, counts=r.counts.plus(deleted=deleted))
        if len(gone) < self._settings.sweep_batch:
            record = replace(record, phase="idle")
        return record


def _tokens(token: str) -> tuple[str, str]:
    """The lease token a step holds and the one it takes over from (``""``: only a free lease)."""
    if not token:
        return f"{uuid.uuid4().hex}:0", ""
    sync, _, n = token.rpartition(":")
    if not sync or not n.isdigit():
        raise errors.InvalidRequest("a sync step's token is <sync>:<n>", token=token[:80])
    number = int(n)
    return token, f"{sync}:{number - 1}" if number > 0 else ""


def _at(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=UTC)
