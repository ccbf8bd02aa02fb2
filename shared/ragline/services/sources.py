"""A namespace's data sources: added, changed, listed, synced on request, removed with their documents.

Every route manages the tenant: it needs ``admin`` on the namespace (reading a source's status too:
its settings name the places a tenant's documents come from), and a request acting for an end user is
refused (403 ``user_context_forbidden``) — a source brings in documents with the readers its origin
says, which no end user may set. Credentials go to the secret store and never come
back (a view says only ``hasCredentials``). A schedule (``everyMinutes``) is the scheduler's; a new
source's first sync is queued at once. A sync asked for while one runs is that sync (its status is
returned); a removal deletes the credentials and the schedule at once, marks the source and queues
its steps, which delete its documents and then the source.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from ragline import errors
from ragline.domain.source_api import (
    CREDENTIAL_KEYS,
    NewSource,
    SourceList,
    SourcePatch,
    SourceView,
    SyncRequest,
)
from ragline.domain.sources import MAX_SOURCES_PER_NAMESPACE, SourceRecord, SyncStep
from ragline.domain.urls import check_public_url
from ragline.ports import SourceRegistry, SourceSecrets, StepQueue, SyncScheduler, TenantRegistry
from ragline.services.authentication import Principal
from ragline.services.namespaces import require_namespace

MIN_EVERY_MINUTES = 15
_SOURCE_ID = re.compile(r"src_[0-9a-f]{16}")


class SourceService:
    def __init__(
        self,
        *,
        registry: TenantRegistry,
        sources: SourceRegistry,
        queue: StepQueue,
        secrets: SourceSecrets,
        scheduler: SyncScheduler,
        loopback_http: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._registry = registry
        self._sources = sources
        self._queue = queue
        self._secrets = secrets
        self._scheduler = scheduler
        self._loopback_http = loopback_http
        """Sources may name a loopback host (tests, a site on this machine): never on AWS."""
        self._clock = clock

    def create(self, principal: Principal, namespace: str, body: NewSource) -> SourceView:
        self._scope(principal, namespace)
        _check_every(body.every_minutes)
        try:
            settings = body.settings()
        except ValueError as exc:
            raise errors.InvalidRequest(str(exc), field=body.kind) from None
        _check_credentials(body.kind, body.credentials)
        self._check_endpoints(body.kind, settings)
        record = SourceRecord(
            tenant_id=principal.tenant_id,
            namespace_id=namespace,
            source_id=f"src_{uuid.uuid4().hex[:16]}",
            kind=body.kind,
            name=body.name or _default_name(body.kind, settings),
            settings=settings,
            created_at=datetime.now(UTC),
            every_minutes=body.every_minutes,
            has_credentials=bool(body.credentials),
        )
        if body.credentials:  # first: a source is never listed without the credentials it says it has
            self._secrets.put(principal.tenant_id, namespace, record.source_id, body.credentials)
        if not self._sources.create(record, limit=MAX_SOURCES_PER_NAMESPACE):
            self._secrets.delete(principal.tenant_id, namespace, record.source_id)
            raise errors.QuotaExceeded(
                f"a namespace holds at most {MAX_SOURCES_PER_NAMESPACE} sources",
                limit=MAX_SOURCES_PER_NAMESPACE,
            )
        if record.every_minutes:
            self._scheduler.put(principal.tenant_id, namespace, record.source_id, record.every_minutes)
        self._queue.submit(SyncStep(principal.tenant_id, namespace, record.source_id))
        return self._view(self._sources.get(principal.tenant_id, namespace, record.source_id))

    def list(self, principal: Principal, namespace: str) -> SourceList:
        self._scope(principal, namespace)
        return SourceList(sources=[self._view(r) for r in self._sources.list(principal.tenant_id, namespace)])

    def get(self, principal: Principal, namespace: str, source_id: str) -> SourceView:
        return self._view(self._find(principal, namespace, source_id))

    def update(self, principal: Principal, namespace: str, source_id: str, body: SourcePatch) -> SourceView:
        record = self._find(principal, namespace, source_id)
        changes: dict[str, object] = {}
        if body.name is not None:
            changes["name"] = body.name
        if body.every_minutes is not None:
            _check_every(body.every_minutes)
            changes["every_minutes"] = body.every_minutes
        for kind in ("web", "confluence", "graph"):
            given = getattr(body, kind)
            if given is None:
                continue
            if record.kind != kind:
                raise errors.InvalidRequest(f"a {record.kind} source has no {kind!r} settings", field=kind)
            changes["settings"] = given.model_dump(mode="json", by_alias=True)
            self._check_endpoints(kind, changes["settings"])  # type: ignore[arg-type]
        if body.credentials is not None:
            _check_credentials(record.kind, body.credentials)
            self._secrets.put(principal.tenant_id, namespace, source_id, body.credentials)
            changes["has_credentials"] = True
        updated = self._sources.update_settings(replace(record, **changes), revision=record.revision)  # type: ignore[arg-type]
        if updated is None:
            raise errors.Conflict("the source changed meanwhile: read it again", source_id=source_id)
        if updated.every_minutes != record.every_minutes:
            if updated.every_minutes:
                self._scheduler.put(principal.tenant_id, namespace, source_id, updated.every_minutes)
            else:
                self._scheduler.delete(principal.tenant_id, namespace, source_id)
        return self._view(updated)

    def sync(self, principal: Principal, namespace: str, source_id: str, body: SyncRequest) -> SourceView:
        """Queue a sync (a running one goes on: this is it)."""
        record = self._find(principal, namespace, source_id)
        if record.removing:
            raise errors.Conflict("the source is being removed", source_id=source_id)
        self._queue.submit(SyncStep(principal.tenant_id, namespace, source_id, full=body.full))
        return self._view(self._sources.get(principal.tenant_id, namespace, source_id))

    def delete(self, principal: Principal, namespace: str, source_id: str) -> SourceView:
        """Mark the source removed and queue the steps that delete its documents, then it."""
        record = self._find(principal, namespace, source_id)
        self._scheduler.delete(principal.tenant_id, namespace, source_id)
        self._secrets.delete(principal.tenant_id, namespace, source_id)  # the token stops existing now
        if not record.removing:
            updated = self._sources.update_settings(replace(record, removing=True), revision=record.revision)
            if updated is None:
                raise errors.Conflict("the source changed meanwhile: try again", source_id=source_id)
            record = updated
        self._queue.submit(SyncStep(principal.tenant_id, namespace, source_id))
        try:
            return self._view(self._sources.get(principal.tenant_id, namespace, source_id))
        except errors.NotFound:  # the queue ran the removal in process already
            return self._view(record)

    def _check_endpoints(self, kind: str, settings: dict[str, Any]) -> None:
        """Every URL a source's syncs will reach: a public name or address (a private or loopback
        literal is refused now rather than failing every fetch), and ``https://`` wherever
        credentials are sent (a website without credentials may be plain http)."""
        urls: list[tuple[str, str]] = []
        if kind == "web":
            urls = [(u, "web.seeds") for u in settings.get("seeds", [])]
            urls += [(u, "web.sitemaps") for u in settings.get("sitemaps", [])]
        elif kind == "confluence":
            urls = [(settings["siteUrl"], "confluence.siteUrl")]
        elif kind == "graph":
            urls = [(settings["graphUrl"], "graph.graphUrl"), (settings["loginUrl"], "graph.loginUrl")]
        for url, where in urls:
            check_public_url(url, field=where, loopback_http=self._loopback_http, plain_http=kind == "web")

    def _scope(self, principal: Principal, namespace: str) -> None:
        principal.require("admin", namespace)
        require_namespace(self._registry, principal.tenant_id, namespace)

    def _find(self, principal: Principal, namespace: str, source_id: str) -> SourceRecord:
        self._scope(principal, namespace)
        if not _SOURCE_ID.fullmatch(source_id):
            raise errors.NotFound(f"no source {source_id[:80]!r}", source_id=source_id[:80])
        return self._sources.get(principal.tenant_id, namespace, source_id)

    def _view(self, record: SourceRecord) -> SourceView:
        return SourceView.of(record, now=self._clock())


def _check_every(minutes: int) -> None:
    if 0 < minutes < MIN_EVERY_MINUTES:
        raise errors.InvalidRequest(
            f"a schedule runs every {MIN_EVERY_MINUTES} minutes at most often (0: none)", field="everyMinutes"
        )


def _check_credentials(kind: str, given: dict[str, str] | None) -> None:
    """A kind's credentials hold exactly its keys (a website takes none)."""
    needed = CREDENTIAL_KEYS[kind]
    keys = set(given or {})
    if not needed and keys:
        raise errors.InvalidRequest(f"a {kind} source takes no credentials", field="credentials")
    if keys != needed:
        raise errors.InvalidRequest(
            f"a {kind} source's credentials are exactly {', '.join(sorted(needed))}", field="credentials"
        )


def _default_name(kind: str, settings: dict[str, object]) -> str:
    seeds = settings.get("seeds")
    if kind == "web" and isinstance(seeds, list) and seeds:
        return str(seeds[0])[:200]
    site = settings.get("siteUrl")
    if kind == "confluence" and isinstance(site, str):
        return site[:200]
    return kind


def parse_new_source(value: object) -> NewSource:
    """A creation body from the CLI's options, refused as the API would (400)."""
    try:
        return NewSource.model_validate(value)
    except ValidationError as exc:
        raise errors.InvalidRequest(f"invalid source: {exc.errors()[0]['msg']}") from None
