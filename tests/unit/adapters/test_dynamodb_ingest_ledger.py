"""The DynamoDB ledger's ingestion record: its request as a plain dict, and how it reads cancellations.

Error paths use ``botocore.stub.Stubber`` (a real client, no network), as in ``test_dynamodb_ledger``.
"""

from __future__ import annotations

import re
from hashlib import sha256
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.aws import ledger as dl
from ragline.domain.models import IngestUsage
from tests.support.dynamodb_stub import TABLE

pytestmark = pytest.mark.unit
PERIOD = "2026-03"
ENTRY = "ingest#docs#report.pdf#0123ABC"
USAGE = IngestUsage(documents=1, chunks=12, pages=3, embedded_tokens=900)
OK = {"Code": "None"}
FAILED = {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}


def record_request(entry: str = ENTRY) -> dict[str, Any]:
    return dl.record_ingest_request(TABLE, "acme", entry, USAGE, period=PERIOD)


# -- builder --------------------------------------------------------------------------------------
def test_record_is_one_transaction_of_a_new_marker_and_an_add_to_the_ingestion_fields() -> None:
    rq = record_request()
    assert "ClientRequestToken" not in rq  # a replay must be told apart (False), not acknowledged
    put, update = rq["TransactItems"][0]["Put"], rq["TransactItems"][1]["Update"]
    assert put["TableName"] == update["TableName"] == TABLE
    assert put["ConditionExpression"] == "attribute_not_exists(#pk)"
    item = put["Item"]
    digest = sha256(ENTRY.encode()).hexdigest()
    assert (item["pk"], item["sk"]) == ({"S": f"INGEST#acme#{digest}"}, {"S": "INGEST"})
    assert item["entry_id"] == {"S": ENTRY} and item["period"] == {"S": PERIOD}
    assert item["expires_at"] == {"N": str(dl.marker_expiry(PERIOD))}
    assert (item["chunks"], item["embedded_tokens"]) == ({"N": "12"}, {"N": "900"})

    assert update["Key"] == dl.counter_key("acme", PERIOD)
    assert "ConditionExpression" not in update  # never refused: ingestion is not under the run quota
    names = update["ExpressionAttributeNames"]
    assert set(names.values()) == {
        "ingested_documents", "ingested_chunks", "ingested_pages", "ingested_embedded_tokens"
    }  # fmt: skip
    assert "runs" not in names.values()  # not a run
    assert update["ExpressionAttributeValues"][":pages"] == {"N": "3"}


@pytest.mark.parametrize("kind", ["Put", "Update"])
def test_every_placeholder_is_defined_and_used(kind: str) -> None:
    op = next(i[kind] for i in record_request()["TransactItems"] if kind in i)
    text = " ".join(v for k, v in op.items() if k.endswith("Expression"))
    assert set(re.findall(r"#\w+", text)) == set(op.get("ExpressionAttributeNames", {}))
    assert set(re.findall(r":\w+", text)) == set(op.get("ExpressionAttributeValues", {}))


def test_a_long_entry_makes_a_bounded_key_that_never_aliases_a_run_marker() -> None:
    key = dl.ingest_marker_key("acme", "e" * 2100)
    assert len(key["pk"]["S"]) < 100
    assert dl.ingest_marker_key("acme", "x")["pk"] != dl.marker_key("acme", "x")["pk"]


def test_counter_items_read_as_ingestion() -> None:
    item = {"runs": {"N": "4"}, "pages": {"N": "9"}, "ingested_pages": {"N": "3"}}
    assert dl.ingestion_from_item(item) == IngestUsage(pages=3)
    assert dl.ingestion_from_item(None) == IngestUsage()


# -- sending --------------------------------------------------------------------------------------
def cancel(stubber: Any, reasons: list[dict[str, Any]]) -> None:
    stubber.add_client_error(
        "transact_write_items",
        service_error_code="TransactionCanceledException",
        service_message="Transaction cancelled",
        http_status_code=400,
        modeled_fields={"CancellationReasons": reasons},
    )


def test_a_first_record_sends_the_built_transaction_and_says_true(stubbed: Any) -> None:
    ledger, stubber, _ = stubbed
    stubber.add_response("transact_write_items", {}, expected_params=record_request())
    assert ledger.record_ingest("acme", ENTRY, USAGE) is True


def test_reason_0_means_already_recorded(stubbed: Any) -> None:
    ledger, stubber, sleeps = stubbed
    cancel(stubber, [FAILED, OK])
    assert ledger.record_ingest("acme", ENTRY, USAGE) is False
    assert sleeps == []


def test_conflicts_are_retried_then_give_up_as_throttled(stubbed: Any) -> None:
    ledger, stubber, sleeps = stubbed
    stubber.add_client_error("transact_write_items", "TransactionInProgressException")
    cancel(stubber, [OK, {"Code": "TransactionConflict"}])
    stubber.add_response("transact_write_items", {})
    assert ledger.record_ingest("acme", ENTRY, USAGE) is True
    assert len(sleeps) == 2
    for _ in range(6):
        cancel(stubber, [{"Code": "TransactionConflict"}, OK])
    with pytest.raises(errors.Throttled):
        ledger.record_ingest("acme", ENTRY, USAGE)


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
        ledger.record_ingest("acme", ENTRY, USAGE)
    assert type(raised.value) is expected
