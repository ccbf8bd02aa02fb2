"""Announcing changes where they become true, each with the id of the change (see
:mod:`ragline.domain.events`).

- Documents: :class:`AnnouncingDocuments` wraps the :class:`~ragline.ports.DocumentRegistry`; a
  ``complete`` or ``fail`` that the registry accepted (the claim still owned the record) is announced
  after it is written — ``document.indexed``/``document.deleted``/``document.failed`` — from every
  path that settles a record (an ingest, a batch's publish, a delete, a relabel, a reject). A
  redelivered event whose change already settled is announced again by the ingest service
  (:meth:`Announcer.settled`) with the same id: the crash between "record written" and "event
  published" loses nothing, and consumers dedupe.
- ``namespace.reindexed``: by the reindex service after its switch (and again on a redelivered last step).
- ``usage.quota_threshold``: :class:`QuotaWatch`, after a run is charged. Each threshold of a period
  is claimed with a conditional write (:class:`~ragline.ports.OnceMarks`): of any number of concurrent
  runs crossing it, exactly one announces it.

A publish that fails raises (the work is retried and re-announces), except the quota watch's: the
run is done and charged, so its failure is logged and its mark undone for the next run to retry.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ragline import errors
from ragline.domain.billing import current_period
from ragline.domain.documents import Claim, DocumentRecord
from ragline.domain.events import Event, document_event, quota_threshold, thresholds_reached
from ragline.ports import DocumentRegistry, EventPublisher, OnceMarks, UsageLedger

_log = logging.getLogger(__name__)
THRESHOLD_MARK_TTL = 40 * 86_400
"""A threshold mark outlives its month (the period is in its key)."""


class Announcer:
    """Builds document events from records and publishes them (``publisher=None``: announces nothing)."""

    def __init__(self, publisher: EventPublisher | None) -> None:
        self._publisher = publisher

    @property
    def enabled(self) -> bool:
        return self._publisher is not None

    def publish(self, events: Sequence[Event]) -> None:
        """Publish, or raise :class:`~ragline.errors.EventNotPublished` (the change stands: the
        caller must not undo or fail it, only let its work be retried)."""
        if self._publisher is None or not events:
            return
        try:
            self._publisher.publish(events)
        except errors.RaglineError as exc:
            raise errors.EventNotPublished(
                f"the change is recorded; its event was not published ({exc.code}): retried",
                event_ids=[e.id for e in events],
            ) from exc

    def settled(self, record: DocumentRecord) -> None:
        """Announce the change ``record`` settled in (ready, deleted or failed; nothing otherwise)."""
        event = settled_event(record)
        if event is not None:
            self.publish([event])


def settled_event(record: DocumentRecord, code: str = "", message: str = "") -> Event | None:
    kinds = {"ready": "document.indexed", "deleted": "document.deleted", "failed": "document.failed"}
    kind = "document.failed" if code else kinds.get(record.status)
    if kind is None:
        return None
    extra: dict[str, object] = {}
    if kind == "document.indexed":
        extra = {"chunks": record.chunk_count, "pages": record.pages, "content_hash": record.content_hash}
    if kind == "document.failed":
        extra = {"reason": {"code": code or record.error_code, "message": message or record.error_message}}
    return document_event(
        kind,
        tenant_id=record.tenant_id,
        namespace_id=record.namespace_id,
        document_id=record.document_id,
        change=record.event_id,
        generation=record.generation,
        time=record.updated_at,
        extra=extra,
    )


class AnnouncingDocuments:
    """A :class:`~ragline.ports.DocumentRegistry` that announces each settled record."""

    def __init__(self, inner: DocumentRegistry, announcer: Announcer) -> None:
        self._inner = inner
        self._announcer = announcer

    def claim(self, *args: Any, **kwargs: Any) -> Claim:  # the registry's own signature
        return self._inner.claim(*args, **kwargs)

    def complete(self, record: DocumentRecord) -> bool:
        done = self._inner.complete(record)
        if done:
            self._announcer.settled(record)
        return done

    def fail(self, record: DocumentRecord, code: str, message: str) -> bool:
        failed = self._inner.fail(record, code, message)
        if failed:
            event = settled_event(record, code, message)
            if event is not None:
                self._announcer.publish([event])
        return failed

    def get(self, tenant_id: str, namespace_id: str, document_id: str) -> DocumentRecord | None:
        return self._inner.get(tenant_id, namespace_id, document_id)

    def list(self, tenant_id: str, namespace_id: str) -> list[DocumentRecord]:
        return self._inner.list(tenant_id, namespace_id)

    def purge_tenant(self, tenant_id: str) -> int:
        return self._inner.purge_tenant(tenant_id)

    def __getattr__(self, name: str) -> object:  # adapter extras (fences, tests' helpers)
        return getattr(self._inner, name)


class QuotaWatch:
    """Announces ``usage.quota_threshold`` when a charged run takes the tenant's runs of the period
    to 80 % or 100 % of its quota — once per threshold and period, whatever the concurrency."""

    def __init__(self, *, ledger: UsageLedger, marks: OnceMarks, announcer: Announcer) -> None:
        self._ledger = ledger
        self._marks = marks
        self._announcer = announcer

    def after_charge(self, tenant_id: str, limit: int | None) -> list[int]:
        """The thresholds this call announced. Reads the period's counter only under a quota."""
        if not limit or not self._announcer.enabled:
            return []
        period = current_period()
        announced: list[int] = []
        try:
            runs = self._ledger.period_runs(tenant_id, period)
            for percent in thresholds_reached(runs, limit):
                key = f"quota#{tenant_id}#{period}#{percent}"
                if not self._marks.mark(key, ttl_seconds=THRESHOLD_MARK_TTL):
                    continue  # another run announced it
                event = quota_threshold(
                    tenant_id=tenant_id, period=period, percent=percent, limit=limit, runs=runs,
                    time=datetime.now(UTC),
                )  # fmt: skip
                try:
                    self._announcer.publish([event])
                except errors.RaglineError:
                    self._marks.forget(key)  # the next charged run tries again
                    raise
                announced.append(percent)
        except errors.RaglineError:  # the run is charged and answered: not its failure
            _log.warning("quota threshold not announced; the next run retries", exc_info=True)
        return announced
