"""Document records: the lifecycle of one document and the ordering rules of its events.

Each ingest or delete *claims* the record with the event's S3 ``sequencer``; the claim bumps a
monotonically increasing ``generation`` that stamps every chunk written for it. Stores refuse a
chunk write older than what they hold and delete a document's chunks by generation, so a slow,
out-of-date worker can never overwrite a newer version's chunks.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

DocumentStatus = Literal["queued", "processing", "ready", "failed", "deleting", "deleted"]
SEQUENCER_WIDTH = 32


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
    reason: Literal["claimed", "stale", "duplicate"] = "claimed"
