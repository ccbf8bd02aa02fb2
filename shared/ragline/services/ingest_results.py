"""What ingesting one document reports, and how its failures are classed.

Shared by every stage of an ingest (:mod:`ragline.services.ingest`, its pipeline and its S3 sync)
and by :mod:`ragline.services.ingest_batch`, which reports each work item's results: kept apart from
the service so the batch needs nothing of the service's own module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ragline import errors
from ragline.domain.documents import DocumentRecord, document_id_for
from ragline.domain.models import RunUsage

Outcome = Literal["indexed", "unchanged", "deleted", "stale", "duplicate", "ignored"]
DOCUMENT_ERRORS: tuple[type[errors.RaglineError], ...] = (
    errors.DocumentTooLarge,
    errors.UnsupportedDocument,
    errors.UnreadableDocument,
    errors.EmptyDocument,
)
"""What is wrong with the file itself: the version settles as ``failed`` and the document serves nothing."""
SETTLED: tuple[type[errors.RaglineError], ...] = (
    errors.Superseded,
    errors.EventNotPublished,
    *DOCUMENT_ERRORS,
)
"""Errors whose record is already written when they propagate (the generic handler must not fail it)."""


def document_id_of(path: str) -> str:
    """:func:`~ragline.domain.documents.document_id_for`, refusing an empty name as a bad request."""
    try:
        return document_id_for(path)
    except ValueError as exc:
        raise errors.InvalidRequest(str(exc), path=path) from exc


@dataclass(frozen=True)
class IngestResult:
    document_id: str
    outcome: Outcome
    chunks: int
    pages: int
    content_hash: str
    usage: RunUsage
    reason: str = ""
    notes: tuple[str, ...] = ()
    """What the parsing library recovered from while reading the file
    (:mod:`ragline.documents.library_logs`)."""

    @property
    def skipped(self) -> bool:
        return self.outcome in ("unchanged", "stale", "duplicate", "ignored")


def skipped(record: DocumentRecord, outcome: Outcome, reason: str = "") -> IngestResult:
    """A document left as its record says (nothing written): what it serves is reported."""
    return IngestResult(
        record.document_id, outcome, record.chunk_count, record.pages, record.content_hash, RunUsage(), reason
    )


def ignored(key: str, reason: str) -> IngestResult:
    """An object that is no document of ours (another bucket, a folder marker, a kept original…)."""
    return IngestResult(key, "ignored", 0, 0, "", RunUsage(), reason)
