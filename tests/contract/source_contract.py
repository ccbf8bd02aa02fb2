"""The Source contract (``ragline.ports.Source``), shared by every connector, each against a local
server speaking its vendor's API (a :class:`~tests.support.source_world.SourceWorld`).

The listing's own promises are checked on the connector alone (every item once, resumable from any
cursor, fetch, expired cursors); what a sync makes of it — changes, deletions, throttling, a sync cut
off after any page — through the real sync service into an embedded namespace, compared item for
item with what the source serves.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.domain.sources import ChangePage, ItemAccess, SyncStep
from ragline.ports import Source
from tests.support.source_world import MemoryKnown, SourceWorld, SyncHarness, mismatches, pages_of

ITEMS = 14
"""Items a world starts with: its server pages so that a listing takes at least three pages."""


def seed(world: SourceWorld, n: int = ITEMS) -> None:
    for i in range(n):
        world.put(f"k{i}", f"item{i} alpha{i} bravo{i}")


def named(pages: list[ChangePage]) -> list[str]:
    return [c.item_id for p in pages for c in p.changes if c.kind in ("upsert", "keep")]


class CutAfter:
    """A connector that dies (as a killed worker) once it has returned ``pages`` pages."""

    def __init__(self, inner: Source, budget: list[int]) -> None:
        self._inner = inner
        self._budget = budget

    def changes(self, cursor: str | None, known: Any, *, until: float) -> ChangePage:
        if self._budget[0] <= 0:
            raise errors.DependencyUnavailable("the worker was killed")
        self._budget[0] -= 1
        return self._inner.changes(cursor, known, until=until)

    def fetch(self, item: Any) -> bytes:
        return self._inner.fetch(item)

    def permissions(self, item: Any) -> ItemAccess:
        return self._inner.permissions(item)


class SourceContract:
    @pytest.fixture
    def world(self) -> Iterator[SourceWorld]:
        raise NotImplementedError

    @pytest.fixture
    def settings(self, world: SourceWorld) -> dict[str, Any]:
        """The source's settings pointing at the world."""
        raise NotImplementedError

    @pytest.fixture
    def harness(self, tmp_path: Path, world: SourceWorld, settings: dict[str, Any]) -> Iterator[SyncHarness]:
        h = SyncHarness(tmp_path, world, settings)
        yield h
        h.close()

    # -- the listing --------------------------------------------------------------------------
    def test_a_full_listing_names_every_readable_item_once_over_several_pages(
        self, world: SourceWorld
    ) -> None:
        seed(world)
        pages = list(pages_of(world.source(), MemoryKnown()))
        assert len(pages) >= 3
        ids = named(pages)
        assert sorted(ids) == sorted(world.expected())
        assert len(ids) == len(set(ids))
        assert pages[0].full and pages[-1].done

    def test_a_listing_resumed_from_any_pages_cursor_names_the_rest(self, world: SourceWorld) -> None:
        seed(world)
        known = MemoryKnown()
        pages = []
        for page in pages_of(world.source(), known):
            known.remember_page(page)
            pages.append(page)
        for cut in range(1, len(pages)):
            resumed_known = MemoryKnown()
            for earlier in pages[:cut]:
                resumed_known.remember_page(earlier)
            rest = list(pages_of(world.source(), resumed_known, pages[cut - 1].cursor))
            assert sorted(named(pages[:cut]) + named(rest)) == sorted(world.expected()), cut

    def test_fetch_returns_each_items_content(self, world: SourceWorld) -> None:
        seed(world, 4)
        source = world.source()
        texts = {i: t for i, (t, _a) in world.expected().items()}
        for page in pages_of(source, MemoryKnown()):
            for change in page.changes:
                if change.kind != "upsert" or change.item is None:
                    continue
                data = source.fetch(change.item)
                assert texts[change.item_id].split()[0].encode() in data
                if change.item.content is not None:
                    assert data == change.item.content

    def test_a_cursor_the_source_cannot_read_is_expired(self, world: SourceWorld) -> None:
        seed(world, 2)
        with pytest.raises(errors.CursorExpired):
            world.source().changes("not-a-cursor-of-this-source", MemoryKnown(), until=time.monotonic() + 30)

    # -- what a sync makes of it --------------------------------------------------------------
    def test_a_sync_holds_what_the_source_serves(self, harness: SyncHarness) -> None:
        seed(harness.world)
        assert harness.run()[-1] == "done"
        assert mismatches(harness) == []
        assert harness.state().counts.indexed == len(harness.world.expected())

    def test_the_next_sync_applies_additions_changes_and_deletions(self, harness: SyncHarness) -> None:
        w = harness.world
        seed(w)
        harness.run()
        w.put("new", "newcomer zulu")
        w.put("k1", "item1 changed yankee")
        w.remove("k2")
        harness.run()
        assert mismatches(harness) == []
        held = harness.held()
        assert w.item_id("k2") not in held
        assert "yankee" in held[w.item_id("k1")].text

    def test_a_sync_with_nothing_changed_indexes_nothing(self, harness: SyncHarness) -> None:
        seed(harness.world)
        harness.run()
        harness.run()
        counts = harness.state().counts
        assert (counts.indexed, counts.deleted, counts.relabelled) == (0, 0, 0)
        assert mismatches(harness) == []

    def test_throttling_is_waited_out(self, harness: SyncHarness) -> None:
        seed(harness.world, 6)
        harness.world.throttle(2, 0.05)
        harness.run()
        assert mismatches(harness) == []

    def test_a_server_error_is_retried(self, harness: SyncHarness) -> None:
        seed(harness.world, 6)
        harness.world.fail(1, 503)
        harness.run()
        assert mismatches(harness) == []

    def test_a_sync_cut_off_after_any_page_resumes_to_the_same_namespace(self, harness: SyncHarness) -> None:
        seed(harness.world)
        harness.run()
        harness.world.put("new", "newcomer zulu")
        harness.world.remove("k3")
        harness.world.put("k4", "item4 changed xray")
        for cut in range(3):  # a listing takes at least three pages: each cut is before its last
            budget = [cut]
            harness.wrap = lambda s, b=budget: CutAfter(s, b)  # type: ignore[misc]
            with pytest.raises(errors.DependencyUnavailable):
                harness.run()
            harness.wrap = lambda s: s
            harness.run()
            assert mismatches(harness) == [], cut
            harness.world.put(f"k{5 + cut}", f"item{5 + cut} round{cut}")


class SkipPage:
    """A deliberately broken connector: every cursor it hands out skips the page after it (the bug a
    history test must catch: changes lost between two pages)."""

    def __init__(self, inner: Source) -> None:
        self._inner = inner

    def changes(self, cursor: str | None, known: Any, *, until: float) -> ChangePage:
        page = self._inner.changes(cursor, known, until=until)
        if page.done:
            return page
        skipped = self._inner.changes(page.cursor, known, until=until)
        return ChangePage(page.changes, skipped.cursor, done=skipped.done, full=page.full)

    def fetch(self, item: Any) -> bytes:
        return self._inner.fetch(item)

    def permissions(self, item: Any) -> ItemAccess:
        return self._inner.permissions(item)


OPS = ("put", "change", "remove", "sync", "cut", "copy")


def play(harness: SyncHarness, ops: list[tuple[str, int]], permit: bool) -> None:
    """Apply a generated history: changes at the source interleaved with syncs, syncs cut off after
    ``n`` pages (a killed worker), and a copy of a step delivered again after its sync went on."""
    w = harness.world
    present: set[str] = set()
    for op, n in ops:
        key = f"h{n % 7}"
        if op == "put":
            w.put(key, f"hist{n} alpha{n % 3}")
            present.add(key)
        elif op == "change" and permit and key in present:
            w.permit(key, ItemAccess.only(users=[f"u{n % 3}@example.com"]) if n % 2 else ItemAccess())
        elif op == "change" and key in present:
            w.put(key, f"hist{n} changed")
        elif op == "remove" and key in present:
            w.remove(key)
            present.discard(key)
        elif op == "sync":
            harness.run()
        elif op == "cut":
            harness.wrap = lambda s, b=[n % 3]: CutAfter(s, b)  # type: ignore[misc]
            with contextlib.suppress(errors.DependencyUnavailable):
                harness.run()
            harness.wrap = lambda s: s
        elif op == "copy":
            first = harness.step()
            if first == "continued":
                queued = harness.queue.take()
                assert queued is not None
                step, _ = queued
                assert isinstance(step, SyncStep)
                harness.sync.run(step)
                assert harness.sync.run(step) == "superseded"  # the copy does nothing
    harness.drain()  # a sync still going on ends first: it began before the last changes
    if harness.state().phase != "idle":
        harness.run()  # a sync cut off resumes where it stood, and ends
    assert harness.run()[0] != "busy"  # then one that begins after every change


class HistoryContract:
    """Generated histories: after the last sync the namespace equals what the source serves."""

    HISTORIES = 8

    def _harness(
        self, tmp_path: Path, world: SourceWorld, settings: dict[str, Any], name: str
    ) -> SyncHarness:
        from ragline.services.source_sync import SyncSettings

        # steps of one page each: every step boundary is a place a worker can die or a copy arrive
        return SyncHarness(tmp_path / name, world, settings, sync_settings=SyncSettings(step_seconds=0.0))

    @pytest.mark.parametrize("history", range(HISTORIES))
    def test_a_generated_history_of_changes_syncs_and_crashes_ends_equal(
        self, tmp_path: Path, world: SourceWorld, settings: dict[str, Any], history: int
    ) -> None:
        import random

        rng = random.Random(history)
        ops = [(rng.choice(OPS), rng.randrange(100)) for _ in range(14)]
        seed(world, 4)
        harness = self._harness(tmp_path, world, settings, f"h{history}")
        try:
            play(harness, ops, permit=isinstance(self, PermissionsContract))
            assert mismatches(harness) == [], ops
        finally:
            harness.close()

    def test_a_broken_cursor_is_caught(
        self, tmp_path: Path, world: SourceWorld, settings: dict[str, Any]
    ) -> None:
        seed(world)
        harness = self._harness(tmp_path, world, settings, "broken")
        try:
            harness.wrap = SkipPage
            harness.run()
            world.put("k20", "late arrival")
            world.remove("k1")
            harness.run()
            assert mismatches(harness) != []
        finally:
            harness.close()


class PermissionsContract:
    """For sources that carry permissions: they reach each document's readers, and follow changes."""

    def test_an_items_readers_are_the_sources(self, harness: SyncHarness) -> None:
        w = harness.world
        seed(w, 5)
        w.permit("k1", ItemAccess.only(users=["ana@example.com"]))
        w.permit("k2", ItemAccess.only(groups=["finance"]))
        harness.run()
        assert mismatches(harness) == []
        assert harness.held()[w.item_id("k2")].access == ItemAccess.only(groups=["finance"])

    def test_a_permission_change_reaches_the_namespace_on_the_next_sync(self, harness: SyncHarness) -> None:
        w = harness.world
        seed(w, 5)
        w.permit("k1", ItemAccess.only(users=["ana@example.com"]))
        harness.run()
        w.permit("k1", ItemAccess.only(groups=["engineering"]))
        w.permit("k3", ItemAccess.only(users=["bo@example.com"]))
        harness.run()
        assert mismatches(harness) == []
        assert harness.held()[w.item_id("k3")].access == ItemAccess.only(users=["bo@example.com"])
        assert harness.state().counts.indexed == 0  # re-labelled, nothing fetched again

    def test_an_item_no_one_may_read_is_not_held(self, harness: SyncHarness) -> None:
        w = harness.world
        seed(w, 4)
        harness.run()
        w.permit("k1", ItemAccess.only())
        harness.run()
        assert w.item_id("k1") not in harness.held()
        assert mismatches(harness) == []
