"""Document records: the identity of a document, its lifecycle, and the ordering rules of its events.

Each ingest or delete *claims* the record; the claim bumps a monotonically increasing ``generation``
that stamps every chunk written for it. One ordering covers every source of a document (see
:func:`claim_decision`): an S3 event is ordered by its ``sequencer`` against the S3 events already
claimed, and only against them; a write made through the API or the CLI is ordered by its arrival at
the registry, after everything the registry holds. A claim holds a *lease*: a copy of the same event
that arrives while it is live backs off (``busy``) instead of redoing the work. A version becomes the
served one only when its worker *publishes* it in the store (which raises the document's fence and
sweeps older generations) and then completes the record; a worker whose generation was overtaken
loses at the store and throws its own chunks away (see :class:`~ragline.ports.VectorStore`).
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field

DocumentStatus = Literal["queued", "processing", "ready", "failed", "deleting", "deleted"]
ClaimReason = Literal["claimed", "stale", "duplicate", "busy"]
Origin = Literal["s3", "local", "sidecar"]
"""Who made a claim: an S3 event of the document's key (ordered by its sequencer), a local write
(API text, CLI), or an S3 event of its metadata sidecar's key (ordered among the sidecar's events by
its sequencer, and after everything else, like a local write: S3 orders events per key only)."""
SEQUENCER_WIDTH = 32
CLAIMABLE_STATUSES: tuple[DocumentStatus, ...] = ("queued", "processing", "deleting", "failed")
"""Statuses in which the *same* event may claim again: its work did not finish (a redelivery)."""
LEASED_STATUSES: tuple[DocumentStatus, ...] = ("processing", "deleting")
"""Statuses in which a worker may still be at work: the same event waits for the claim's lease."""
S3_SOURCE = "s3://"
API_SOURCE = "api:"
"""The source of text sent through the API: ``api:<filename>`` (``api:`` alone before it named one)."""


def shown_source(source: str, name: str = "") -> str:
    """What a client is shown of where a document came from: the tenant's own name for it, never the
    deployment's storage. A stored source stays as it is (a reindex re-reads the object it names, a
    delete removes it); every view turns it into this, in one place.

    An S3 upload is its path below ``<tenant>/<namespace>/`` — the key the tenant wrote, without
    the bucket or the layout around it; text sent through the API is its filename (``name`` for a
    record written before the source named one); a local path, a URL or a data source's name is shown
    as it was given. Shown again, a shown source is itself (a replay's recorded view stays the same).
    """
    if source.startswith(S3_SOURCE):
        key = source[len(S3_SOURCE) :].partition("/")[2]
        parts = key.split("/", 2)
        return parts[2] if len(parts) == 3 and parts[2] else name
    if source.startswith(API_SOURCE):
        return source[len(API_SOURCE) :] or name
    return source


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
    """``s3://bucket/key``, a local path, a data source's URL or name, or ``api:<filename>`` for text
    sent through the API: kept whole for the server's own use; clients see :func:`shown_source`."""
    status: DocumentStatus = "queued"
    sequencer: str = ""
    """The greatest (normalised) S3 sequencer that claimed this record: S3 events are ordered against
    it, and only against it. ``""`` until an S3 event claims the document; a local write keeps it."""
    origin: Origin = "s3"
    """Who made the last claim: its S3 event (``sequencer``), a local write made after it, or its
    sidecar's event (``sidecar_sequencer``)."""
    sidecar_sequencer: str = ""
    """The greatest (normalised) S3 sequencer of the document's sidecar key that claimed this record:
    sidecar events are ordered against it, and only against it (``""``: none yet)."""
    deleted_change: str = ""
    """While claims run on a deleted document: the change its deletion was announced under. A claim
    that finds S3 still serving nothing settles as that deletion (:attr:`change`), not a new one."""
    change: str = ""
    """The change the record's settled state is announced under when it is not the last claim's own
    event (:attr:`event_id`): a deletion found again keeps the first one's. ``""``: the claim's own."""
    lease_until: datetime | None = None
    """Until when the last claim's worker may still be at work (``None``: no lease). A copy of the
    same event arriving before then is ``busy``; after it, the worker is presumed dead (its function
    timed out) and the copy takes over."""
    generation: int = 0
    """Bumped by every claim; stamps the chunks written under that claim (and owns the claim:
    ``complete``/``fail`` write only at it)."""
    content_hash: str = ""
    recipe: str = ""
    """How the served version's chunks were made from its bytes: a digest of its name and source, the
    model, the chunking and the parsers' release (``recipe_of`` in the generation writer). With
    ``content_hash``, the same pair means the same chunks: an unchanged re-ingest reuses them, parsing
    and embedding nothing (``""``: unknown, a record written before it existed)."""
    version_id: str = ""
    """The version the last claim applies: its S3 object version, or the id of a local write's kept
    original (:mod:`ragline.services.originals`)."""
    served_version: str = ""
    """``version_id`` of the version the store serves, set when a version completes and kept by later
    claims: a document whose newest version failed still names the one it serves (what a reindex
    rebuilds). ``""``: none, or a record written before this field existed."""
    etag: str = ""
    size: int = 0
    chunk_count: int = 0
    pages: int = 0
    indexed_generation: int = 0
    """The generation whose chunks the store serves (its *published* version; 0: none yet). A claim
    keeps it; ``complete`` and a rejected version move it."""
    attributes: dict[str, str | int | float | bool | list[str]] = Field(default_factory=dict)
    """The document's metadata as its served chunks carry it (:mod:`ragline.domain.attributes`)."""
    readers: tuple[str, ...] = ()
    """Reader terms of the document's ACL (:mod:`ragline.domain.access`); ``()``: every user."""
    error_code: str = ""
    error_message: str = ""
    attempts: int = 0
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)

    @property
    def serves(self) -> bool:
        """Whether the store serves a version of the document: this record's (``ready``) or, while a
        newer one is written or after it failed for a reason outside the file, the one before."""
        return bool(self.indexed_generation and self.chunk_count and self.status != "deleted")

    @property
    def event_id(self) -> str:
        """The change the record holds, unique per document: its :attr:`change` when it kept an
        earlier one's; else the last claim's event — its S3 sequencer, ``sidecar-<sequencer>`` (its
        sidecar's), or ``local-<g>`` (a local write is never redelivered; its generation names it)."""
        if self.change:
            return self.change
        if self.origin == "sidecar":
            return f"sidecar-{self.sidecar_sequencer}"
        return self.sequencer if self.origin == "s3" else f"local-{self.generation}"


def upgrade_stored(fields: dict[str, Any]) -> dict[str, Any]:
    """A record's stored fields as this version reads them. Records written before ``origin``
    existed carry, for a local write, a wall-clock "sequencer" (``18ED…``) that sorts above every S3
    sequencer: it is no S3 order, so it reads as none (S3 events for the name are then granted);
    a record whose source is an S3 URI keeps its sequencer as its S3 order."""
    if "origin" in fields:
        return fields
    if str(fields.get("source", "")).startswith(S3_SOURCE):
        return fields | {"origin": "s3"}
    return fields | {"origin": "local", "sequencer": ""}


class Claim(BaseModel):
    """The outcome of trying to claim a record for an event."""

    granted: bool
    record: DocumentRecord
    """After a granted claim: the claimed record (status ``processing``, new generation). Otherwise: the
    stored record that made the event stale, a duplicate or busy."""
    reason: ClaimReason = "claimed"


def claim_decision(
    stored: DocumentRecord | None, sequencer: str | None, at: datetime, sidecar: str | None = None
) -> ClaimReason:
    """Whether an event may claim the record at time ``at``, or why not.

    ``sequencer`` is an S3 event's (normalised), or ``None`` for a local write. Granted when nothing
    is stored and for every local write (it is made now, after everything stored). An S3 event is
    compared with the stored S3 order only: granted when newer, ``stale`` when older. For the same
    sequencer: ``stale`` when a local write claimed after it (it was overtaken), ``duplicate`` once
    its work is done (``ready``/``deleted``), ``busy`` while its claim is ``processing``/``deleting``
    under a live lease (a concurrent copy of the event), granted otherwise (a redelivery after a
    failure, or after the lease ran out: its worker died).

    ``sidecar`` is the sequencer of an event of the document's sidecar (then ``sequencer`` is
    ``None``): the same rule on the sidecar's own order (``sidecar_sequencer``, origin ``sidecar``),
    so a redelivered or duplicated sidecar event is no new change; on a deleted document, or one a
    local write took (API text: it serves until the key's own next event), it is ``stale`` (the
    document's own event, if it comes back, reads the sidecar).
    """
    if sidecar is not None and stored is not None:
        if stored.status == "deleted" or stored.origin == "local":
            return "stale"  # deleted, or text written locally since it was read: not S3's document
        return _same_order(stored, sidecar, stored.sidecar_sequencer, "sidecar", at)
    if stored is None or sequencer is None:
        return "claimed"
    return _same_order(stored, sequencer, stored.sequencer, "s3", at)


def _same_order(stored: DocumentRecord, mine: str, theirs: str, origin: Origin, at: datetime) -> ClaimReason:
    """:func:`claim_decision` for an event ``mine`` of an S3 key whose greatest claimed is ``theirs``."""
    if mine > theirs:
        return "claimed"
    if mine < theirs or stored.origin != origin:
        return "stale"
    if stored.status not in CLAIMABLE_STATUSES:
        return "duplicate"
    if stored.status in LEASED_STATUSES and stored.lease_until is not None and at < stored.lease_until:
        return "busy"
    return "claimed"


def already_applied(stored: DocumentRecord | None, sequencer: str) -> TypeGuard[DocumentRecord]:
    """Whether the S3 event with ``sequencer`` finished on ``stored`` (a redelivery, nothing to do)."""
    return (
        stored is not None
        and stored.origin == "s3"
        and stored.sequencer == sequencer
        and stored.status not in CLAIMABLE_STATUSES
    )


class ClaimUpdate(BaseModel):
    """What a granted claim writes whatever was stored (``generation``, ``attempts`` and the S3
    order move by :func:`claimed_record`'s rule)."""

    model_config = ConfigDict(frozen=True)

    sequencer: str | None
    """The S3 event's normalised sequencer; ``None`` for a local write (the S3 order is kept)."""
    sidecar: str | None = None
    """A sidecar event's normalised sequencer (``sequencer`` is then ``None``)."""
    status: DocumentStatus
    source: str
    version_id: str
    etag: str
    size: int
    error_code: str = ""
    error_message: str = ""
    lease_until: datetime | None
    updated_at: datetime


def claim_update(
    sequencer: str | None,
    *,
    deleting: bool,
    source: str,
    version_id: str,
    etag: str,
    size: int,
    at: datetime,
    lease_seconds: float = 0.0,
    sidecar: str | None = None,
) -> ClaimUpdate:
    """The claim of an ingest (status ``processing``) or a delete (``deleting``); clears the error.
    ``lease_seconds`` > 0 leases the claim until ``at`` + that long. ``sidecar``: the claim of the
    document's sidecar event with that sequencer (``sequencer`` must be ``None``)."""
    return ClaimUpdate(
        sequencer=sequencer,
        sidecar=sidecar,
        status="deleting" if deleting else "processing",
        source=source,
        version_id=version_id,
        etag=etag,
        size=size,
        lease_until=at + timedelta(seconds=lease_seconds) if lease_seconds > 0 else None,
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
    same S3 (or sidecar) event and 1 for any other. A local write keeps the S3 orders (``sequencer``,
    ``sidecar_sequencer``); a sidecar event moves its own. Counts and hash of the last completed
    version are kept; a claim on a deleted document (or on one a claim since then left unsettled)
    carries its deletion's change in ``deleted_change``, and the claim's own change is its event."""
    base = stored or DocumentRecord(
        tenant_id=tenant_id, namespace_id=namespace_id, document_id=document_id, created_at=update.updated_at
    )
    origin: Origin = "s3" if update.sequencer is not None else "sidecar" if update.sidecar else "local"
    same_event = (
        stored is not None
        and stored.origin == origin
        and (
            (origin == "s3" and stored.sequencer == update.sequencer)
            or (origin == "sidecar" and stored.sidecar_sequencer == update.sidecar)
        )
    )
    if base.status == "deleted":
        deleted_change = base.event_id
    elif base.status in ("queued", *LEASED_STATUSES):
        deleted_change = base.deleted_change  # a claim overtaken or crashed before it settled
    else:
        deleted_change = ""
    return base.model_copy(
        update=update.model_dump(exclude={"sequencer", "sidecar"})
        | {
            "sequencer": base.sequencer if update.sequencer is None else update.sequencer,
            "sidecar_sequencer": update.sidecar or base.sidecar_sequencer,
            "origin": origin,
            "generation": base.generation + 1,
            "attempts": base.attempts + 1 if same_event else 1,
            "deleted_change": deleted_change,
            "change": "",
        }
    )


def decide_claim(
    stored: DocumentRecord | None, tenant_id: str, namespace_id: str, document_id: str, update: ClaimUpdate
) -> Claim:
    """The whole claim rule on ``stored``, for every registry: refused (stale, duplicate or busy) with
    the stored record, or granted with the record to write (:func:`claimed_record`). ``update``
    carries the event's sequencer and the time of the claim (the lease's clock)."""
    decision = claim_decision(stored, update.sequencer, update.updated_at, update.sidecar)
    if stored is not None and decision != "claimed":
        return Claim(granted=False, record=stored, reason=decision)
    return Claim(granted=True, record=claimed_record(stored, tenant_id, namespace_id, document_id, update))
