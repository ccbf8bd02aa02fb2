"""The data source routes' bodies (``/v1/namespaces/{ns}/sources``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from ragline.domain.api import ApiModel, ApiRequest
from ragline.domain.source_settings import ConfluenceSettings, GraphSettings, WebSettings
from ragline.domain.sources import SourceKind, SourceRecord

MAX_EVERY_MINUTES = 7 * 24 * 60
CREDENTIAL_KEYS: dict[str, frozenset[str]] = {
    "web": frozenset(),
    "confluence": frozenset({"email", "apiToken"}),
    "graph": frozenset({"clientId", "clientSecret"}),
}
"""What each kind's ``credentials`` must hold (a website is crawled without any)."""
CredentialValue = Annotated[str, StringConstraints(min_length=1, max_length=4096)]
Credentials = Annotated[
    dict[Annotated[str, StringConstraints(max_length=64)], CredentialValue], Field(max_length=8)
]


class NewSource(ApiRequest):
    kind: SourceKind
    name: str = Field(default="", max_length=200)
    web: WebSettings | None = None
    """``kind`` ``web``: what to crawl."""
    confluence: ConfluenceSettings | None = None
    graph: GraphSettings | None = None
    credentials: Credentials | None = None
    """Write-only: kept in the deployment's secret store, never returned nor logged."""
    every_minutes: int = Field(default=0, ge=0, le=MAX_EVERY_MINUTES)
    """A sync every this many minutes (at least 15; 0: only when asked)."""

    def settings(self) -> dict[str, Any]:
        chosen = {"web": self.web, "confluence": self.confluence, "graph": self.graph}[self.kind]
        if chosen is None:
            raise ValueError(f"a {self.kind} source needs its {self.kind!r} settings")
        others = [
            k for k in ("web", "confluence", "graph") if k != self.kind and getattr(self, k) is not None
        ]
        if others:
            raise ValueError(f"a {self.kind} source takes no {others[0]!r} settings")
        return chosen.model_dump(mode="json", by_alias=True)


class SourcePatch(ApiRequest):
    name: str | None = Field(default=None, max_length=200)
    web: WebSettings | None = None
    confluence: ConfluenceSettings | None = None
    graph: GraphSettings | None = None
    credentials: Credentials | None = None
    """Replaces the stored credentials whole (write-only)."""
    every_minutes: int | None = Field(default=None, ge=0, le=MAX_EVERY_MINUTES)


class SyncRequest(ApiRequest):
    full: bool = False
    """Start over with a full listing (a crawl always is one)."""


class SyncCountsView(ApiModel):
    listed: int
    indexed: int
    relabelled: int
    unchanged: int
    deleted: int
    failed: int


class SourceView(ApiModel):
    source_id: str
    kind: str
    name: str
    settings: dict[str, Any]
    every_minutes: int
    status: str
    """``idle``, ``syncing`` (a step holds it), ``waiting`` (a sync stopped midway, resumed by the next
    step or attempt), ``removing``."""
    run: int
    counts: SyncCountsView
    last_error: str
    started_at: str | None
    finished_at: str | None
    next_run_at: str | None
    created_at: str
    has_credentials: bool

    @classmethod
    def of(cls, r: SourceRecord, *, now: float) -> SourceView:
        if r.removing:
            status = "removing"
        elif r.phase == "idle":
            status = "idle"
        else:
            status = "syncing" if r.lease_token and r.lease_until > now else "waiting"
        return cls(
            source_id=r.source_id,
            kind=r.kind,
            name=r.name,
            settings=r.settings,
            every_minutes=r.every_minutes,
            status=status,
            run=r.run,
            counts=SyncCountsView(**r.counts._asdict()),
            last_error=r.last_error,
            started_at=_iso(r.started_at),
            finished_at=_iso(r.finished_at),
            next_run_at=_iso(r.next_run_at),
            created_at=r.created_at.isoformat(),
            has_credentials=r.has_credentials,
        )


class SourceList(ApiModel):
    sources: list[SourceView]


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None
