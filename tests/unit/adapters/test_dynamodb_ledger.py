"""The DynamoDB usage ledger's request builders as plain dicts, and how it reads cancelled transactions.

Error paths use ``botocore.stub.Stubber`` (a real client, no network) so the codes and the
``CancellationReasons`` are shaped exactly as DynamoDB sends them; the stubber also checks every built
request against the DynamoDB API model.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from hashlib import sha256
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.aws import ledger as dl
from ragline.domain.billing import CompletedRun
from ragline.domain.models import RunUsage
from tests.support.dynamodb_stub import AT, TABLE

pytestmark = pytest.mark.unit
PERIOD = "2026-03"
USAGE = RunUsage(retrievals=2, reranks=1, llm_input_tokens=300, llm_output_tokens=40)
OK = {"Code": "None"}
FAILED = {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}


def commit_request(limit: int | None = 5, **kw: Any) -> dict[str, Any]:
    return dl.commit_request(TABLE, "acme", "run-1", USAGE, period=PERIOD, limit=limit, **kw)


def placeholders(op: dict[str, Any], mark: str) -> set[str]:
    text = " ".join(v for k, v in op.items() if k.endswith("Expression"))
    return set(re.findall(re.escape(mark) + r"\w+", text))


# -- builders -------------------------------------------------------------------------------------
def test_commit_is_one_transaction_of_a_new_marker_and_a_counter_add() -> None:
    rq = commit_request()
    put, update = rq["TransactItems"][0]["Put"], rq["TransactItems"][1]["Update"]
    assert [list(i) for i in rq["TransactItems"]] == [["Put"], ["Update"]]
    assert put["TableName"] == update["TableName"] == TABLE

    # new, or completing this run's reservation; a completed marker (or one from before states) fails
    assert put["ConditionExpression"] == "attribute_not_exists(#pk) OR #state = :in_progress"
    assert put["ExpressionAttributeNames"] == {"#pk": "pk", "#state": "state"}
    assert put["ExpressionAttributeValues"] == {":in_progress": {"S": "in_progress"}}
    assert put["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"
    item = put["Item"]
    assert (item["pk"], item["sk"]) == ({"S": f"RUN#acme#{sha256(b'run-1').hexdigest()}"}, {"S": "RUN"})
    assert item["state"] == {"S": "completed"} and "result" not in item
    assert item["tenant_id"] == {"S": "acme"} and item["run_id"] == {"S": "run-1"}
    assert item["period"] == {"S": PERIOD}
    assert item["retrievals"] == {"N": "2"} and item["llm_input_tokens"] == {"N": "300"}
    assert item["pages"] == {"N": "0"} and item["over_quota"] == {"BOOL": False}
    assert item["expires_at"] == {"N": str(int(datetime(2027, 4, 5, tzinfo=UTC).timestamp()))}  # +400 days

    assert update["Key"] == {"pk": {"S": "TENANT#acme"}, "sk": {"S": f"PERIOD#{PERIOD}"}}
    assert update["UpdateExpression"] == (
        "ADD #runs :one, #retrievals :retrievals, #reranks :reranks, #llm_input_tokens :llm_input_tokens,"
        " #llm_output_tokens :llm_output_tokens, #embedded_tokens :embedded_tokens, #pages :pages,"
        " #llm_cached_input_tokens :llm_cached_input_tokens"
    )
    assert update["ConditionExpression"] == "attribute_not_exists(#runs) OR #runs < :limit"
    values = update["ExpressionAttributeValues"]
    assert (values[":one"], values[":limit"], values[":retrievals"]) == ({"N": "1"}, {"N": "5"}, {"N": "2"})
    assert update["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"


def test_an_uncharged_ending_completes_the_marker_and_leaves_the_counter_alone() -> None:
    rq = dl.uncharged_request(TABLE, "acme", "run-1", period=PERIOD, fingerprint="fp-1", result="{}")
    assert [list(i) for i in rq["TransactItems"]] == [["Put"]]  # no counter Update: no run counted
    put = rq["TransactItems"][0]["Put"]
    # the same condition as a commit's Put: whichever ending comes first wins
    assert put["ConditionExpression"] == commit_request()["TransactItems"][0]["Put"]["ConditionExpression"]
    item = put["Item"]
    assert (item["state"], item["charged"], item["result"]) == (
        {"S": "completed"}, {"BOOL": False}, {"S": "{}"}
    )  # fmt: skip
    assert all(item[f] == {"N": "0"} for f in RunUsage.model_fields)
    assert rq["ClientRequestToken"] not in {
        commit_request()["ClientRequestToken"],
        commit_request(limit=None, over_quota=True)["ClientRequestToken"],
    }
    assert placeholders(put, "#") == set(put["ExpressionAttributeNames"])


def test_every_run_usage_field_is_added_and_stored() -> None:
    # A field added to RunUsage but not to the ledger would never be billed.
    rq = commit_request()
    update, item = rq["TransactItems"][1]["Update"], rq["TransactItems"][0]["Put"]["Item"]
    assert {f"#{f}" for f in RunUsage.model_fields} < set(update["ExpressionAttributeNames"])
    assert set(RunUsage.model_fields) < set(item)


def test_without_a_limit_the_counter_has_no_quota_condition() -> None:
    update = commit_request(limit=None)["TransactItems"][1]["Update"]
    assert "ConditionExpression" not in update and ":limit" not in update["ExpressionAttributeValues"]
    assert "ReturnValuesOnConditionCheckFailure" not in update
    put = commit_request(limit=None)["TransactItems"][0]["Put"]
    assert put["ConditionExpression"].startswith("attribute_not_exists(#pk)")  # exactly once regardless


def test_the_over_quota_charge_keeps_the_marker_guard_drops_the_quota_and_flags_the_marker() -> None:
    rq = commit_request(limit=None, over_quota=True)
    put, update = rq["TransactItems"][0]["Put"], rq["TransactItems"][1]["Update"]
    assert put["ConditionExpression"] == commit_request()["TransactItems"][0]["Put"]["ConditionExpression"]
    assert "ConditionExpression" not in update
    assert put["Item"]["over_quota"] == {"BOOL": True}
    assert rq["ClientRequestToken"] != commit_request()["ClientRequestToken"]  # other parameters
    with pytest.raises(ValueError):
        commit_request(limit=3, over_quota=True)


@pytest.mark.parametrize(
    "op",
    [
        commit_request()["TransactItems"][0]["Put"],
        commit_request()["TransactItems"][1]["Update"],
        commit_request(limit=None)["TransactItems"][1]["Update"],
    ],
    ids=["put", "update", "update-unlimited"],
)
def test_every_placeholder_is_defined_and_used(op: dict[str, Any]) -> None:
    # DynamoDB rejects both an undefined and an unused name or value.
    assert placeholders(op, "#") == set(op.get("ExpressionAttributeNames", {}))
    assert placeholders(op, ":") == set(op.get("ExpressionAttributeValues", {}))


def test_client_token_is_36_chars_stable_and_per_tenant_and_run() -> None:
    token = dl.client_token("acme", "run-1")
    assert len(token) == 36 and re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", token)
    assert token == dl.client_token("acme", "run-1") == commit_request()["ClientRequestToken"]
    assert commit_request(limit=9)["ClientRequestToken"] == token  # derived from the run, not the numbers
    assert len({token, dl.client_token("globex", "run-1"), dl.client_token("acme", "run-2")}) == 3
    assert len(dl.client_token("t" * 128, "r" * 500)) == 36


def test_identical_commits_build_identical_requests() -> None:
    # The expiry comes from the period, not the clock: a retry is byte-identical, so the token dedupes it.
    assert commit_request() == commit_request()


def test_reads_are_strongly_consistent() -> None:
    assert dl.get_counter_request(TABLE, "acme", PERIOD) == {
        "TableName": TABLE,
        "Key": {"pk": {"S": "TENANT#acme"}, "sk": {"S": f"PERIOD#{PERIOD}"}},
        "ConsistentRead": True,
    }
    assert dl.get_marker_request(TABLE, "acme", "r")["ConsistentRead"] is True


def test_a_hash_in_the_tenant_would_alias_keys_and_is_refused() -> None:
    with pytest.raises(ValueError, match="'#'"):
        dl.marker_key("a#b", "r")
    with pytest.raises(ValueError, match="'#'"):
        dl.counter_key("a#b", PERIOD)


def test_period_is_utc_year_and_month() -> None:
    assert dl.period_of(datetime(2026, 12, 31, 23, 59, tzinfo=UTC)) == "2026-12"
    assert dl.period_of(datetime.fromisoformat("2027-01-01T00:30:00+01:00")) == "2026-12"


@pytest.mark.parametrize(
    ("codes", "outcome"),
    [
        (["ConditionalCheckFailed", "None"], "already_charged"),
        (["ConditionalCheckFailed", "ConditionalCheckFailed"], "already_charged"),  # charged wins
        (["None", "ConditionalCheckFailed"], "over_quota"),
        (["TransactionConflict", "None"], "conflict"),
        (["None", "ThrottlingError"], "throttled"),
        (["None", "ProvisionedThroughputExceeded"], "throttled"),
        (["ItemCollectionSizeLimitExceeded", "None"], "failed"),
        (["ValidationError", "None"], "failed"),
        ([], "failed"),
    ],
)
def test_cancellation_reasons_are_read_by_position(codes: list[str], outcome: str) -> None:
    assert dl.classify_cancellation([{"Code": c} for c in codes]) == outcome


# -- sending, against a stubbed client ------------------------------------------------------------
def cancel(stubber: Any, reasons: list[dict[str, Any]], expected: dict[str, Any] | None = None) -> None:
    stubber.add_client_error(
        "transact_write_items",
        service_error_code="TransactionCanceledException",
        service_message="Transaction cancelled",
        http_status_code=400,
        modeled_fields={"CancellationReasons": reasons},
        expected_params=expected,
    )


def marker(usage: RunUsage) -> dict[str, Any]:
    return dl.marker_item("acme", "run-1", usage, period=PERIOD)


def test_a_first_commit_sends_exactly_the_built_transaction(stubbed: Any) -> None:
    ledger, stubber, _ = stubbed
    stubber.add_response("transact_write_items", {}, expected_params=commit_request())
    assert ledger.commit("acme", "run-1", USAGE, 5) == USAGE


def test_reason_0_means_already_charged_and_answers_with_the_stored_charge(stubbed: Any) -> None:
    ledger, stubber, _ = stubbed
    first = RunUsage(retrievals=1)
    cancel(stubber, [FAILED | {"Item": marker(first)}, OK])
    assert ledger.commit("acme", "run-1", USAGE, 5) == first  # no second request, no read


def test_reason_0_without_the_item_reads_the_marker_consistently(stubbed: Any) -> None:
    ledger, stubber, _ = stubbed
    first = RunUsage(pages=4)
    cancel(stubber, [FAILED, OK])
    stubber.add_response(
        "get_item", {"Item": marker(first)}, expected_params=dl.get_marker_request(TABLE, "acme", "run-1")
    )
    assert ledger.commit("acme", "run-1", USAGE, 5) == first


def test_reason_1_means_over_quota_and_charges_anyway_without_the_quota(
    stubbed: Any, caplog: pytest.LogCaptureFixture
) -> None:
    ledger, stubber, _ = stubbed
    counter = {"pk": {"S": "TENANT#acme"}, "sk": {"S": f"PERIOD#{PERIOD}"}, "runs": {"N": "5"}}
    cancel(stubber, [OK, FAILED | {"Item": counter}], expected=commit_request(5))
    stubber.add_response(
        "transact_write_items", {}, expected_params=commit_request(limit=None, over_quota=True)
    )
    with caplog.at_level("WARNING", logger=dl.__name__):
        assert ledger.commit("acme", "run-1", USAGE, 5) == USAGE
    assert "went over its run quota" in caplog.text and "5 of 5" in caplog.text


def test_over_quota_then_charged_by_someone_else_answers_with_their_charge(stubbed: Any) -> None:
    ledger, stubber, _ = stubbed
    theirs = RunUsage(retrievals=7)
    cancel(stubber, [OK, FAILED])
    cancel(stubber, [FAILED | {"Item": marker(theirs)}, OK], expected=commit_request(None, over_quota=True))
    assert ledger.commit("acme", "run-1", USAGE, 5) == theirs


def test_a_replay_with_other_numbers_is_a_parameter_mismatch_answered_from_the_marker(stubbed: Any) -> None:
    ledger, stubber, _ = stubbed
    first = RunUsage(retrievals=1)
    stubber.add_client_error("transact_write_items", "IdempotentParameterMismatchException")
    stubber.add_response("get_item", {"Item": marker(first)})
    assert ledger.commit("acme", "run-1", USAGE, 5) == first


def test_a_mismatch_without_a_marker_resends_without_the_token(stubbed: Any) -> None:
    # The token's earlier use did not charge (it was cancelled): the marker's condition still guards.
    ledger, stubber, _ = stubbed
    stubber.add_client_error("transact_write_items", "IdempotentParameterMismatchException")
    stubber.add_response("get_item", {})
    tokenless = {k: v for k, v in commit_request().items() if k != "ClientRequestToken"}
    stubber.add_response("transact_write_items", {}, expected_params=tokenless)
    assert ledger.commit("acme", "run-1", USAGE, 5) == USAGE


def test_transaction_in_progress_and_conflicts_are_retried_after_a_short_wait(stubbed: Any) -> None:
    ledger, stubber, sleeps = stubbed
    stubber.add_client_error("transact_write_items", "TransactionInProgressException")
    cancel(stubber, [OK, {"Code": "TransactionConflict"}])
    stubber.add_response("transact_write_items", {}, expected_params=commit_request())
    assert ledger.commit("acme", "run-1", USAGE, 5) == USAGE
    assert len(sleeps) == 2 and all(0 <= s <= 0.05 for s in sleeps)


def test_endless_contention_gives_up_as_throttled(stubbed: Any) -> None:
    ledger, stubber, sleeps = stubbed
    for _ in range(6):
        cancel(stubber, [{"Code": "TransactionConflict"}, OK])
    with pytest.raises(errors.Throttled):
        ledger.commit("acme", "run-1", USAGE, 5)
    assert len(sleeps) == 5


@pytest.mark.parametrize(
    ("reasons", "expected"),
    [
        ([OK, {"Code": "ThrottlingError"}], errors.Throttled),
        ([{"Code": "ValidationError", "Message": "bad"}, OK], errors.DependencyFailed),
    ],
)
def test_other_cancellations_become_ragline_errors(
    stubbed: Any, reasons: list[dict[str, Any]], expected: type[Exception]
) -> None:
    ledger, stubber, _ = stubbed
    cancel(stubber, reasons)
    with pytest.raises(expected) as raised:
        ledger.commit("acme", "run-1", USAGE)
    assert type(raised.value) is expected


@pytest.mark.parametrize(
    ("code", "status", "expected"),
    [
        ("ProvisionedThroughputExceededException", 400, errors.Throttled),
        ("ThrottlingException", 400, errors.Throttled),
        ("InternalServerError", 500, errors.DependencyUnavailable),
        ("ResourceNotFoundException", 400, errors.DependencyFailed),
    ],
)
def test_vendor_errors_become_ragline_errors_by_code(
    stubbed: Any, code: str, status: int, expected: type[Exception]
) -> None:
    ledger, stubber, _ = stubbed
    for _ in range(2):
        stubber.add_client_error("transact_write_items", service_error_code=code, http_status_code=status)
    with pytest.raises(expected):
        ledger.commit("acme", "run-1", USAGE)
    with pytest.raises(expected):
        ledger.reserve("acme", "run-1", 3)


def reserve_request(limit: int | None = 3, fingerprint: str = "fp-1", at: datetime = AT) -> dict[str, Any]:
    return dl.reserve_request(TABLE, "acme", "run-1", fingerprint, now=at, limit=limit)


def test_reserve_is_one_conditional_marker_put_and_a_counter_check_without_a_token() -> None:
    rq = reserve_request()
    put, check = rq["TransactItems"][0]["Put"], rq["TransactItems"][1]["ConditionCheck"]
    assert "ClientRequestToken" not in rq  # two identical reservations must not both be acknowledged
    item = put["Item"]
    assert item["pk"] == {"S": f"RUN#acme#{sha256(b'run-1').hexdigest()}"}
    assert (item["state"], item["fingerprint"]) == ({"S": "in_progress"}, {"S": "fp-1"})
    assert item["started_at"] == {"N": str(int(AT.timestamp()))}
    assert put["ConditionExpression"] == (
        "attribute_not_exists(#pk) OR (#state = :in_progress"
        " AND #started_at < :stale_before AND #fingerprint = :fingerprint) OR (#state = :completed"
        " AND #charged = :false AND attribute_not_exists(#result) AND #fingerprint = :fingerprint)"
    )  # a run that ended uncharged without a result may be run again by the same request
    stale_before = int(put["ExpressionAttributeValues"][":stale_before"]["N"])
    assert stale_before == int(AT.timestamp()) - 15 * 60 + 1  # a marker 15 minutes old may be taken over
    assert check["Key"] == dl.counter_key("acme", PERIOD)
    assert check["ConditionExpression"] == "attribute_not_exists(#runs) OR #runs < :limit"
    assert check["ExpressionAttributeValues"] == {":limit": {"N": "3"}}
    assert [list(i) for i in reserve_request(limit=None)["TransactItems"]] == [["Put"]]
    for op in (put, check):
        assert placeholders(op, "#") == set(op["ExpressionAttributeNames"])
        assert placeholders(op, ":") == set(op["ExpressionAttributeValues"])


def test_a_2100_character_key_makes_a_bounded_marker_key() -> None:
    key = dl.marker_key("t" * 128, "k" * 2100)["pk"]["S"]
    assert len(key.encode()) < 300 and key == dl.marker_key("t" * 128, "k" * 2100)["pk"]["S"]
    assert key != dl.marker_key("t" * 128, "k" * 2099)["pk"]["S"]


def in_progress(fingerprint: str = "fp-1", started: datetime = AT) -> dict[str, Any]:
    return reserve_request(fingerprint=fingerprint, at=started)["TransactItems"][0]["Put"]["Item"]


def test_reserve_sends_the_built_transaction_and_refuses_at_the_limit(stubbed: Any) -> None:
    ledger, stubber, _ = stubbed
    stubber.add_response("transact_write_items", {}, expected_params=reserve_request())
    assert ledger.reserve("acme", "run-1", 3, "fp-1") is None
    cancel(stubber, [OK, FAILED | {"Item": {"runs": {"N": "3"}}}], expected=reserve_request())
    with pytest.raises(errors.QuotaExceeded) as refused:
        ledger.reserve("acme", "run-1", 3, "fp-1")
    assert refused.value.details == {"limit": 3, "used": 3, "period": PERIOD}


def test_reserve_of_a_completed_run_returns_its_record_even_over_quota(stubbed: Any) -> None:
    ledger, stubber, _ = stubbed
    done = dl.marker_item("acme", "run-1", USAGE, period=PERIOD, fingerprint="fp-1", result='{"a":1}')
    cancel(stubber, [FAILED | {"Item": done}, FAILED])
    assert ledger.reserve("acme", "run-1", 3, "fp-1") == CompletedRun(usage=USAGE, result='{"a":1}')


@pytest.mark.parametrize(
    ("old", "expected"),
    [
        (in_progress(), errors.RunInProgress),
        (in_progress("fp-other"), errors.IdempotencyKeyReused),
        (
            dl.marker_item("acme", "run-1", USAGE, period=PERIOD, fingerprint="fp-other"),
            errors.IdempotencyKeyReused,
        ),
    ],
    ids=["running", "running-other-request", "completed-other-request"],
)
def test_reserve_of_a_known_run_refuses_by_its_marker(
    stubbed: Any, old: dict[str, Any], expected: type[Exception]
) -> None:
    ledger, stubber, _ = stubbed
    cancel(stubber, [FAILED | {"Item": old}, OK])
    with pytest.raises(expected):
        ledger.reserve("acme", "run-1", 3, "fp-1")


def test_reserve_of_a_marker_from_before_states_is_a_replay(stubbed: Any) -> None:
    ledger, stubber, _ = stubbed
    legacy = {k: v for k, v in marker(USAGE).items() if k not in ("state", "fingerprint")}
    cancel(stubber, [FAILED | {"Item": legacy}])
    assert ledger.reserve("acme", "run-1", None, "fp-1") == CompletedRun(usage=USAGE)


def test_period_usage_of_a_missing_counter_is_zero(stubbed: Any) -> None:
    ledger, stubber, _ = stubbed
    stubber.add_response("get_item", {})
    stubber.add_response("get_item", {})
    assert ledger.period_usage("acme", PERIOD) == RunUsage()
    assert ledger.period_runs("acme", PERIOD) == 0
