"""Data sources: where a namespace's documents live (a website, a wiki, a drive), kept in step by syncs.

A source is listed as *items* (a page, a file), each with a stable id, a version that changes when its
content does, and who may read it. A sync asks the source's connector (:class:`ragline.ports.Source`)
for the changes since the source's cursor, page by page; each page is applied to the namespace
(fetched and ingested through the same pipeline as an upload, re-labelled when only its readers
changed, deleted when the source deleted it) and only then is the cursor moved past it, so a sync cut
off anywhere resumes from the last page it finished and applying a page twice changes nothing the
second time. A *full* listing (a crawl; an incremental source's first sync) names every item the
source holds: what the namespace got from this source and the listing did not name is deleted when
the listing ends (mark and sweep, by run number).

Standard library and pydantic only: the API's models and the sync service import this module.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, NamedTuple

SourceKind = Literal["web", "confluence", "graph"]
SOURCE_KINDS: tuple[SourceKind, ...] = ("web", "confluence", "graph")
MAX_SOURCES_PER_NAMESPACE = 20
MAX_CURSOR_BYTES = 200_000
"""A cursor is stored with its source (a DynamoDB item holds 400 KB): a connector keeps its cursor
under this, compressing what it carries (a crawl's frontier)."""
MAX_MEMO_BYTES = 32_000
"""What a connector remembers of one item between syncs (a page's validators and links)."""
MAX_ITEM_ID_BYTES = 2_000
SYNC_MARK = "ragline_sync"
"""The key of a sync step's queue message (a reindex step's is another; S3 notifications have none)."""

Phase = Literal["idle", "listing", "sweeping"]
ItemState = Literal["ok", "failed", "skipped", "unreadable"]
"""``ok``: served; ``failed``: a transient failure, tried again next sync; ``skipped``: named but not a
document (:class:`Change` ``skip``); ``unreadable``: this version cannot be parsed (tried again when
its version changes)."""


class ItemAccess(NamedTuple):
    """Who may read an item, in Ragline's terms: everyone in the namespace, or the users and groups
    named. An item the source lets no one Ragline can name read (``everyone`` False and nobody named)
    is not indexed: a document naming no reader would be everyone's."""

    everyone: bool = True
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()

    @classmethod
    def only(
        cls, users: tuple[str, ...] | list[str] = (), groups: tuple[str, ...] | list[str] = ()
    ) -> ItemAccess:
        return cls(False, tuple(sorted(set(users))), tuple(sorted(set(groups))))

    @property
    def readable(self) -> bool:
        return self.everyone or bool(self.users or self.groups)

    def key(self) -> str:
        """A short stable digest: an item whose key changed is re-labelled."""
        if self.everyone:
            return "*"
        text = json.dumps([sorted(self.users), sorted(self.groups)], separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


EVERYONE = ItemAccess()


@dataclass(frozen=True)
class SourceItem:
    """One item as a listing names it."""

    id: str
    """The source's stable id (a canonical URL, a page id, a drive item id)."""
    name: str
    """The tenant's own name for it (a URL, a page title): the document's ``source`` shown to readers."""
    filename: str
    """A file name whose extension picks the parser (``page.html``, ``report.pdf``)."""
    version: str
    """Changes whenever the content does (a content hash, a version number, an ETag)."""
    access: ItemAccess | None = None
    """``None``: ask the connector's ``permissions`` (a source that lists them apart)."""
    content: bytes | None = None
    """The bytes when the listing already read them (a crawler reads a page to find its links)."""
    memo: str = ""
    """What the connector wants back for this item on the next sync (validators, links)."""


ChangeKind = Literal["upsert", "delete", "keep", "failed", "skip"]


@dataclass(frozen=True)
class Change:
    """``upsert``: the item as it is now (the sync skips it when its version and access are what the
    namespace holds); ``delete``: gone or out of scope; ``keep``: present, not read this time (a
    source that could not be asked, a page behind a redirect loop) — whatever the namespace holds of
    it stays; ``failed``: this item alone could not be listed (``error`` says why): it stays as it was
    and is tried again next sync; ``skip``: named but not a document of its own (a page that stands
    for another: a duplicate, a canonical URL's copy, ``noindex``) — remembered with its version and
    memo so the next listing can ask only whether it changed, and whatever the namespace held of it
    is deleted."""

    kind: ChangeKind
    item_id: str
    item: SourceItem | None = None
    error: str = ""


@dataclass(frozen=True)
class ChangePage:
    changes: list[Change]
    cursor: str
    """Where the next call continues; once ``done``, where the next sync starts (``""``: afresh)."""
    done: bool
    full: bool
    """The listing names every item the source holds. The ``done`` page's value decides the sweep: a
    full listing that could not see everything ends with it False (nothing is deleted then)."""
    retry_after: float = 0.0
    """The source asked to slow down: the sync continues after this many seconds."""


class KnownItem(NamedTuple):
    """What the namespace holds of an item, as the last sync left it."""

    item_id: str
    document_id: str
    version: str
    access_key: str
    seen_run: int
    state: ItemState
    memo: str = ""
    error: str = ""


class SyncCounts(NamedTuple):
    listed: int = 0
    indexed: int = 0
    relabelled: int = 0
    unchanged: int = 0
    deleted: int = 0
    failed: int = 0

    def plus(self, **more: int) -> SyncCounts:
        return self._replace(**{k: getattr(self, k) + v for k, v in more.items()})


@dataclass(frozen=True)
class SourceRecord:
    """A data source and where its sync stands (the registry's row)."""

    tenant_id: str
    namespace_id: str
    source_id: str
    kind: SourceKind
    name: str
    settings: dict[str, Any]
    created_at: datetime
    every_minutes: int = 0
    """The schedule: a sync every this many minutes (0: only when asked)."""
    revision: int = 0
    """Bumped by every write: updates are conditional on it."""
    cursor: str = ""
    """Where the running listing stands, or (``phase`` idle) where the next sync starts."""
    run: int = 0
    """The number of the latest sync (items a full listing names carry it)."""
    phase: Phase = "idle"
    full: bool = False
    """The running listing is full (its end sweeps what it did not name)."""
    lease_token: str = ""
    lease_until: float = 0.0
    counts: SyncCounts = field(default_factory=SyncCounts)
    """The latest sync's (the running one's so far)."""
    last_error: str = ""
    started_at: datetime | None = None
    finished_at: datetime | None = None
    next_run_at: datetime | None = None
    has_credentials: bool = False
    removing: bool = False
    """The source was deleted: its documents go (in sync steps), then the source."""


@dataclass(frozen=True)
class SyncStep:
    """One bounded part of a sync, as queued (on AWS a message of the ingestion queue). ``token`` is
    the sync's lease: a step whose token no longer holds the source does nothing (a copy of a step, or
    one that outlived its lease while another sync took over). ``token`` ``""``: start a sync."""

    tenant_id: str
    namespace_id: str
    source_id: str
    token: str = ""
    full: bool = False
    """Start over with a full listing (also: the connector's cursor was refused)."""

    def body(self) -> str:
        return json.dumps({SYNC_MARK: {k: getattr(self, k) for k in self.__dataclass_fields__}})

    @classmethod
    def parse(cls, body: str) -> SyncStep | None:
        """The step in a queue message, ``None`` for any other message."""
        try:
            value: Any = json.loads(body)
        except ValueError:
            return None
        if not isinstance(value, dict) or not isinstance(value.get(SYNC_MARK), dict):
            return None
        f = value[SYNC_MARK]
        return cls(
            tenant_id=str(f["tenant_id"]),
            namespace_id=str(f["namespace_id"]),
            source_id=str(f["source_id"]),
            token=str(f.get("token", "")),
            full=bool(f.get("full", False)),
        )


def _when(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def settings_json(r: SourceRecord) -> str:
    return json.dumps(
        {
            "kind": r.kind,
            "name": r.name,
            "settings": r.settings,
            "created_at": r.created_at.isoformat(),
            "every_minutes": r.every_minutes,
            "has_credentials": r.has_credentials,
            "removing": r.removing,
        }
    )


def state_json(r: SourceRecord) -> str:
    return json.dumps(
        {
            "cursor": r.cursor,
            "run": r.run,
            "phase": r.phase,
            "full": r.full,
            "counts": list(r.counts),
            "last_error": r.last_error,
            "started_at": _when(r.started_at),
            "finished_at": _when(r.finished_at),
            "next_run_at": _when(r.next_run_at),
        }
    )


def record_from(
    tenant_id: str,
    namespace_id: str,
    source_id: str,
    settings: str,
    state: str,
    *,
    revision: int,
    lease_token: str,
    lease_until: float,
) -> SourceRecord:
    """A record from what a registry stores: its settings and its sync state as two JSON texts
    (:func:`settings_json`, :func:`state_json`) beside the revision and the lease."""
    s: dict[str, Any] = json.loads(settings)
    t: dict[str, Any] = json.loads(state)

    def when(key: str) -> datetime | None:
        return datetime.fromisoformat(t[key]) if t.get(key) else None

    return SourceRecord(
        tenant_id=tenant_id,
        namespace_id=namespace_id,
        source_id=source_id,
        kind=s["kind"],
        name=s["name"],
        settings=s["settings"],
        created_at=datetime.fromisoformat(s["created_at"]),
        every_minutes=int(s["every_minutes"]),
        has_credentials=bool(s["has_credentials"]),
        removing=bool(s.get("removing", False)),
        revision=revision,
        cursor=t["cursor"],
        run=int(t["run"]),
        phase=t["phase"],
        full=bool(t["full"]),
        counts=SyncCounts(*t["counts"]),
        last_error=t["last_error"],
        started_at=when("started_at"),
        finished_at=when("finished_at"),
        next_run_at=when("next_run_at"),
        lease_token=lease_token,
        lease_until=lease_until,
    )


def document_path(source_id: str, item_id: str) -> str:
    """The name a source item's document id is made from: unique per source and item."""
    return f"sources/{source_id}/{item_id}"
