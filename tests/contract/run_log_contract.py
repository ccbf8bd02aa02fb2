"""The RunLog and ConversationStore contracts (``ragline.ports``), shared by every backend."""

from __future__ import annotations

import threading

from ragline.domain.conversations import MAX_TURNS, Conversation, Turn
from ragline.domain.runs import LoggedEvent, RunHead
from ragline.ports import ConversationStore, RunLog

RACERS = 6


def head(run: str = "r1", tenant: str = "acme", **kw: object) -> RunHead:
    fields: dict[str, object] = {
        "owner": "user:u1", "key_id": "k1", "status": "running", "created_at": 1000.0, "expires_at": 90_000,
    }  # fmt: skip
    fields.update(kw)
    return RunHead(tenant_id=tenant, run_id=run, **fields)  # type: ignore[arg-type]


def events(first: int, last: int, size: int = 10) -> list[LoggedEvent]:
    return [
        LoggedEvent(seq, "text", f'{{"type":"text","text":"{"x" * size}{seq}"}}')
        for seq in range(first, last + 1)
    ]


class RunLogContract:
    def test_a_started_run_has_its_head_and_no_events(self, log: RunLog) -> None:
        log.start(head())
        assert log.head("acme", "r1") == head()
        assert log.events("acme", "r1", 0, 100) == []
        assert log.head("acme", "missing") is None

    def test_events_read_back_in_order_after_any_point(self, log: RunLog) -> None:
        log.start(head())
        written = events(1, 7) + events(8, 8) + events(9, 30)
        log.append("acme", "r1", written[:7])
        log.append("acme", "r1", written[7:8])
        log.append("acme", "r1", written[8:])
        for after in range(0, 31):
            assert log.events("acme", "r1", after, 1000) == written[after:]
        current = log.head("acme", "r1")
        assert current is not None and current.last_seq == 30

    def test_a_large_append_is_split_and_read_whole(self, log: RunLog) -> None:
        log.start(head())
        big = events(1, 12, size=60_000)  # 720 KB: more than one stored item holds
        log.append("acme", "r1", big)
        assert log.events("acme", "r1", 0, 1000) == big
        assert log.events("acme", "r1", 5, 1000) == big[5:]

    def test_a_run_is_scoped_by_its_tenant(self, log: RunLog) -> None:
        log.start(head())
        log.append("acme", "r1", events(1, 3))
        assert log.head("globex", "r1") is None
        assert log.events("globex", "r1", 0, 100) == []
        assert not log.request_cancel("globex", "r1")
        assert not log.set_status("globex", "r1", "completed", expect=("running",))
        assert log.head("acme", "r1") == head(last_seq=3)

    def test_starting_again_drops_the_earlier_log(self, log: RunLog) -> None:
        log.start(head(status="failed"))
        log.append("acme", "r1", events(1, 5))
        log.start(head())
        assert log.events("acme", "r1", 0, 100) == []
        assert log.head("acme", "r1") == head()

    def test_status_moves_only_from_what_it_expects(self, log: RunLog) -> None:
        log.start(head(status="queued"))
        assert not log.set_status("acme", "r1", "completed", expect=("running",))
        assert log.set_status("acme", "r1", "running", expect=("queued",))
        assert not log.set_status("acme", "r1", "running", expect=("queued",))
        assert log.set_status("acme", "r1", "completed", expect=("running",))
        current = log.head("acme", "r1")
        assert current is not None and current.status == "completed" and current.ended

    def test_one_of_many_racing_claims_wins(self, log: RunLog) -> None:
        log.start(head(status="queued"))
        won: list[bool] = []
        barrier = threading.Barrier(RACERS)

        def claim() -> None:
            barrier.wait()
            won.append(log.set_status("acme", "r1", "running", expect=("queued",)))

        threads = [threading.Thread(target=claim) for _ in range(RACERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(won) == [False] * (RACERS - 1) + [True]

    def test_a_cancel_is_asked_only_of_a_run_that_has_not_ended(self, log: RunLog) -> None:
        log.start(head())
        assert log.request_cancel("acme", "r1")
        current = log.head("acme", "r1")
        assert current is not None and current.cancel_requested and current.status == "running"
        log.start(head("r2", status="completed"))
        assert not log.request_cancel("acme", "r2")
        assert not log.request_cancel("acme", "missing")

    def test_purging_a_tenant_leaves_other_tenants_runs(self, log: RunLog) -> None:
        for run in ("r1", "r2"):
            log.start(head(run))
            log.append("acme", run, events(1, 3))
        log.start(head("r1", tenant="globex"))
        log.append("globex", "r1", events(1, 2))
        assert log.purge_tenant("acme") == 2
        assert log.head("acme", "r1") is None and log.events("acme", "r2", 0, 100) == []
        assert log.events("globex", "r1", 0, 100) == events(1, 2)


def turn(run: str, at: float, question: str = "q?", answer: str = "a.", **usage: int) -> Turn:
    return Turn(
        run_id=run, messages=[("user", question)], answer=answer, at=at,
        documents=[("docs", "d.txt")], usage=dict(usage) or {"retrievals": 1},
    )  # fmt: skip


def conversation(cid: str = "c1", tenant: str = "acme", owner: str = "user:u1") -> Conversation:
    return Conversation(tenant, cid, owner, "k1", 1000.0, 1000.0)


class ConversationStoreContract:
    def test_a_saved_conversation_reads_back(self, store: ConversationStore) -> None:
        c = conversation().with_turn(turn("r1", 1001.0, "When do rockets launch?", "At dawn."))
        assert store.save(c, expect_version=0)
        got = store.get("acme", "c1")
        assert got is not None and got.version == 1
        assert (
            got.turns == c.turns and got.usage == {"retrievals": 1} and got.title == "When do rockets launch?"
        )
        assert store.get("globex", "c1") is None and store.get("acme", "c2") is None

    def test_a_write_expects_the_version_it_read(self, store: ConversationStore) -> None:
        c = conversation().with_turn(turn("r1", 1001.0))
        assert store.save(c, expect_version=0)
        assert not store.save(c, expect_version=0)  # it exists already
        first = store.get("acme", "c1")
        assert first is not None
        assert store.save(first.with_turn(turn("r2", 1002.0)), expect_version=first.version)
        assert not store.save(first.with_turn(turn("r3", 1003.0)), expect_version=first.version)  # stale
        got = store.get("acme", "c1")
        assert got is not None and [t.run_id for t in got.turns] == ["r1", "r2"] and got.version == 2

    def test_racing_turns_all_land_when_each_retries_on_what_it_lost_to(
        self, store: ConversationStore
    ) -> None:
        store.save(conversation(), expect_version=0)
        barrier = threading.Barrier(RACERS)

        def add(i: int) -> None:
            barrier.wait()
            while True:
                current = store.get("acme", "c1")
                assert current is not None
                if store.save(current.with_turn(turn(f"r{i}", 1001.0 + i)), expect_version=current.version):
                    return

        threads = [threading.Thread(target=add, args=(i,)) for i in range(RACERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        got = store.get("acme", "c1")
        assert got is not None and sorted(t.run_id for t in got.turns) == sorted(
            f"r{i}" for i in range(RACERS)
        )
        assert got.usage == {"retrievals": RACERS} and got.turn_count == RACERS

    def test_a_long_conversation_keeps_its_newest_turns_and_every_charge(
        self, store: ConversationStore
    ) -> None:
        c = conversation()
        for i in range(MAX_TURNS + 5):
            c = c.with_turn(turn(f"r{i}", 1001.0 + i, answer="x" * 2000, llm_output_tokens=10))
        assert store.save(c, expect_version=0)
        got = store.get("acme", "c1")
        assert got is not None and len(got.turns) <= MAX_TURNS and got.turns[-1].run_id == f"r{MAX_TURNS + 4}"
        assert got.turn_count == MAX_TURNS + 5 and got.usage == {"llm_output_tokens": 10 * (MAX_TURNS + 5)}

    def test_lists_by_owner_newest_first(self, store: ConversationStore) -> None:
        for cid, owner, at in (
            ("c1", "user:u1", 1001.0),
            ("c2", "user:u2", 1002.0),
            ("c3", "user:u1", 1003.0),
        ):
            store.save(conversation(cid, owner=owner).with_turn(turn("r", at)), expect_version=0)
        store.save(conversation("c9", tenant="globex").with_turn(turn("r", 1009.0)), expect_version=0)
        assert [c.conversation_id for c in store.list("acme", "user:u1", 10)] == ["c3", "c1"]
        assert [c.conversation_id for c in store.list("acme", None, 10)] == ["c3", "c2", "c1"]
        assert [c.conversation_id for c in store.list("acme", None, 2)] == ["c3", "c2"]

    def test_delete_and_purge(self, store: ConversationStore) -> None:
        for cid in ("c1", "c2"):
            store.save(conversation(cid).with_turn(turn("r", 1001.0)), expect_version=0)
        store.save(conversation("c1", tenant="globex").with_turn(turn("r", 1001.0)), expect_version=0)
        assert store.delete("acme", "c1") and not store.delete("acme", "c1")
        assert store.get("acme", "c1") is None
        assert store.purge_tenant("acme") == 1
        assert store.list("acme", None, 10) == [] and store.get("globex", "c1") is not None
