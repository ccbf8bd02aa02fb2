"""Document records: the identity of a document, its lifecycle, and the ordering rules of its events.

Each ingest or delete *claims* the record with the event's S3 ``sequencer``; the claim bumps a
monotonically increasing ``generation`` that stamps every chunk written for it. A version becomes the
served one only when its worker *publishes* it in the store (which raises the document's fence and
sweeps older generations) and then completes the record; a worker whose generation was overtaken
loses at the store and throws its own chunks away (see :class:`~ragline.ports.VectorStore`).
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DocumentStatus = Literal["queued", "processing", "ready", "failed", "deleting", "deleted"]
ClaimReason = Literal["claimed", "stale", "duplicate"]
SEQUENCER_WIDTH = 32
CLAIMABLE_STATUSES: tuple[DocumentStatus, ...] = ("queued", "processing", "deleting", "failed")
"""Statuses in which the *same* event may claim again: its work did not finish (a redelivery)."""


MAX_DOCUMENT_ID_BYTES = 240
"""Fits OpenSearch's 512-byte ``_id`` (``<tenant>/<namespace>/<document>#<seq>``, ids of 128 each) and
DynamoDB's 1,024-byte sort key."""
_KEPT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-/")
_DOCUMENT_ID = re.compile(r"[A-Za-z0-9_.\-/~]+")
_HASHED = "~~"


def document_id_for(path: str) -> str:
    """The document id of an object path: injective, so two keys never share a document.

    Characters outside ``[A-Za-z0-9_.-/]`` become ``~XX`` per UTF-8 byte (``~`` itself is ``~7E``;
    ``#`` is reserved for chunk ids), nothing is stripped or merged. An encoding longer than
    :data:`MAX_DOCUMENT_ID_BYTES` keeps a readable prefix and ends ``~~<sha256 of the path>``; no short
    id contains ``~~`` (every ``~`` there starts an escape), so the two forms never meet.
    """
    if not path:
        raise ValueError("a document needs a non-empty name")
    encoded = "".join(
        c if c in _KEPT else "".join(f"~{b:02X}" for b in c.encode("utf-8", "surrogatepass")) for c in path
    )
    if len(encoded) <= MAX_DOCUMENT_ID_BYTES:
        return encoded
    digest = hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()
    return encoded[: MAX_DOCUMENT_ID_BYTES - len(digest) - len(_HASHED)] + _HASHED + digest


def check_document_id(value: str) -> str:
    """A client-chosen document id: the characters :func:`document_id_for` produces, bounded."""
    if not _DOCUMENT_ID.fullmatch(value) or len(value) > MAX_DOCUMENT_ID_BYTES:
        raise ValueError(f"a document id is 1-{MAX_DOCUMENT_ID_BYTES} characters of A-Z a-z 0-9 _ . - / ~")
    return value


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
    indexed_generation: int = 0
    """The generation whose chunks the store serves (its *published* version; 0: none yet). A claim
    keeps it; ``complete`` and a rejected version move it."""
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
