"""The far side of a data source, driven by a test, and a namespace synced from it.

A :class:`SourceWorld` is a local server speaking one vendor's API (a website, Confluence, Microsoft
Graph) whose content the test changes: items added, changed, deleted, re-permissioned; requests
throttled or failed. :class:`SyncHarness` runs the real sync (``SourceSync`` over an embedded
container: SQLite registry, store and ledger, a bag-of-words embedder) against a world and reads back
what the namespace holds, so a test can compare it with what the source lets each reader read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from ragline.adapters.embedded.step_queue import InlineStepQueue
from ragline.config import Settings
from ragline.domain.document_metadata import access_of
from ragline.domain.models import TenantScope
from ragline.domain.sources import ItemAccess, SourceRecord, SyncStep
from ragline.ports import Source
from ragline.services.namespaces import new_namespace
from ragline.services.source_sync import SourceSync, StepOutcome, SyncSettings
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder

SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")


class SourceWorld(Protocol):
    """A source's far side. Keys are the test's names for items; ``item_id`` is the connector's."""

    kind: str

    def source(self) -> Source:
        """A fresh connector pointed at this world (as the sync builds one per step)."""
        ...

    def put(self, key: str, text: str, access: ItemAccess | None = None) -> None:
        """Add ``key`` or change its content (``access`` None: keep it, or everyone's when new)."""
        ...

    def remove(self, key: str) -> None: ...

    def permit(self, key: str, access: ItemAccess) -> None:
        """Change only who may read ``key``."""
        ...

    def item_id(self, key: str) -> str: ...

    def expected(self) -> dict[str, tuple[str, ItemAccess]]:
        """Item id → (text, access) of every item Ragline should hold (readable by someone)."""
        ...

    def requests(self) -> int:
        """Requests the server has answered so far."""
        ...

    def throttle(self, times: int, retry_after: float) -> None:
        """Answer the next ``times`` requests 429 with ``Retry-After``."""
        ...

    def fail(self, times: int, status: int = 500) -> None:
        """Answer the next ``times`` requests with ``status``."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Held:
    """What the namespace holds of one item."""

    text: str
    access: ItemAccess


class SyncHarness:
    """A namespace synced from one world through the real sync service."""

    def __init__(
        self,
        home: Path,
        world: SourceWorld,
        settings: dict[str, Any],
        *,
        sync_settings: SyncSettings | None = None,
        wrap: Callable[[Source], Source] = lambda s: s,
    ) -> None:
        self.world = world
        self.queue = InlineStepQueue()
        embedder = BowEmbedder()
        self.c = Container(
            Settings(home=home, source_loopback_http=True),
            embedder=embedder, tokenizer=embedder, step_queue=self.queue,
        )  # fmt: skip
        self.c.tenancy.create_tenant("acme")
        self.c.registry.create_namespace(new_namespace("acme", "docs", default=True))
        self.record = SourceRecord(
            tenant_id="acme", namespace_id="docs", source_id="src_0123456789abcdef", kind=world.kind,  # type: ignore[arg-type]
            name="world", settings=settings, created_at=datetime.now(UTC),
        )  # fmt: skip
        assert self.c.sources.create(self.record, limit=20)
        self.wrap = wrap
        self.sync = SourceSync(
            sources=self.c.sources,
            connector=lambda _record: self.wrap(world.source()),
            ingest=self.c.ingest,
            documents=self.c.documents,
            queue=self.queue,
            settings=sync_settings,
        )

    def step(self, token: str = "", *, full: bool = False) -> StepOutcome:
        return self.sync.run(SyncStep("acme", "docs", self.record.source_id, token=token, full=full))

    def run(self, *, full: bool = False, max_steps: int = 500) -> list[StepOutcome]:
        """A whole sync: the first step, then every step it queues (delays are not waited)."""
        outcomes = [self.step(full=full)]
        for _ in range(max_steps):
            queued = self.queue.take()
            if queued is None:
                return outcomes
            step, _delay = queued
            assert isinstance(step, SyncStep)
            outcomes.append(self.sync.run(step))
        raise AssertionError(f"the sync did not end in {max_steps} steps")

    def drain(self, max_steps: int = 500) -> None:
        """Run the steps still queued (a sync that was going on) until none is."""
        for _ in range(max_steps):
            queued = self.queue.take()
            if queued is None:
                return
            step, _delay = queued
            assert isinstance(step, SyncStep)
            self.sync.run(step)
        raise AssertionError(f"the queue did not empty in {max_steps} steps")

    def state(self) -> SourceRecord:
        return self.c.sources.get("acme", "docs", self.record.source_id)

    def held(self) -> dict[str, Held]:
        """Item id → what the namespace serves of it (from the inventory and the documents)."""
        out: dict[str, Held] = {}
        for item in self.c.sources.items("acme", "docs", self.record.source_id):
            record = self.c.documents.get("acme", "docs", item.document_id)
            if record is None or record.status != "ready":
                continue
            users, groups = access_of(record.readers)
            access = ItemAccess.only(users, groups) if record.readers else ItemAccess()
            out[item.item_id] = Held(self.text_of(item.document_id), access)
        return out

    def text_of(self, document_id: str) -> str:
        store = self.c.stores.scoped(SCOPE)
        chunks = store.neighbors(document_id, 0, before=0, after=1 << 30)
        return " ".join(c.text for c in chunks)

    def documents(self) -> list[str]:
        """Document ids the namespace serves (any origin)."""
        return [r.document_id for r in self.c.documents.list("acme", "docs") if r.status == "ready"]

    def close(self) -> None:
        self.c.close()


def mismatches(harness: SyncHarness) -> list[str]:
    """How the namespace differs from what the source lets its readers read (empty: equal)."""
    expected = harness.world.expected()
    held = harness.held()
    problems = [f"missing {i}" for i in sorted(set(expected) - set(held))]
    problems += [f"resurrected or stale {i}" for i in sorted(set(held) - set(expected))]
    for item_id in sorted(set(expected) & set(held)):
        text, access = expected[item_id]
        if not all(word in held[item_id].text for word in text.split()):
            problems.append(f"stale content {item_id}")
        want = ItemAccess() if access.everyone else access
        if held[item_id].access != want:
            problems.append(f"stale access {item_id}: {held[item_id].access} != {want}")
    served = set(harness.documents())
    owned = {i.document_id for i in harness.c.sources.items("acme", "docs", harness.record.source_id)}
    problems += [f"orphan document {d}" for d in sorted(served - owned)]
    return problems


def pages_of(source: Source, known: Any, cursor: str | None = None, *, until: float = 1e18) -> Iterator[Any]:
    """Every page of one listing (``known`` as the connector sees the inventory)."""
    while True:
        page = source.changes(cursor, known, until=until)
        yield page
        if page.done:
            return
        cursor = page.cursor


class MemoryKnown:
    """:class:`ragline.ports.KnownItems` for a listing outside a sync: what the test remembers."""

    def __init__(self, run: int = 1) -> None:
        self.run = run
        self.items: dict[str, Any] = {}

    def get(self, item_id: str) -> Any:
        return self.items.get(item_id)

    def seen(self, item_id: str) -> bool:
        item = self.items.get(item_id)
        return item is not None and item.seen_run >= self.run

    def remember_page(self, page: Any) -> None:
        from ragline.domain.sources import KnownItem

        for change in page.changes:
            if change.kind == "upsert" and change.item is not None:
                it = change.item
                self.items[change.item_id] = KnownItem(
                    change.item_id, change.item_id, it.version, "", self.run, "ok", it.memo
                )
            elif change.kind == "delete":
                self.items.pop(change.item_id, None)
            elif change.item_id in self.items:
                self.items[change.item_id] = self.items[change.item_id]._replace(seen_run=self.run)

    def next_run(self) -> MemoryKnown:
        nxt = MemoryKnown(self.run + 1)
        nxt.items = dict(self.items)
        return nxt


def with_run(record: SourceRecord, **changes: Any) -> SourceRecord:
    return replace(record, **changes)
