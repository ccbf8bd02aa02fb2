"""Document records: the lifecycle of one document and the ordering rules of its events.

Each ingest or delete *claims* the record with the event's S3 ``sequencer``; the claim bumps a
monotonically increasing ``generation`` that stamps every chunk written for it. Stores refuse a
chunk write older than what they hold and delete a document's chunks by generation, so a slow,
out-of-date worker can never overwrite a newer version's chunks.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DocumentStatus = Literal["queued", "processing", "ready", "failed", "deleting", "deleted"]
ClaimReason = Literal["claimed", "stale", "duplicate"]
SEQUENCER_WIDTH = 32
CLAIMABLE_STATUSES: tuple[DocumentStatus, ...] = ("queued", "processing", "deleting", "failed")
"""Statuses in which the *same* event may claim again: its work did not finish (a redelivery)."""


def normalise_sequencer(sequencer: str) -> str:
    """S3 sequencers are hex strings of varying length: right-pad with zeros, then compare as text."""
    value = sequencer.strip().upper()
    if not value or any(c not in "0123456789ABCDEF" for c in value) or len(value) > SEQUENCER_WIDTH:
        raise ValueError(f"not an S3 sequencer: {sequencer!r}")
    return value.ljust(SEQUENCER_WIDTH, "0")


def now() -> datetime:
    return datetime.now(UTC)


class DocumentRecord(BaseModel):
    tenant_id: str
    namespace_id: str
    document_id: str
    source: str = ""
    """``s3://bucket/key``, a local path, or ``api:`` for text sent through the API."""
    status: DocumentStatus = "queued"
    sequencer: str = ""
    """Normalised sequencer of the event that last claimed this record."""
    generation: int = 0
    """Bumped by every claim; stamps the chunks written under that claim."""
    content_hash: str = ""
    version_id: str = ""
    etag: str = ""
    size: int = 0
    chunk_count: int = 0
    pages: int = 0
    error_code: str = ""
    error_message: str = ""
    attempts: int = 0
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)


class Claim(BaseModel):
    """The outcome of trying to claim a record for an event."""

    granted: bool
    record: DocumentRecord
    """After a granted claim: the claimed record (status ``processing``, new generation). Otherwise: the
    stored record that made the event stale or a duplicate."""
    reason: ClaimReason = "claimed"


def claim_decision(stored: DocumentRecord | None, sequencer: str) -> ClaimReason:
    """Whether an event with (normalised) ``sequencer`` may claim the record, or why not.

    Granted when nothing is stored, for a newer sequencer, and for the same sequencer while the stored
    status is one of :data:`CLAIMABLE_STATUSES`; ``duplicate`` for the same sequencer otherwise
    (``ready``/``deleted``: its work is done); ``stale`` for an older one.
    """
    if stored is None or sequencer > stored.sequencer:
        return "claimed"
    if sequencer == stored.sequencer:
        return "claimed" if stored.status in CLAIMABLE_STATUSES else "duplicate"
    return "stale"


class ClaimUpdate(BaseModel):
    """What a granted claim writes whatever was stored (``generation`` and ``attempts`` move by
    :func:`claimed_record`'s rule; a conditional-write backend expresses that rule atomically)."""

    model_config = ConfigDict(frozen=True)

    sequencer: str
    status: DocumentStatus
    source: str
    version_id: str
    etag: str
    size: int
    error_code: str = ""
    error_message: str = ""
    updated_at: datetime


def claim_update(
    sequencer: str,
    *,
    deleting: bool,
    source: str,
    version_id: str,
    etag: str,
    size: int,
    at: datetime,
) -> ClaimUpdate:
    """The claim of an ingest (status ``processing``) or a delete (``deleting``); clears the error."""
    return ClaimUpdate(
        sequencer=sequencer,
        status="deleting" if deleting else "processing",
        source=source,
        version_id=version_id,
        etag=etag,
        size=size,
        updated_at=at,
    )


def claimed_record(
    stored: DocumentRecord | None,
    tenant_id: str,
    namespace_id: str,
    document_id: str,
    update: ClaimUpdate,
) -> DocumentRecord:
    """The record after a granted claim: ``update`` applied, ``generation`` + 1, ``attempts`` + 1 for the
    same sequencer and 1 for a new one. Counts and hash of the last completed version are kept."""
    base = stored or DocumentRecord(
        tenant_id=tenant_id, namespace_id=namespace_id, document_id=document_id, created_at=update.updated_at
    )
    same_event = stored is not None and stored.sequencer == update.sequencer
    return base.model_copy(
        update=update.model_dump()
        | {"generation": base.generation + 1, "attempts": base.attempts + 1 if same_event else 1}
    )
