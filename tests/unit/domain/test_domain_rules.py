"""Rules both backends of a port share: the document claim, billing periods and quota, key hashes, times.

Each adapter pair (SQLite, DynamoDB) delegates to these functions or encodes them as a condition; the
contract suites check the adapters, these tests check the rules themselves.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline import errors
from ragline.domain.billing import check_quota, current_period, period_of, quota_reached
from ragline.domain.documents import (
    CLAIMABLE_STATUSES,
    ClaimReason,
    ClaimUpdate,
    DocumentRecord,
    DocumentStatus,
    claim_decision,
    claim_update,
    claimed_record,
    normalise_sequencer,
    upgrade_stored,
)
from ragline.domain.keys import (
    TOUCH_INTERVAL,
    hash_api_key,
    is_key_hash,
    new_api_key,
    require_key_hash,
    timestamp,
    touch_cutoff,
)

pytestmark = pytest.mark.unit

AT = datetime(2026, 3, 15, 12, 0, 0, 123456, tzinfo=UTC)
EARLIER = datetime(2026, 1, 1, tzinfo=UTC)
STATUSES: tuple[DocumentStatus, ...] = get_args(DocumentStatus)

# The contract's grant rule as a table: (incoming sequencer vs stored, stored status) -> outcome.
GRANT_TABLE: dict[tuple[str, DocumentStatus], ClaimReason] = {
    **{("newer", s): "claimed" for s in STATUSES},
    **{("older", s): "stale" for s in STATUSES},
    ("equal", "queued"): "claimed",
    ("equal", "processing"): "claimed",
    ("equal", "deleting"): "claimed",
    ("equal", "failed"): "claimed",
    ("equal", "ready"): "duplicate",
    ("equal", "deleted"): "duplicate",
}

sequencers = st.text("0123456789ABCDEF", min_size=1, max_size=32).map(normalise_sequencer)


def stored_record(sequencer: str, status: DocumentStatus = "ready", **kw: object) -> DocumentRecord:
    fields = {"tenant_id": "acme", "namespace_id": "docs", "document_id": "a.txt", "created_at": EARLIER}
    return DocumentRecord.model_validate(fields | {"sequencer": sequencer, "status": status} | kw)


def update(sequencer: str | None, *, deleting: bool = False) -> ClaimUpdate:
    return claim_update(
        sequencer, deleting=deleting, source="s3://b/a.txt", version_id="v2", etag="e2", size=42, at=AT
    )


# -- the document claim ---------------------------------------------------------------------------
def test_the_grant_table_covers_every_status() -> None:
    assert {status for _, status in GRANT_TABLE} == set(STATUSES)
    assert set(CLAIMABLE_STATUSES) == {
        s for (order, s), r in GRANT_TABLE.items() if order == "equal" and r == "claimed"
    }


@given(sequencers)
def test_given_no_record_when_an_event_claims_then_it_is_granted(sequencer: str) -> None:
    # Given nothing stored / When / Then
    assert claim_decision(None, sequencer, AT) == "claimed"


@given(sequencers, sequencers, st.sampled_from(STATUSES))
def test_given_a_stored_record_when_an_event_claims_then_the_decision_follows_the_table(
    stored_seq: str, incoming: str, status: DocumentStatus
) -> None:
    # Given
    stored = stored_record(stored_seq, status)
    order = "newer" if incoming > stored_seq else "equal" if incoming == stored_seq else "older"
    # When
    decision = claim_decision(stored, incoming, AT)
    # Then
    assert decision == GRANT_TABLE[(order, status)]


@pytest.mark.parametrize("status", STATUSES)
def test_given_the_same_event_when_it_claims_again_then_only_unfinished_work_is_redone(
    status: DocumentStatus,
) -> None:
    seq = normalise_sequencer("0055AED6DCD90281E5")
    assert claim_decision(stored_record(seq, status), seq, AT) == GRANT_TABLE[("equal", status)]


def test_given_sequencers_of_different_lengths_when_normalised_then_text_order_is_event_order() -> None:
    # Given S3 sequencers of different lengths (the longer one is later)
    stored = stored_record(normalise_sequencer("0055AED6DCD90281E5"))
    # When / Then
    assert claim_decision(stored, normalise_sequencer("0055AED6DCD90281E6"), AT) == "claimed"
    assert claim_decision(stored, normalise_sequencer("0055AED6DCD90281E4FF"), AT) == "stale"


# -- one ordering for every source (issue 24 #2) and the claim's lease (#9) ----------------------------
WALL_CLOCK = normalise_sequencer("18ED0A5B3C2D1E0F")
"""What a local write stored as its "sequencer" before issue 24: above every S3 sequencer."""


@given(st.sampled_from(STATUSES), sequencers)
def test_a_local_write_is_granted_whatever_is_stored(status: DocumentStatus, stored_seq: str) -> None:
    live = AT + timedelta(minutes=5)
    stored = stored_record(stored_seq, status, lease_until=live)
    assert claim_decision(stored, None, AT) == "claimed"


def test_a_local_write_keeps_the_s3_order_so_a_later_upload_still_wins() -> None:
    s1, s2 = normalise_sequencer("0055AED6DCD90281E5"), normalise_sequencer("0055AED6DCD90281E6")
    after_s3 = claimed_record(stored_record(s1), "acme", "docs", "a.txt", update(None))  # type: ignore[arg-type]
    assert (after_s3.origin, after_s3.sequencer, after_s3.attempts) == ("local", s1, 1)
    assert claim_decision(after_s3, s2, AT) == "claimed"  # the next upload
    assert claim_decision(after_s3, s1, AT) == "stale"  # the upload the API text replaced, redelivered
    api_only = claimed_record(None, "acme", "docs", "a.txt", update(None))  # type: ignore[arg-type]
    assert api_only.sequencer == "" and claim_decision(api_only, normalise_sequencer("00"), AT) == "claimed"


def test_a_record_stored_before_the_origin_existed_orders_by_its_source() -> None:
    api = upgrade_stored({"source": "api:", "sequencer": WALL_CLOCK, "status": "ready"})
    assert (api["origin"], api["sequencer"]) == ("local", "")
    s3 = upgrade_stored({"source": "s3://b/acme/docs/a.txt", "sequencer": WALL_CLOCK})
    assert (s3["origin"], s3["sequencer"]) == ("s3", WALL_CLOCK)
    current = {"origin": "local", "sequencer": "X", "source": "api:"}
    assert upgrade_stored(current) == current


@pytest.mark.parametrize("status", ["processing", "deleting"])
def test_the_same_event_under_a_live_lease_is_busy_and_after_it_is_granted(status: DocumentStatus) -> None:
    seq = normalise_sequencer("0056")
    stored = stored_record(seq, status, lease_until=AT + timedelta(seconds=330))
    assert claim_decision(stored, seq, AT) == "busy"
    assert claim_decision(stored, seq, AT + timedelta(seconds=329)) == "busy"
    assert claim_decision(stored, seq, AT + timedelta(seconds=330)) == "claimed"  # its worker died
    assert claim_decision(stored, normalise_sequencer("0057"), AT) == "claimed"  # a newer event: never waits
    assert claim_decision(stored_record(seq, "failed", lease_until=AT + timedelta(seconds=9)), seq, AT) == (
        "claimed"
    )


def test_a_leased_claim_records_until_when() -> None:
    leased = claim_update(
        "S", deleting=False, source="", version_id="", etag="", size=0, at=AT, lease_seconds=330
    )
    assert leased.lease_until == AT + timedelta(seconds=330)
    assert (
        claim_update("S", deleting=False, source="", version_id="", etag="", size=0, at=AT).lease_until
        is None
    )


def test_given_no_record_when_claimed_then_a_processing_record_at_generation_one_is_built() -> None:
    # Given
    seq = normalise_sequencer("0056")
    # When
    record = claimed_record(None, "acme", "docs", "a.txt", update(seq))
    # Then
    assert (record.tenant_id, record.namespace_id, record.document_id) == ("acme", "docs", "a.txt")
    assert (record.status, record.sequencer, record.generation, record.attempts) == ("processing", seq, 1, 1)
    assert (record.source, record.version_id, record.etag, record.size) == ("s3://b/a.txt", "v2", "e2", 42)
    assert record.created_at == record.updated_at == AT


def test_given_a_failed_attempt_when_its_event_claims_again_then_attempts_count_up_and_the_error_clears() -> (
    None
):
    # Given
    seq = normalise_sequencer("0056")
    failed = stored_record(
        seq, "failed", generation=4, attempts=2, error_code="x", error_message="y", chunk_count=7, pages=3,
        content_hash="h",
    )  # fmt: skip
    # When
    record = claimed_record(failed, "acme", "docs", "a.txt", update(seq, deleting=True))
    # Then
    assert (record.status, record.generation, record.attempts) == ("deleting", 5, 3)
    assert (record.error_code, record.error_message) == ("", "")
    assert (record.chunk_count, record.pages, record.content_hash) == (7, 3, "h")  # the last version's
    assert (record.created_at, record.updated_at) == (EARLIER, AT)


@given(sequencers, sequencers, st.integers(0, 1000), st.integers(0, 50), st.booleans())
def test_given_any_stored_record_when_claimed_then_generation_bumps_and_attempts_follow_the_sequencer(
    stored_seq: str, incoming: str, generation: int, attempts: int, deleting: bool
) -> None:
    # Given
    stored = stored_record(stored_seq, "failed", generation=generation, attempts=attempts)
    # When
    record = claimed_record(stored, "acme", "docs", "a.txt", update(incoming, deleting=deleting))
    # Then
    assert record.generation == generation + 1
    assert record.attempts == (attempts + 1 if incoming == stored_seq else 1)
    assert (record.sequencer, record.status) == (incoming, "deleting" if deleting else "processing")


def test_claim_update_is_what_a_conditional_write_sets_whatever_was_stored() -> None:
    values = claim_update("S", deleting=False, source="src", version_id="v", etag="e", size=1, at=AT)
    assert values.model_dump() == {
        "sequencer": "S", "sidecar": None, "status": "processing", "source": "src", "version_id": "v",
        "etag": "e", "size": 1, "error_code": "", "error_message": "", "lease_until": None, "updated_at": AT,
    }  # fmt: skip


# -- billing --------------------------------------------------------------------------------------
def test_given_any_instant_when_its_period_is_taken_then_it_is_the_utc_year_and_month() -> None:
    assert period_of(datetime(2026, 12, 31, 23, 59, tzinfo=UTC)) == "2026-12"
    assert period_of(datetime.fromisoformat("2027-01-01T00:30:00+01:00")) == "2026-12"
    assert period_of(datetime.fromisoformat("2026-12-31T20:00:00-05:00")) == "2027-01"


def test_the_current_period_is_now_in_utc() -> None:
    before = period_of(datetime.now(UTC))
    assert current_period() in {before, period_of(datetime.now(UTC))}
    assert len(current_period()) == len("YYYY-MM") and current_period()[4] == "-"


def test_given_runs_left_when_the_quota_is_checked_then_nothing_is_raised() -> None:
    check_quota(2, 3, "2026-03")
    check_quota(10**9, None, "2026-03")  # None: unlimited


def test_given_the_quota_used_up_when_checked_then_quota_exceeded_carries_limit_used_and_period() -> None:
    # Given / When
    with pytest.raises(errors.QuotaExceeded) as refused:
        check_quota(3, 3, "2026-03")
    # Then
    assert refused.value.details == {"limit": 3, "used": 3, "period": "2026-03"}


@given(st.integers(0, 10_000), st.one_of(st.none(), st.integers(0, 10_000)))
def test_the_quota_is_reached_exactly_when_runs_used_reach_the_limit(used: int, limit: int | None) -> None:
    reached = limit is not None and used >= limit
    assert quota_reached(used, limit) is reached
    if reached:
        with pytest.raises(errors.QuotaExceeded):
            check_quota(used, limit, "2026-03")
    else:
        check_quota(used, limit, "2026-03")


# -- API key hashes -------------------------------------------------------------------------------
@given(st.text())
def test_given_any_key_when_hashed_then_the_hash_is_storable(key: str) -> None:
    assert is_key_hash(hash_api_key(key))
    require_key_hash(hash_api_key(key), "key_1")


@pytest.mark.parametrize(
    "value",
    ["", "rl_live_secret", "A" * 64, "0" * 63, "0" * 65, "g" * 64, "0" * 32 + " " + "0" * 31],
    ids=["empty", "plaintext", "uppercase", "short", "long", "not-hex", "space"],
)
def test_given_anything_but_a_sha256_hex_digest_then_it_is_no_key_hash(value: str) -> None:
    assert not is_key_hash(value)
    with pytest.raises(ValueError, match="key_1"):
        require_key_hash(value, "key_1")


def test_given_a_fresh_api_key_then_the_key_itself_is_never_a_key_hash() -> None:
    key = new_api_key()
    assert not is_key_hash(key) and is_key_hash(hash_api_key(key))


# -- key times ------------------------------------------------------------------------------------
def test_times_are_fixed_width_utc_and_naive_means_utc() -> None:
    whole_second = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert timestamp(whole_second) == "2026-01-02T03:04:05.000000+00:00"
    assert timestamp(datetime(2026, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2)))) == timestamp(
        whole_second
    )
    assert timestamp(datetime(2026, 1, 2, 3, 4, 5)) == timestamp(whole_second)


offsets = st.integers(-14 * 60, 14 * 60).map(lambda minutes: timezone(timedelta(minutes=minutes)))
instants = st.datetimes(min_value=datetime(2000, 1, 2), max_value=datetime(2999, 12, 30), timezones=offsets)


@given(instants, instants)
def test_given_two_instants_when_stored_as_text_then_text_order_is_time_order(
    a: datetime, b: datetime
) -> None:
    # When
    ta, tb = timestamp(a), timestamp(b)
    # Then
    assert len(ta) == len(tb)
    assert (ta < tb) == (a < b) and (ta == tb) == (a == b)
    assert datetime.fromisoformat(ta) == a  # the models parse it back to the same instant


def test_given_a_touch_then_only_a_last_use_older_than_the_interval_is_overwritten() -> None:
    # Given / When
    cutoff = touch_cutoff(AT)
    # Then
    assert TOUCH_INTERVAL.total_seconds() == 60
    assert cutoff == timestamp(AT - TOUCH_INTERVAL)
    assert timestamp(AT - TOUCH_INTERVAL - timedelta(microseconds=1)) < cutoff  # stale: written
    assert not timestamp(AT - timedelta(seconds=59)) < cutoff  # recent: left alone
    assert touch_cutoff(AT, timedelta(hours=1)) == timestamp(AT - timedelta(hours=1))
