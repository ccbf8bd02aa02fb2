"""Data sources synced into a namespace: the connector, what the sync knows of its items, the
source's credentials, its schedule and its registry.

Part of :mod:`ragline.ports` (which re-exports every port); the docstrings are the contracts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: importing the ports must stay cheap (cold starts)
    from ragline.domain.sources import ChangePage, ItemAccess, KnownItem, SourceItem, SourceRecord


class KnownItems(Protocol):
    """What a sync's namespace holds of a source's items (read-only, for the connector)."""

    run: int
    """The running sync's number."""

    def get(self, item_id: str) -> KnownItem | None: ...

    def seen(self, item_id: str) -> bool:
        """Whether the running sync's listing already named ``item_id`` (a crawler's visited set)."""
        ...


class Source(Protocol):
    """A place documents live, read as items that change (see :mod:`ragline.domain.sources`).

    Contract (``tests/contract/source_contract.py``):

    - ``changes(None, …)`` starts a full listing; every later call passes the previous page's
      ``cursor``. Calls return pages until one is ``done``; across them every readable item the
      source holds is named by an ``upsert`` (or a ``keep`` when it could not be read this time),
      each item once, and nothing else is named but ``delete``s, ``skip``s and ``failed`` items.
      The ``done`` page's ``full`` decides whether the sync deletes what the listing did not name: a
      full listing that could not see everything (a page, a sitemap or a ``robots.txt`` it could not
      read) ends with ``full`` False, and nothing is deleted for it.
    - A listing resumed from any page's cursor names what the rest of the listing would have named
      (a cursor is the whole state: a sync cut off after a page continues from it). Calling with the
      same cursor twice is allowed (a page applied twice changes nothing).
    - The ``done`` page's cursor starts the next sync: it names what changed since (``upsert`` for
      new, changed or re-permissioned items, ``delete`` for deleted or out-of-scope ones), or a full
      listing again (``""``). A cursor the source no longer honours raises
      :class:`~ragline.errors.CursorExpired`: the sync starts over with a full listing.
    - A call returns by ``until`` (``time.monotonic()``) plus one request's timeout; the source's
      ``429``/``Retry-After`` and ``5xx`` are retried within that, and past it the page says
      ``retry_after`` and ends early (its cursor resumes where it stopped).
    - ``fetch`` returns an item's bytes at (at least) the listed version; an item gone since raises
      :class:`~ragline.errors.NotFound`, one unreadable item :class:`~ragline.errors.DependencyFailed`
      (it fails alone).
    - ``permissions`` returns who may read the item now (only called for items listed with
      ``access`` ``None``).
    """

    def changes(self, cursor: str | None, known: KnownItems, *, until: float) -> ChangePage: ...

    def fetch(self, item: SourceItem) -> bytes: ...

    def permissions(self, item: SourceItem) -> ItemAccess: ...


class SourceSecrets(Protocol):
    """A data source's credentials (an API token, an app's client secret): written by the API, read
    by the sync only, never returned by any route nor logged.

    Contract (``tests/contract/test_source_secrets.py``): ``put`` stores ``values`` whole for the
    source (replacing what was there); ``get`` returns them, or raises
    :class:`~ragline.errors.NotFound` when none are stored; ``delete`` removes them (a no-op when
    none are), and ``purge_tenant`` every source's of the tenant.
    """

    def put(self, tenant_id: str, namespace_id: str, source_id: str, values: Mapping[str, str]) -> None: ...

    def get(self, tenant_id: str, namespace_id: str, source_id: str) -> dict[str, str]: ...

    def delete(self, tenant_id: str, namespace_id: str, source_id: str) -> None: ...

    def purge_tenant(self, tenant_id: str) -> int: ...


class SyncScheduler(Protocol):
    """When each data source syncs by itself: EventBridge Scheduler on AWS (a schedule per source
    whose target puts a sync's first step on the ingestion queue), a table the local server's loop
    reads in process.

    Contract (``tests/contract/test_sync_scheduler.py``): ``put`` makes the source sync every
    ``every_minutes`` (creating or replacing its schedule); ``delete`` removes it (a no-op when there
    is none); ``purge_tenant`` removes every schedule of the tenant.
    """

    def put(self, tenant_id: str, namespace_id: str, source_id: str, every_minutes: int) -> None: ...

    def delete(self, tenant_id: str, namespace_id: str, source_id: str) -> None: ...

    def purge_tenant(self, tenant_id: str) -> int: ...


class SourceRegistry(Protocol):
    """Data sources, their sync state and their items' inventory; every sync write is conditional.

    Contract (``tests/contract/source_registry_contract.py``):

    - ``create`` adds a source unless the namespace already has ``limit`` (False) or the id exists
      (:class:`~ragline.errors.Conflict`). ``get`` raises :class:`~ragline.errors.NotFound`; ``list``
      orders by id.
    - ``update_settings`` writes the source's name, settings, schedule and ``has_credentials`` when the
      stored ``revision`` is ``revision`` (then +1), else returns None; the sync state is untouched.
    - ``claim`` takes the source's lease for ``token`` when it is free (``lease_token`` ``""``), held
      by ``expect`` (a step handing over to its successor) or expired (``lease_until`` before
      ``now``): the record with ``lease_token``/``lease_until`` set, else None.
    - ``advance`` writes the record's sync state (cursor, run, phase, full, counts, error, times,
      lease) only while ``token`` still holds the lease; False otherwise (then nothing changed).
    - Items: ``known`` returns the stored items among ``item_ids``; ``put_items`` writes items
      whole; ``drop_items`` removes them; ``unseen`` returns up to ``limit`` items whose ``seen_run``
      is below ``run``, ordered by id; ``items`` all of a source's, ordered by id.
    - ``delete`` removes the source and its items; ``purge_tenant`` every source of the tenant.
    """

    def create(self, record: SourceRecord, *, limit: int) -> bool: ...

    def get(self, tenant_id: str, namespace_id: str, source_id: str) -> SourceRecord: ...

    def update_settings(self, record: SourceRecord, *, revision: int) -> SourceRecord | None: ...

    def claim(
        self,
        tenant_id: str,
        namespace_id: str,
        source_id: str,
        *,
        token: str,
        expect: str,
        lease_seconds: float,
        now: float,
    ) -> SourceRecord | None: ...

    def advance(self, record: SourceRecord, *, token: str) -> bool: ...

    def known(
        self, tenant_id: str, namespace_id: str, source_id: str, item_ids: Sequence[str]
    ) -> dict[str, KnownItem]: ...

    def put_items(
        self, tenant_id: str, namespace_id: str, source_id: str, items: Sequence[KnownItem]
    ) -> None: ...

    def drop_items(
        self, tenant_id: str, namespace_id: str, source_id: str, item_ids: Sequence[str]
    ) -> None: ...

    def unseen(
        self, tenant_id: str, namespace_id: str, source_id: str, *, run: int, limit: int
    ) -> list[KnownItem]: ...

    def items(self, tenant_id: str, namespace_id: str, source_id: str) -> list[KnownItem]: ...

    def delete(self, tenant_id: str, namespace_id: str, source_id: str) -> None: ...

    def purge_tenant(self, tenant_id: str) -> int: ...

    def list(self, tenant_id: str, namespace_id: str) -> list[SourceRecord]: ...
