"""The SourceRegistry contract (``ragline.ports``), shared by the SQLite and the DynamoDB registry."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from ragline import errors
from ragline.domain.sources import KnownItem, SourceRecord, SyncCounts
from ragline.ports import SourceRegistry

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def record(source_id: str = "src_0000000000000001", namespace: str = "docs", **kw: object) -> SourceRecord:
    fields: dict[str, object] = {
        "kind": "web", "name": "site", "settings": {"seeds": ["https://example.com/"]}, "created_at": T0,
    }  # fmt: skip
    fields.update(kw)
    return SourceRecord(tenant_id="acme", namespace_id=namespace, source_id=source_id, **fields)  # type: ignore[arg-type]


def item(item_id: str, run: int = 1, **kw: object) -> KnownItem:
    return KnownItem(item_id, f"doc-{item_id}", "v1", "*", run, "ok", "{}", "")._replace(**kw)  # type: ignore[arg-type]


class SourceRegistryContract:
    @pytest.fixture
    def sources(self) -> SourceRegistry:
        raise NotImplementedError

    def test_create_then_get_returns_it_whole(self, sources: SourceRegistry) -> None:
        r = record(every_minutes=60, has_credentials=True)
        assert sources.create(r, limit=5)
        assert sources.get("acme", "docs", r.source_id) == r

    def test_create_refuses_past_the_limit_and_an_existing_id(self, sources: SourceRegistry) -> None:
        assert sources.create(record("src_a"), limit=2)
        assert sources.create(record("src_b"), limit=2)
        assert not sources.create(record("src_c"), limit=2)
        assert sources.create(record("src_c", namespace="other"), limit=2)  # the limit is per namespace
        with pytest.raises(errors.Conflict):
            sources.create(record("src_a"), limit=5)

    def test_get_of_a_missing_source_is_not_found(self, sources: SourceRegistry) -> None:
        with pytest.raises(errors.NotFound):
            sources.get("acme", "docs", "src_nothing")

    def test_list_is_per_namespace_ordered_by_id(self, sources: SourceRegistry) -> None:
        for sid in ("src_c", "src_a", "src_b"):
            sources.create(record(sid), limit=5)
        sources.create(record("src_z", namespace="other"), limit=5)
        assert [r.source_id for r in sources.list("acme", "docs")] == ["src_a", "src_b", "src_c"]

    def test_update_settings_is_conditional_on_the_revision_and_leaves_the_sync_state(
        self, sources: SourceRegistry
    ) -> None:
        r = record()
        sources.create(r, limit=5)
        claimed = sources.claim(
            "acme", "docs", r.source_id, token="t:0", expect="", lease_seconds=60, now=100
        )
        assert claimed is not None
        assert sources.advance(replace(claimed, run=3, cursor="c", lease_token="t:0"), token="t:0")
        updated = sources.update_settings(replace(r, name="renamed", every_minutes=30), revision=0)
        assert updated is not None and (updated.name, updated.revision, updated.every_minutes) == (
            "renamed",
            1,
            30,
        )
        assert (updated.run, updated.cursor) == (3, "c")  # untouched
        assert sources.update_settings(replace(r, name="late"), revision=0) is None
        assert sources.get("acme", "docs", r.source_id).name == "renamed"

    def test_claim_takes_a_free_handed_over_or_expired_lease_only(self, sources: SourceRegistry) -> None:
        r = record()
        sources.create(r, limit=5)
        sid = r.source_id
        first = sources.claim("acme", "docs", sid, token="s:0", expect="", lease_seconds=60, now=100)
        assert first is not None and (first.lease_token, first.lease_until) == ("s:0", 160)
        assert sources.claim("acme", "docs", sid, token="x:0", expect="", lease_seconds=60, now=120) is None
        assert sources.claim("acme", "docs", sid, token="s:0", expect="", lease_seconds=60, now=120) is None
        handed = sources.claim("acme", "docs", sid, token="s:1", expect="s:0", lease_seconds=60, now=120)
        assert handed is not None and handed.lease_token == "s:1"
        assert (
            sources.claim("acme", "docs", sid, token="s:1", expect="s:0", lease_seconds=60, now=130) is None
        )
        taken = sources.claim("acme", "docs", sid, token="y:0", expect="", lease_seconds=60, now=181)
        assert taken is not None and taken.lease_token == "y:0"
        with pytest.raises(errors.NotFound):
            sources.claim("acme", "docs", "src_gone", token="z:0", expect="", lease_seconds=60, now=1)

    def test_advance_writes_the_sync_state_only_under_its_token(self, sources: SourceRegistry) -> None:
        r = record()
        sources.create(r, limit=5)
        claimed = sources.claim(
            "acme", "docs", r.source_id, token="s:0", expect="", lease_seconds=60, now=100
        )
        assert claimed is not None
        state = replace(
            claimed, cursor="next", run=2, phase="listing", full=True, counts=SyncCounts(5, 3, 1, 1, 0, 0),
            last_error="one failed", started_at=T0, next_run_at=T0, lease_token="s:0",
        )  # fmt: skip
        assert not sources.advance(state, token="other:0")
        assert sources.advance(state, token="s:0")
        stored = sources.get("acme", "docs", r.source_id)
        assert stored == replace(state, revision=0)
        assert sources.advance(replace(stored, phase="idle", lease_token="", lease_until=0.0), token="s:0")
        assert not sources.advance(replace(stored, phase="listing"), token="s:0")  # released: no longer its

    def test_items_are_written_read_listed_and_dropped(self, sources: SourceRegistry) -> None:
        r = record()
        sources.create(r, limit=5)
        long_id = "https://example.com/" + "x" * 1500
        rows = [item("b"), item("a", memo='{"etag":"1"}'), item(long_id, state="skipped")]
        sources.put_items("acme", "docs", r.source_id, rows)
        assert sources.known("acme", "docs", r.source_id, ["a", long_id, "missing"]) == {
            "a": rows[1], long_id: rows[2],
        }  # fmt: skip
        assert {i.item_id for i in sources.items("acme", "docs", r.source_id)} == {"a", "b", long_id}
        sources.put_items("acme", "docs", r.source_id, [item("a", run=2, version="v2")])
        assert sources.known("acme", "docs", r.source_id, ["a"])["a"].version == "v2"
        sources.drop_items("acme", "docs", r.source_id, ["b", long_id])
        assert [i.item_id for i in sources.items("acme", "docs", r.source_id)] == ["a"]

    def test_unseen_returns_items_of_older_runs_up_to_the_limit(self, sources: SourceRegistry) -> None:
        r = record()
        sources.create(r, limit=5)
        sources.put_items("acme", "docs", r.source_id, [item(f"i{n:03}", run=n % 3) for n in range(150)])
        old = sources.unseen("acme", "docs", r.source_id, run=2, limit=1000)
        assert {i.item_id for i in old} == {f"i{n:03}" for n in range(150) if n % 3 < 2}
        assert len(sources.unseen("acme", "docs", r.source_id, run=2, limit=7)) == 7

    def test_many_items_round_trip(self, sources: SourceRegistry) -> None:
        r = record()
        sources.create(r, limit=5)
        ids = [f"item-{n}" for n in range(260)]
        sources.put_items("acme", "docs", r.source_id, [item(i) for i in ids])
        assert set(sources.known("acme", "docs", r.source_id, ids)) == set(ids)

    def test_delete_removes_the_source_and_its_items_and_frees_its_place(
        self, sources: SourceRegistry
    ) -> None:
        r = record()
        sources.create(r, limit=1)
        sources.put_items("acme", "docs", r.source_id, [item("a")])
        sources.delete("acme", "docs", r.source_id)
        with pytest.raises(errors.NotFound):
            sources.get("acme", "docs", r.source_id)
        assert sources.items("acme", "docs", r.source_id) == []
        assert sources.create(record("src_next"), limit=1)

    def test_purge_tenant_removes_every_source(self, sources: SourceRegistry) -> None:
        sources.create(record("src_a"), limit=5)
        sources.create(record("src_b", namespace="other"), limit=5)
        sources.put_items("acme", "docs", "src_a", [item("a")])
        assert sources.purge_tenant("acme") == 2
        assert sources.list("acme", "docs") == [] and sources.list("acme", "other") == []
        assert sources.items("acme", "docs", "src_a") == []

    def test_of_concurrent_claims_one_wins(self, sources: SourceRegistry) -> None:
        r = record()
        sources.create(r, limit=5)
        won: list[str] = []
        barrier = threading.Barrier(6)

        def claim(n: int) -> None:
            barrier.wait()
            got = sources.claim(
                "acme", "docs", r.source_id, token=f"t{n}:0", expect="", lease_seconds=60, now=1
            )
            if got is not None:
                won.append(got.lease_token)

        threads = [threading.Thread(target=claim, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(won) == 1
        assert sources.get("acme", "docs", r.source_id).lease_token == won[0]
