"""The WebhookStore and OnceMarks contracts (``ragline.ports``), shared by every backend."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from ragline import errors
from ragline.domain.webhooks import Subscription
from ragline.ports import OnceMarks, WebhookStore

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def sub(tenant: str, id_: str, minutes: int = 0, **kw: object) -> Subscription:
    fields: dict[str, object] = {
        "url": f"https://hooks.example.com/{id_}", "secret": f"whsec_{id_}", "event_types": (),
        "description": "", "created_at": T0 + timedelta(minutes=minutes),
    }  # fmt: skip
    fields.update(kw)
    return Subscription(id=id_, tenant_id=tenant, **fields)  # type: ignore[arg-type]


RACE_ROUNDS = 20
"""Concurrent marks raced this many times (each round 8 threads, one key)."""


class WebhookStoreContract:
    @pytest.fixture
    def store(self) -> WebhookStore:
        raise NotImplementedError

    def test_put_then_get_returns_it_whole(self, store: WebhookStore) -> None:
        s = sub("acme", "wh_1", event_types=("document.indexed", "document.failed"), description="ops")
        store.put(s)
        assert store.get("acme", "wh_1") == s

    def test_list_is_per_tenant_oldest_first(self, store: WebhookStore) -> None:
        store.put(sub("acme", "wh_b", 2))
        store.put(sub("acme", "wh_a", 1))
        store.put(sub("globex", "wh_c", 0))
        assert [s.id for s in store.list("acme")] == ["wh_a", "wh_b"]
        assert [s.id for s in store.list("globex")] == ["wh_c"]
        assert store.list("initech") == []

    def test_another_tenants_subscription_is_not_found(self, store: WebhookStore) -> None:
        store.put(sub("acme", "wh_1"))
        with pytest.raises(errors.NotFound):
            store.get("globex", "wh_1")
        with pytest.raises(errors.NotFound):
            store.delete("globex", "wh_1")
        assert store.get("acme", "wh_1").id == "wh_1"

    def test_delete_returns_it_and_forgets_it(self, store: WebhookStore) -> None:
        store.put(sub("acme", "wh_1"))
        assert store.delete("acme", "wh_1").id == "wh_1"
        with pytest.raises(errors.NotFound):
            store.get("acme", "wh_1")
        with pytest.raises(errors.NotFound):
            store.delete("acme", "wh_1")

    def test_put_replaces_the_secret(self, store: WebhookStore) -> None:
        store.put(sub("acme", "wh_1"))
        store.put(sub("acme", "wh_1", secret="whsec_new"))
        assert store.get("acme", "wh_1").secret == "whsec_new"
        assert len(store.list("acme")) == 1

    def test_replace_writes_over_an_existing_subscription_only(self, store: WebhookStore) -> None:
        store.put(sub("acme", "wh_1"))
        store.replace(sub("acme", "wh_1", secret="whsec_new"))
        assert store.get("acme", "wh_1").secret == "whsec_new"
        store.delete("acme", "wh_1")
        with pytest.raises(errors.NotFound):
            store.replace(sub("acme", "wh_1", secret="whsec_newer"))  # deleted: not brought back
        with pytest.raises(errors.NotFound):
            store.replace(sub("globex", "wh_2"))
        assert store.list("acme") == [] and store.list("globex") == []


class OnceMarksContract:
    @pytest.fixture
    def marks(self) -> OnceMarks:
        raise NotImplementedError

    def test_first_mark_wins_then_has(self, marks: OnceMarks) -> None:
        assert not marks.has("quota#acme#2026-03#80")
        assert marks.mark("quota#acme#2026-03#80", ttl_seconds=60)
        assert not marks.mark("quota#acme#2026-03#80", ttl_seconds=60)
        assert marks.has("quota#acme#2026-03#80")
        assert not marks.has("quota#acme#2026-03#100")

    def test_forget_lets_the_next_mark_win(self, marks: OnceMarks) -> None:
        assert marks.mark("k", ttl_seconds=60)
        marks.forget("k")
        assert not marks.has("k")
        assert marks.mark("k", ttl_seconds=60)

    def test_exactly_one_of_concurrent_marks_wins(self, marks: OnceMarks) -> None:
        for round_ in range(RACE_ROUNDS):  # a lost race shows in some rounds, not every one
            wins = race_marks(marks, f"delivered#wh_1#evt_{round_}")
            assert sorted(wins) == [False] * 7 + [True], f"round {round_}"


def race_marks(marks: OnceMarks, key: str, threads: int = 8) -> list[bool]:
    """What each of ``threads`` concurrent ``mark(key)`` calls answered."""
    wins: list[bool] = []
    barrier = threading.Barrier(threads)

    def race() -> None:
        barrier.wait()
        wins.append(marks.mark(key, ttl_seconds=60))

    started = [threading.Thread(target=race) for _ in range(threads)]
    for t in started:
        t.start()
    for t in started:
        t.join()
    return wins


class WebhookCapContract:
    """``add`` holds the cap under concurrency (mixed into :class:`WebhookStoreContract`'s suites)."""

    def test_add_stops_at_the_limit_and_a_delete_frees_a_slot(self, store: WebhookStore) -> None:
        assert all(store.add(sub("acme", f"wh_{i}", i), limit=3) for i in range(3))
        assert not store.add(sub("acme", "wh_x", 9), limit=3)
        assert store.add(sub("globex", "wh_g"), limit=3)  # another tenant's count is its own
        store.delete("acme", "wh_0")
        assert store.add(sub("acme", "wh_y", 10), limit=3)
        assert sorted(s.id for s in store.list("acme")) == ["wh_1", "wh_2", "wh_y"]

    def test_concurrent_adds_never_pass_the_limit(self, store: WebhookStore) -> None:
        barrier = threading.Barrier(12)
        added: list[bool] = []

        def add(i: int) -> None:
            barrier.wait()
            added.append(store.add(sub("acme", f"wh_{i}", i), limit=5))

        threads = [threading.Thread(target=add, args=(i,)) for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert added.count(True) == 5
        assert len(store.list("acme")) == 5
