"""The sync service's own rules, on a scripted source: the lease (two syncs never at once, copies of a
step do nothing), one bad item failing alone, unparseable versions, slowing down, an expired cursor,
deadlines, and removing a source with its documents."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.domain.sources import EVERYONE, Change, ChangePage, ItemAccess, SourceItem, SyncStep
from ragline.services.source_sync import SyncSettings
from tests.support.source_world import SCOPE, SyncHarness


class ScriptedSource:
    """Items in a dict; a full listing in pages of ``size``; ``fetch`` fails for ``broken`` ids."""

    def __init__(self, world: ScriptedWorld) -> None:
        self.w = world

    def changes(self, cursor: str | None, known: Any, *, until: float) -> ChangePage:
        self.w.calls += 1
        if self.w.on_call is not None:
            self.w.on_call(self.w.calls)
        if cursor is not None and not cursor.startswith("at:"):
            raise errors.CursorExpired("unknown cursor")
        start = int(cursor[3:]) if cursor else 0
        ids = sorted(self.w.items)
        part = ids[start : start + self.w.size]
        changes = [
            Change(
                "upsert",
                i,
                SourceItem(i, f"doc {i}", f"{i}.txt", str(hash(self.w.items[i])), self.w.access.get(i)),
            )
            for i in part
        ]
        done = start + self.w.size >= len(ids)
        retry = self.w.slow_down.pop(0) if self.w.slow_down else 0.0
        return ChangePage(
            changes, "" if done else f"at:{start + self.w.size}", done=done, full=True, retry_after=retry
        )

    def fetch(self, item: SourceItem) -> bytes:
        if item.id in self.w.broken:
            raise errors.DependencyFailed("the server refused this one")
        self.w.fetched.append(item.id)
        return self.w.items[item.id].encode()

    def permissions(self, item: SourceItem) -> ItemAccess:
        return EVERYONE


class ScriptedWorld:
    kind = "web"

    def __init__(self) -> None:
        self.items: dict[str, str] = {}
        self.access: dict[str, ItemAccess] = {}
        self.broken: set[str] = set()
        self.fetched: list[str] = []
        self.slow_down: list[float] = []
        self.size = 3
        self.calls = 0
        self.full = True
        """False: the listing is an incremental one (its end sweeps nothing)."""
        self.on_call: Any = None
        """Called with the call's number at each listing call (something happening meanwhile)."""

    def source(self) -> ScriptedSource:
        return ScriptedSource(self)


@pytest.fixture
def world() -> ScriptedWorld:
    w = ScriptedWorld()
    for i in range(8):
        w.items[f"i{i}"] = f"item number{i} text"
    return w


@pytest.fixture
def h(tmp_path: Path, world: ScriptedWorld) -> Iterator[SyncHarness]:
    harness = SyncHarness(tmp_path, world, {"seeds": ["https://example.com/"]})  # type: ignore[arg-type]
    yield harness
    harness.close()


def one_page_steps(h: SyncHarness) -> None:
    h.sync._settings = SyncSettings(step_seconds=0.0)


def test_a_sync_asked_for_while_one_holds_the_source_is_that_sync(h: SyncHarness) -> None:
    one_page_steps(h)
    assert h.step() == "continued"
    assert h.step() == "busy"  # a second start finds the lease held
    h.drain()
    assert h.state().phase == "idle"
    assert len(h.held()) == 8


def test_a_copy_of_a_step_does_nothing(h: SyncHarness, world: ScriptedWorld) -> None:
    one_page_steps(h)
    h.step()
    queued = h.queue.take()
    assert queued is not None
    step, _ = queued
    assert isinstance(step, SyncStep)
    assert h.sync.run(step) == "continued"
    calls = world.calls
    assert h.sync.run(step) == "superseded"  # delivered again: its successor holds the lease
    assert world.calls == calls
    h.drain()
    assert h.sync.run(step) == "superseded"  # and after the sync ended
    assert h.state().lease_token == ""


def test_a_crashed_sync_is_taken_over_after_its_lease(h: SyncHarness, world: ScriptedWorld) -> None:
    clock = [1_000_000.0]
    h.sync._clock = lambda: clock[0]
    one_page_steps(h)
    h.step()
    h.queue.take()  # the worker died: its successor was never queued
    assert h.step() == "busy"
    clock[0] += SyncSettings().lease_seconds + 1
    assert h.run()[-1] == "done"  # resumed where it stood
    assert len(h.held()) == 8
    assert sorted(world.fetched) == sorted(world.items)  # nothing fetched twice


def test_one_bad_item_fails_alone_and_is_tried_again(h: SyncHarness, world: ScriptedWorld) -> None:
    world.broken = {"i3"}
    h.run()
    assert set(h.held()) == set(world.items) - {"i3"}
    state = h.state()
    assert (state.counts.failed, state.counts.indexed) == (1, 7)
    row = h.c.sources.known("acme", "docs", h.record.source_id, ["i3"])["i3"]
    assert row.state == "failed" and "refused" in row.error
    world.broken = set()
    h.run()
    assert set(h.held()) == set(world.items)
    assert h.state().counts.indexed == 1


def test_an_unparseable_version_waits_for_the_next(h: SyncHarness, world: ScriptedWorld) -> None:
    world.items["i2"] = ""  # an empty document
    h.run()
    assert "i2" not in h.held()
    fetched = len(world.fetched)
    h.run()
    assert len(world.fetched) == fetched  # the same version is not fetched again
    world.items["i2"] = "now it has words"
    h.run()
    assert "words" in h.held()["i2"].text


def test_a_source_asking_to_slow_down_continues_later(h: SyncHarness, world: ScriptedWorld) -> None:
    world.slow_down = [30.0]
    assert h.step() == "continued"
    queued = h.queue.take()
    assert queued is not None and queued[1] == 30.0
    h.queue.steps.insert(0, queued)
    h.drain()
    assert len(h.held()) == 8


def test_an_expired_cursor_starts_a_full_listing(h: SyncHarness, world: ScriptedWorld) -> None:
    h.run()
    record = h.state()
    h.c.sources.claim("acme", "docs", h.record.source_id, token="t:0", expect="", lease_seconds=60, now=0)
    assert h.c.sources.advance(
        replace(record, cursor="stale-token", lease_token="", lease_until=0.0), token="t:0"
    )
    del world.items["i5"]
    h.run()
    assert set(h.held()) == set(world.items)  # the full listing's sweep removed i5


def test_without_a_queue_a_step_past_its_time_is_left_for_redelivery(h: SyncHarness) -> None:
    one_page_steps(h)
    h.sync._queue = None
    with pytest.raises(errors.WorkerOutOfTime):
        h.step()


def test_removing_a_source_deletes_its_documents_then_it(h: SyncHarness, world: ScriptedWorld) -> None:
    h.run()
    h.c.ingest.ingest(SCOPE, filename="mine.txt", data=b"uploaded by hand")

    record = h.state()
    assert h.c.sources.update_settings(replace(record, removing=True), revision=record.revision) is not None
    h.run()
    assert h.documents() == ["mine.txt"]  # the upload stays; the source's documents went
    with pytest.raises(errors.NotFound):
        h.state()


def test_a_step_message_round_trips() -> None:
    step = SyncStep("acme", "docs", "src_0123456789abcdef", token="abc:3", full=True)
    assert SyncStep.parse(step.body()) == step
    assert SyncStep.parse(json.dumps({"Records": []})) is None
    assert SyncStep.parse("not json") is None


@pytest.mark.parametrize("full", [True, False])
def test_a_source_removed_while_it_syncs_is_removed_when_that_sync_ends(
    h: SyncHarness, world: ScriptedWorld, full: bool
) -> None:
    world.full = full
    one_page_steps(h)
    assert h.step() == "continued"  # a sync holds the source
    record = h.state()
    assert h.c.sources.update_settings(replace(record, removing=True), revision=record.revision) is not None
    with pytest.raises(errors.StepBusy):  # the removal's own first step comes back later, not lost
        h.step()
    h.drain()  # the running sync's next step removes the source's documents instead of listing more
    assert h.documents() == []
    assert world.calls == 1
    with pytest.raises(errors.NotFound):
        h.state()


@pytest.mark.parametrize("full", [True, False])
def test_a_source_removed_during_one_long_step_is_removed_at_its_end(
    h: SyncHarness, world: ScriptedWorld, full: bool
) -> None:
    world.full = full

    def remove_at(call: int) -> None:
        if call == 2:  # the API's DELETE, while this step lists
            record = h.state()
            h.c.sources.update_settings(replace(record, removing=True), revision=record.revision)

    world.on_call = remove_at
    assert h.step() == "done"  # one step: it lists to the end, then finds the source removed
    assert h.documents() == []
    with pytest.raises(errors.NotFound):
        h.state()
