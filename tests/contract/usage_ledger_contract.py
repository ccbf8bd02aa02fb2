"""The UsageLedger contract (see :class:`ragline.ports.UsageLedger`), one suite for every adapter.

A subclass provides the ``ledger`` fixture (a fresh, empty ledger reading the time from the ``clock``
fixture) and, if it does not use ``current_period``'s format, a ``period`` fixture naming the period
commits land in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ragline import errors
from ragline.domain.billing import STALE_AFTER, CompletedRun
from ragline.domain.models import IngestUsage, RunUsage
from ragline.ports import UsageLedger

FP = "fingerprint-of-request-1"


class Clock:
    """A clock a test moves by hand (an ``in_progress`` marker must age past ``STALE_AFTER``)."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(day=1, hour=0, minute=0)  # room to advance in the period

    def __call__(self) -> datetime:
        return self.now

    def advance(self, by: timedelta) -> None:
        self.now += by


def outcome(call: Callable[[], Any]) -> Any:
    """The call's result, or the class of the Ragline error it raised."""
    try:
        return call()
    except errors.RaglineError as exc:
        return type(exc)


def run_in_threads(n: int, target: Callable[[], Any]) -> list[Any]:
    """Call ``target`` from ``n`` threads released together; their results (an exception re-raises)."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    failures: list[BaseException] = []

    def work(i: int) -> None:
        try:
            barrier.wait()
            results[i] = target()
        except BaseException as exc:  # re-raised in the main thread
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    if failures:
        raise failures[0]
    return results


class UsageLedgerContract:
    @pytest.fixture
    def ledger(self) -> UsageLedger:
        raise NotImplementedError

    @pytest.fixture
    def clock(self) -> Clock:
        return Clock()

    # -- exactly once -----------------------------------------------------------------------------
    def test_a_run_is_charged_once_however_often_it_is_committed(
        self, ledger: UsageLedger, period: str
    ) -> None:
        usage = RunUsage(retrievals=2, llm_output_tokens=50)
        for _ in range(5):
            assert ledger.commit("acme", "run-1", usage) == usage
        assert ledger.period_usage("acme", period) == usage
        assert ledger.period_runs("acme", period) == 1

    def test_concurrent_commits_of_one_run_charge_once(self, ledger: UsageLedger, period: str) -> None:
        usage = RunUsage(retrievals=1, llm_input_tokens=7)
        charges = run_in_threads(8, lambda: ledger.commit("acme", "run-x", usage))
        assert charges == [usage] * 8
        assert ledger.period_usage("acme", period) == usage
        assert ledger.period_runs("acme", period) == 1

    def test_concurrent_commits_of_different_runs_all_add_up(self, ledger: UsageLedger, period: str) -> None:
        counter = iter(range(100))
        lock = threading.Lock()

        def commit_new_run() -> RunUsage:
            with lock:
                n = next(counter)
            return ledger.commit("acme", f"run-{n}", RunUsage(retrievals=1, reranks=n))

        run_in_threads(8, commit_new_run)
        assert ledger.period_runs("acme", period) == 8
        assert ledger.period_usage("acme", period) == RunUsage(retrievals=8, reranks=sum(range(8)))

    def test_a_replay_returns_the_first_charge_not_the_new_numbers(
        self, ledger: UsageLedger, period: str
    ) -> None:
        first = RunUsage(retrievals=1, llm_output_tokens=3)
        assert ledger.commit("acme", "run-2", first) == first
        assert ledger.commit("acme", "run-2", RunUsage(retrievals=9)) == first
        assert ledger.commit("acme", "run-2", RunUsage(retrievals=9), 1) == first  # a limit changes nothing
        assert ledger.period_usage("acme", period) == first
        assert ledger.period_runs("acme", period) == 1

    def test_an_error_run_is_charged_what_it_used(self, ledger: UsageLedger, period: str) -> None:
        partial = RunUsage(retrievals=3)  # failed before the model answered: no tokens
        assert ledger.commit("acme", "run-failed", partial) == partial
        assert ledger.period_usage("acme", period) == partial
        assert ledger.period_runs("acme", period) == 1

    # -- sums and tenants -------------------------------------------------------------------------
    def test_period_usage_sums_runs_field_by_field(self, ledger: UsageLedger, period: str) -> None:
        a = RunUsage(retrievals=1, reranks=2, llm_input_tokens=30, llm_output_tokens=4, embedded_tokens=5)
        b = RunUsage(retrievals=10, llm_input_tokens=300, pages=6)
        c = RunUsage(reranks=20, llm_output_tokens=40, embedded_tokens=50, pages=60)
        for n, usage in enumerate((a, b, c)):
            ledger.commit("acme", f"run-{n}", usage)
        total = {"retrievals": 11, "reranks": 22, "llm_input_tokens": 330, "llm_output_tokens": 44}
        assert ledger.period_usage("acme", period) == RunUsage(**total, embedded_tokens=55, pages=66)
        assert ledger.period_runs("acme", period) == 3

    def test_tenants_are_independent(self, ledger: UsageLedger, period: str) -> None:
        ledger.commit("acme", "run-1", RunUsage(retrievals=1))
        # The same run id in another tenant is another run: charged, and not answered with acme's charge.
        assert ledger.commit("globex", "run-1", RunUsage(retrievals=4)) == RunUsage(retrievals=4)
        ledger.commit("globex", "run-2", RunUsage(reranks=2))
        assert ledger.period_usage("acme", period) == RunUsage(retrievals=1)
        assert ledger.period_usage("globex", period) == RunUsage(retrievals=4, reranks=2)
        assert (ledger.period_runs("acme", period), ledger.period_runs("globex", period)) == (1, 2)
        ledger.reserve("initech", "run-1", 1)  # others' usage is not this tenant's quota

    def test_an_unknown_tenant_or_period_reads_zero(self, ledger: UsageLedger, period: str) -> None:
        ledger.commit("acme", "run-1", RunUsage(retrievals=1))
        assert ledger.period_usage("ghost", period) == RunUsage()
        assert ledger.period_runs("ghost", period) == 0
        assert ledger.period_usage("acme", "1999-01") == RunUsage()
        assert ledger.period_runs("acme", "1999-01") == 0

    # -- quota ------------------------------------------------------------------------------------
    def test_reserve_allows_until_the_quota_is_used_then_refuses(
        self, ledger: UsageLedger, period: str
    ) -> None:
        for n in range(2):
            ledger.reserve("acme", f"run-{n}", 2)
            ledger.commit("acme", f"run-{n}", RunUsage(retrievals=1), 2)
        with pytest.raises(errors.QuotaExceeded) as refused:
            ledger.reserve("acme", "run-2", 2)
        assert refused.value.details == {"limit": 2, "used": 2, "period": period}
        assert refused.value.code == "quota_exceeded"
        assert ledger.reserve("acme", "run-2", 3) is None  # a larger limit has room
        assert ledger.reserve("acme", "run-3") is None  # no limit: unlimited
        assert ledger.period_runs("acme", period) == 2  # reserving charges nothing

    def test_reserving_charges_nothing(self, ledger: UsageLedger, period: str) -> None:
        for n in range(3):
            ledger.reserve("acme", f"run-{n}", 1)
        assert ledger.period_runs("acme", period) == 0
        assert ledger.period_usage("acme", period) == RunUsage()

    def test_a_zero_quota_refuses_every_run(self, ledger: UsageLedger, period: str) -> None:
        with pytest.raises(errors.QuotaExceeded) as refused:
            ledger.reserve("acme", "run-1", 0)
        assert refused.value.details == {"limit": 0, "used": 0, "period": period}

    def test_an_over_quota_commit_is_still_recorded_exactly_once(
        self, ledger: UsageLedger, period: str
    ) -> None:
        # Two runs reserve while there is room for one; both finish; both are charged.
        ledger.reserve("acme", "run-a", 1)
        ledger.reserve("acme", "run-b", 1)
        assert ledger.commit("acme", "run-a", RunUsage(retrievals=1), 1) == RunUsage(retrievals=1)
        late = RunUsage(retrievals=2, llm_output_tokens=9)
        for _ in range(3):
            assert ledger.commit("acme", "run-b", late, 1) == late
        assert ledger.period_runs("acme", period) == 2
        assert ledger.period_usage("acme", period) == RunUsage(retrievals=3, llm_output_tokens=9)
        with pytest.raises(errors.QuotaExceeded) as refused:
            ledger.reserve("acme", "run-c", 1)
        assert refused.value.details["used"] == 2

    def test_concurrent_over_quota_commits_of_one_run_charge_once(
        self, ledger: UsageLedger, period: str
    ) -> None:
        ledger.commit("acme", "run-a", RunUsage(retrievals=1), 1)
        late = RunUsage(reranks=1)
        assert run_in_threads(8, lambda: ledger.commit("acme", "run-b", late, 1)) == [late] * 8
        assert ledger.period_runs("acme", period) == 2
        assert ledger.period_usage("acme", period) == RunUsage(retrievals=1, reranks=1)

    # -- idempotency: a run id names one request, whose work is done once --------------------------
    def test_a_completed_run_is_replayed_with_its_record_and_not_charged_again(
        self, ledger: UsageLedger, period: str
    ) -> None:
        usage = RunUsage(retrievals=1, llm_output_tokens=5)
        assert ledger.reserve("acme", "key-1", 3, FP) is None  # do the work
        ledger.commit("acme", "key-1", usage, 3, '{"answer":"42"}', FP)
        for _ in range(5):  # Then every replay gets the record, nothing charged, no work to do
            assert ledger.reserve("acme", "key-1", 3, FP) == CompletedRun(
                usage=usage, result='{"answer":"42"}'
            )
        assert ledger.period_runs("acme", period) == 1
        assert ledger.period_usage("acme", period) == usage

    def test_of_concurrent_reservations_of_one_run_exactly_one_does_the_work(
        self, ledger: UsageLedger, period: str
    ) -> None:
        outcomes = run_in_threads(12, lambda: outcome(lambda: ledger.reserve("acme", "key-1", 3, FP)))
        assert outcomes.count(None) == 1
        assert outcomes.count(errors.RunInProgress) == 11
        assert ledger.period_runs("acme", period) == 0

    def test_a_run_in_progress_refuses_a_replay_with_409(self, ledger: UsageLedger) -> None:
        assert ledger.reserve("acme", "key-1", None, FP) is None
        with pytest.raises(errors.RunInProgress) as refused:
            ledger.reserve("acme", "key-1", None, FP)
        assert refused.value.code == "run_in_progress"

    def test_another_request_under_a_used_key_is_refused_with_422(
        self, ledger: UsageLedger, period: str
    ) -> None:
        ledger.reserve("acme", "key-1", None, FP)
        with pytest.raises(errors.IdempotencyKeyReused):  # while the first runs
            ledger.reserve("acme", "key-1", None, "another request")
        ledger.commit("acme", "key-1", RunUsage(retrievals=1), None, "{}", FP)
        with pytest.raises(errors.IdempotencyKeyReused) as refused:  # and once it completed
            ledger.reserve("acme", "key-1", None, "another request")
        assert refused.value.code == "idempotency_key_reused"
        assert ledger.period_runs("acme", period) == 1

    def test_a_stale_run_in_progress_may_be_taken_over_by_the_same_request(
        self, ledger: UsageLedger, clock: Clock, period: str
    ) -> None:
        assert ledger.reserve("acme", "key-1", None, FP) is None  # Given a run that crashed
        clock.advance(STALE_AFTER - timedelta(seconds=5))
        with pytest.raises(errors.RunInProgress):  # not yet stale
            ledger.reserve("acme", "key-1", None, FP)
        clock.advance(timedelta(seconds=5))
        with pytest.raises(errors.IdempotencyKeyReused):  # stale, but another request
            ledger.reserve("acme", "key-1", None, "another request")
        assert ledger.reserve("acme", "key-1", None, FP) is None  # taken over
        with pytest.raises(errors.RunInProgress):  # and in progress again
            ledger.reserve("acme", "key-1", None, FP)
        ledger.commit("acme", "key-1", RunUsage(pages=1), None, None, FP)
        assert ledger.reserve("acme", "key-1", None, FP) == CompletedRun(usage=RunUsage(pages=1))
        assert ledger.period_runs("acme", period) == 1

    def test_purging_a_tenant_drops_its_results_and_ingest_entries_and_keeps_its_charges(
        self, ledger: UsageLedger, period: str
    ) -> None:
        usage = RunUsage(retrievals=1)
        for tenant in ("acme", "globex"):
            for run in ("run-1", "run-2"):
                assert ledger.reserve(tenant, run, None, FP) is None
                ledger.commit(tenant, run, usage, None, f'{{"chunk":"{tenant} text"}}', FP)
        assert ledger.reserve("acme", "run-3", None, FP) is None  # one still in progress
        ingested = IngestUsage(documents=1, chunks=4)
        for tenant in ("acme", "globex"):
            assert ledger.record_ingest(tenant, "ingest#docs#a.txt#01", ingested)

        assert ledger.purge_tenant("acme") >= 3

        assert ledger.reserve("acme", "run-1", None, FP) == CompletedRun(usage=usage, result=None)
        assert ledger.period_runs("acme", period) == 2
        assert ledger.period_usage("acme", period) == RunUsage(retrievals=2)
        assert ledger.reserve("globex", "run-1", None, FP) == CompletedRun(
            usage=usage, result='{"chunk":"globex text"}'
        )
        assert ledger.period_ingestion("acme", period) == ingested  # counted, entry gone
        assert ledger.record_ingest("globex", "ingest#docs#a.txt#01", ingested) is False
        ledger.purge_tenant("acme")  # idempotent

    def test_a_quota_refusal_is_not_charged_and_leaves_no_marker(
        self, ledger: UsageLedger, period: str
    ) -> None:
        ledger.reserve("acme", "key-1", 1, FP)
        ledger.commit("acme", "key-1", RunUsage(retrievals=1), 1, "{}", FP)
        for _ in range(3):
            with pytest.raises(errors.QuotaExceeded):
                ledger.reserve("acme", "key-2", 1, FP)
        assert ledger.period_runs("acme", period) == 1
        assert ledger.reserve("acme", "key-2", 2, FP) is None  # the refused key is free for a later run
        # a replay of a completed run is answered even at the quota (it costs nothing)
        assert ledger.reserve("acme", "key-1", 1, FP) == CompletedRun(
            usage=RunUsage(retrievals=1), result="{}"
        )

    @pytest.mark.parametrize("length", [255, 2100])
    def test_a_run_id_of_any_length_is_reserved_charged_and_replayed(
        self, ledger: UsageLedger, period: str, length: int
    ) -> None:
        key = "k" * length
        assert ledger.reserve("acme", key, 5, FP) is None
        assert ledger.commit("acme", key, RunUsage(retrievals=1), 5, "{}", FP) == RunUsage(retrievals=1)
        assert ledger.reserve("acme", key, 5, FP) == CompletedRun(usage=RunUsage(retrievals=1), result="{}")
        assert ledger.reserve("acme", key[:-1], 5, FP) is None  # one character shorter: another run
        assert ledger.period_runs("acme", period) == 1

    def test_tenants_do_not_share_run_ids(self, ledger: UsageLedger) -> None:
        ledger.reserve("acme", "key-1", None, FP)
        assert ledger.reserve("globex", "key-1", None, "globex's own request") is None

    # -- a run that did no work: completed, not charged -------------------------------------------
    def test_a_run_completed_uncharged_uses_no_quota_and_replays_its_result(
        self, ledger: UsageLedger, period: str
    ) -> None:
        # Given a tenant with room for one run, and three runs that did no work (no namespace)
        for n in range(3):
            assert ledger.reserve("acme", f"key-{n}", 1, FP) is None
            assert ledger.complete_uncharged("acme", f"key-{n}", '{"exit":"no_namespaces"}', FP) == RunUsage()
        # Then nothing is counted, the quota's slot is still free, and each replays its outcome
        assert ledger.period_runs("acme", period) == 0
        assert ledger.period_usage("acme", period) == RunUsage()
        for _ in range(2):
            assert ledger.reserve("acme", "key-0", 1, FP) == CompletedRun(
                usage=RunUsage(), result='{"exit":"no_namespaces"}'
            )
        with pytest.raises(errors.IdempotencyKeyReused):
            ledger.reserve("acme", "key-0", 1, "another request")
        assert ledger.reserve("acme", "key-3", 1, FP) is None
        assert ledger.commit("acme", "key-3", RunUsage(retrievals=1), 1, "{}", FP) == RunUsage(retrievals=1)
        assert ledger.period_runs("acme", period) == 1

    def test_the_first_ending_of_a_run_wins_charged_or_not(self, ledger: UsageLedger, period: str) -> None:
        ledger.reserve("acme", "idle", None, FP)
        ledger.complete_uncharged("acme", "idle", "{}", FP)
        assert ledger.commit("acme", "idle", RunUsage(retrievals=4), None, "late", FP) == RunUsage()
        ledger.reserve("acme", "busy", None, FP)
        ledger.commit("acme", "busy", RunUsage(retrievals=2), None, "{}", FP)
        assert ledger.complete_uncharged("acme", "busy", "late", FP) == RunUsage(retrievals=2)
        assert ledger.reserve("acme", "idle", None, FP) == CompletedRun(usage=RunUsage(), result="{}")
        assert ledger.reserve("acme", "busy", None, FP) == CompletedRun(
            usage=RunUsage(retrievals=2), result="{}"
        )
        assert ledger.period_runs("acme", period) == 1
        assert ledger.period_usage("acme", period) == RunUsage(retrievals=2)

    def test_concurrent_charged_and_uncharged_endings_of_one_run_agree(
        self, ledger: UsageLedger, period: str
    ) -> None:
        usage = RunUsage(reranks=3)
        turn = iter(range(100))
        lock = threading.Lock()

        def end() -> RunUsage:
            with lock:
                n = next(turn)
            if n % 2:
                return ledger.commit("acme", "run-1", usage, None, "charged", FP)
            return ledger.complete_uncharged("acme", "run-1", "uncharged", FP)

        endings = run_in_threads(8, end)
        assert len({e.model_dump_json() for e in endings}) == 1  # every caller sees the one ending
        charged = endings[0] == usage
        assert ledger.period_runs("acme", period) == (1 if charged else 0)
        assert ledger.period_usage("acme", period) == (usage if charged else RunUsage())

    def test_an_uncharged_run_without_a_result_is_run_again_by_the_same_request_only(
        self, ledger: UsageLedger, period: str
    ) -> None:
        # Given a run refused before any work that recorded nothing to replay (it raised)
        assert ledger.reserve("acme", "key-1", None, FP) is None
        ledger.complete_uncharged("acme", "key-1", None, FP)
        # Then another request under the key is still refused; the same request may run it now, once
        with pytest.raises(errors.IdempotencyKeyReused):
            ledger.reserve("acme", "key-1", None, "another request")
        outcomes = run_in_threads(6, lambda: outcome(lambda: ledger.reserve("acme", "key-1", None, FP)))
        assert outcomes.count(None) == 1
        assert outcomes.count(errors.RunInProgress) == 5
        ledger.commit("acme", "key-1", RunUsage(retrievals=1), None, "{}", FP)
        assert ledger.reserve("acme", "key-1", None, FP) == CompletedRun(
            usage=RunUsage(retrievals=1), result="{}"
        )
        assert ledger.period_runs("acme", period) == 1

    # -- ingestion: one document version recorded once, not a run -----------------------------------
    def test_an_ingest_entry_is_recorded_once_however_often_it_is_recorded(
        self, ledger: UsageLedger, period: str
    ) -> None:
        usage = IngestUsage(documents=1, chunks=12, pages=3, embedded_tokens=900)
        assert ledger.record_ingest("acme", "ingest#docs#a.pdf#1", usage) is True
        for _ in range(3):  # a replay, even with other numbers, adds nothing
            assert ledger.record_ingest("acme", "ingest#docs#a.pdf#1", IngestUsage(documents=1)) is False
        assert ledger.period_ingestion("acme", period) == usage

    def test_ingest_entries_add_up_and_are_not_runs(self, ledger: UsageLedger, period: str) -> None:
        ledger.commit("acme", "run-1", RunUsage(retrievals=1, embedded_tokens=4, pages=1), 1)
        ledger.record_ingest("acme", "e-1", IngestUsage(documents=1, chunks=2, pages=1, embedded_tokens=10))
        ledger.record_ingest("acme", "e-2", IngestUsage(documents=1, chunks=5, pages=4))
        assert ledger.period_ingestion("acme", period) == IngestUsage(
            documents=2, chunks=7, pages=5, embedded_tokens=10
        )
        assert ledger.period_runs("acme", period) == 1  # ingestion is not a run …
        assert ledger.period_usage("acme", period) == RunUsage(retrievals=1, embedded_tokens=4, pages=1)
        with pytest.raises(errors.QuotaExceeded):  # … and neither frees nor uses the run quota
            ledger.reserve("acme", "run-2", 1)
        assert ledger.reserve("acme", "run-2", 2) is None

    def test_ingestion_is_recorded_at_a_used_up_quota(self, ledger: UsageLedger, period: str) -> None:
        ledger.commit("acme", "run-1", RunUsage(retrievals=1), 1)
        assert ledger.record_ingest("acme", "e-1", IngestUsage(documents=1, chunks=1)) is True
        assert ledger.period_ingestion("acme", period) == IngestUsage(documents=1, chunks=1)

    def test_concurrent_records_of_one_entry_record_it_once(self, ledger: UsageLedger, period: str) -> None:
        usage = IngestUsage(documents=1, chunks=3, pages=1, embedded_tokens=30)
        outcomes = run_in_threads(8, lambda: ledger.record_ingest("acme", "e-1", usage))
        assert outcomes.count(True) == 1 and outcomes.count(False) == 7
        assert ledger.period_ingestion("acme", period) == usage

    def test_concurrent_records_of_different_entries_all_add_up(
        self, ledger: UsageLedger, period: str
    ) -> None:
        counter = iter(range(100))
        lock = threading.Lock()

        def record_new_entry() -> bool:
            with lock:
                n = next(counter)
            return ledger.record_ingest("acme", f"e-{n}", IngestUsage(documents=1, chunks=n))

        assert run_in_threads(8, record_new_entry) == [True] * 8
        assert ledger.period_ingestion("acme", period) == IngestUsage(documents=8, chunks=sum(range(8)))

    def test_ingest_entries_are_per_tenant_and_never_alias_run_ids(
        self, ledger: UsageLedger, period: str
    ) -> None:
        assert ledger.record_ingest("acme", "id-1", IngestUsage(documents=1)) is True
        assert ledger.record_ingest("globex", "id-1", IngestUsage(documents=1, pages=2)) is True
        assert ledger.commit("acme", "id-1", RunUsage(retrievals=1)) == RunUsage(retrievals=1)
        assert ledger.period_ingestion("acme", period) == IngestUsage(documents=1)
        assert ledger.period_ingestion("globex", period) == IngestUsage(documents=1, pages=2)
        assert ledger.period_ingestion("ghost", period) == IngestUsage()
        assert ledger.period_ingestion("acme", "1999-01") == IngestUsage()

    @pytest.mark.parametrize("length", [255, 2100])
    def test_an_ingest_entry_id_of_any_length_is_recorded_once(
        self, ledger: UsageLedger, period: str, length: int
    ) -> None:
        entry = "ingest#docs#" + "d" * length + "#1"
        assert ledger.record_ingest("acme", entry, IngestUsage(documents=1)) is True
        assert ledger.record_ingest("acme", entry, IngestUsage(documents=1)) is False
        assert ledger.record_ingest("acme", entry[:-1] + "2", IngestUsage(documents=1)) is True
        assert ledger.period_ingestion("acme", period) == IngestUsage(documents=2)
