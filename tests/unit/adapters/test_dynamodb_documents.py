"""The DynamoDB document registry's request builders as plain dicts, and its error translation.

Error paths use ``botocore.stub.Stubber`` (a real client, no network) so the codes are the exact ones
DynamoDB sends; the stubber also checks every built request against the DynamoDB API model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.aws import documents as dd
from ragline.domain.documents import DocumentRecord, normalise_sequencer

pytestmark = pytest.mark.unit
AT = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
SEQ = normalise_sequencer("0055AED6DCD90281E5")
TABLE = "documents"


def record(**kw: Any) -> DocumentRecord:
    base = {"tenant_id": "acme", "namespace_id": "docs", "document_id": "a.txt", "sequencer": SEQ}
    return DocumentRecord(
        **(base | {"generation": 3, "attempts": 2, "created_at": AT, "updated_at": AT} | kw)
    )


def placeholders(request: dict[str, Any], mark: str) -> set[str]:
    text = " ".join(v for k, v in request.items() if k.endswith("Expression"))
    return set(re.findall(re.escape(mark) + r"\w+", text))


# -- builders ---------------------------------------------------------------------------------------
def test_a_first_claim_is_put_only_if_no_item_exists() -> None:
    rq = dd.claim_put_request(TABLE, record(generation=1, attempts=1, status="processing"), None)
    assert rq["ConditionExpression"] == "attribute_not_exists(#pk)"
    assert rq["Item"]["pk"] == {"S": "DOC#acme#docs"} and rq["Item"]["generation"] == {"N": "1"}


def test_a_claim_is_put_only_while_the_item_is_the_one_it_was_decided_on() -> None:
    stored = dd.record_to_item(record(status="processing", lease_until=AT))
    rq = dd.claim_put_request(TABLE, record(generation=4, status="processing"), stored)
    assert rq["ConditionExpression"] == (
        "#generation = :generation AND #status = :status AND #updated_at = :updated_at"
    )
    assert rq["ExpressionAttributeValues"] == {
        ":generation": {"N": "3"},
        ":status": {"S": "processing"},
        ":updated_at": {"S": AT.isoformat()},  # the stored text itself, not a re-encoding
    }
    assert rq["Item"]["generation"] == {"N": "4"}


@pytest.mark.parametrize(
    "request_",
    [
        dd.claim_put_request(TABLE, record(), None),
        dd.claim_put_request(TABLE, record(generation=4), dd.record_to_item(record())),
        dd.put_if_generation_request(TABLE, record()),
        dd.list_request(TABLE, "acme", "docs"),
    ],
    ids=["first_claim", "claim", "put_if_generation", "list"],
)
def test_every_placeholder_is_defined_and_used(request_: dict[str, Any]) -> None:
    # DynamoDB rejects both an undefined and an unused name or value.
    assert placeholders(request_, "#") == set(request_.get("ExpressionAttributeNames", {}))
    assert placeholders(request_, ":") == set(request_.get("ExpressionAttributeValues", {}))


def test_complete_and_fail_put_the_whole_record_only_at_its_generation() -> None:
    rq = dd.put_if_generation_request(TABLE, record(status="ready", chunk_count=4))
    assert rq["ConditionExpression"] == "#generation = :mine"
    assert rq["ExpressionAttributeValues"] == {":mine": {"N": "3"}}
    item = rq["Item"]
    assert (item["pk"], item["sk"]) == ({"S": "DOC#acme#docs"}, {"S": "a.txt"})
    assert item["status"] == {"S": "ready"} and item["chunk_count"] == {"N": "4"}
    assert item["attempts"] == {"N": "2"} and item["origin"] == {"S": "s3"}
    assert item["updated_at"] == {"S": AT.isoformat()} and "lease_until" not in item


def test_item_codec_round_trips_a_lease() -> None:
    r = record(status="processing", lease_until=AT)
    item = dd.record_to_item(r)
    assert item["lease_until"] == {"S": AT.isoformat()} and dd.record_from_item(item) == r


def test_items_written_before_the_origin_existed_read_in_the_one_ordering() -> None:
    """An API write stored a wall-clock sequencer (18ED…) above every S3 one: it reads as no S3 order;
    an S3 item keeps its sequencer; both keep their per-sequencer attempt counter."""
    wall_clock = normalise_sequencer("18ED0A5B3C2D1E0F")
    legacy_api = dd.record_to_item(record(source="api:", sequencer=wall_clock))
    legacy_s3 = dd.record_to_item(record(source="s3://b/acme/docs/a.txt"))
    for item, seq in ((legacy_api, wall_clock), (legacy_s3, SEQ)):
        del item["origin"], item["attempts"]
        item[f"attempts#{seq}"] = {"N": "2"}
    api = dd.record_from_item(legacy_api)
    assert (api.origin, api.sequencer, api.attempts) == ("local", "", 2)
    s3 = dd.record_from_item(legacy_s3)
    assert (s3.origin, s3.sequencer, s3.attempts) == ("s3", SEQ, 2)


def test_item_codec_round_trips_a_record() -> None:
    r = record(status="failed", error_code="x", error_message="y", size=9, pages=2, content_hash="h")
    assert dd.record_from_item(dd.record_to_item(r)) == r


def test_item_codec_covers_every_record_field() -> None:
    # A field added to DocumentRecord but not to the codec would be dropped silently on every write.
    item = dd.record_to_item(record(lease_until=AT))  # the one optional attribute, set
    assert set(DocumentRecord.model_fields) <= set(item)


def test_list_is_a_consistent_query_on_the_partition_ascending() -> None:
    assert dd.list_request(TABLE, "acme", "docs") == {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": "DOC#acme#docs"}},
        "ScanIndexForward": True,
        "ConsistentRead": True,
    }
    start = {"pk": {"S": "DOC#acme#docs"}, "sk": {"S": "m"}}
    assert dd.list_request(TABLE, "acme", "docs", start)["ExclusiveStartKey"] == start


def test_a_hash_in_tenant_or_namespace_would_alias_keys_and_is_refused() -> None:
    with pytest.raises(ValueError, match="'#'"):
        dd.document_key("a#b", "c", "d")


# -- sending: paging and errors -----------------------------------------------------------------------
class PagedQueryClient:
    """A fake client serving a namespace in pages of one item."""

    def __init__(self, records: list[DocumentRecord]) -> None:
        self.items = [dd.record_to_item(r) for r in records]
        self.requests: list[dict[str, Any]] = []

    def query(self, **request: Any) -> dict[str, Any]:
        self.requests.append(request)
        i = 0 if "ExclusiveStartKey" not in request else int(request["ExclusiveStartKey"]["i"]) + 1
        page: dict[str, Any] = {"Items": self.items[i : i + 1]}
        if i + 1 < len(self.items):
            page["LastEvaluatedKey"] = {"i": str(i)}
        return page


def test_list_follows_every_page() -> None:
    client = PagedQueryClient([record(document_id=d) for d in ("a", "b", "c")])
    got = dd.DynamoDbDocumentRegistry(TABLE, client=client).list("acme", "docs")
    assert [r.document_id for r in got] == ["a", "b", "c"] and len(client.requests) == 3


@pytest.fixture
def stubbed() -> Iterator[tuple[dd.DynamoDbDocumentRegistry, Any]]:
    import boto3
    from botocore.stub import Stubber

    client = boto3.session.Session().client(
        "dynamodb", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with Stubber(client) as stubber:
        yield dd.DynamoDbDocumentRegistry(TABLE, client=client), stubber
        stubber.assert_no_pending_responses()


@pytest.mark.parametrize(
    ("code", "status", "expected"),
    [
        ("ProvisionedThroughputExceededException", 400, errors.Throttled),
        ("ThrottlingException", 400, errors.Throttled),
        ("RequestLimitExceeded", 400, errors.Throttled),
        ("InternalServerError", 500, errors.DependencyUnavailable),
        ("ServiceUnavailable", 503, errors.DependencyUnavailable),
        ("ValidationException", 400, errors.DependencyFailed),
        ("ResourceNotFoundException", 400, errors.DependencyFailed),
    ],
)
def test_vendor_errors_become_ragline_errors_by_code(
    stubbed: tuple[dd.DynamoDbDocumentRegistry, Any], code: str, status: int, expected: type[Exception]
) -> None:
    registry, stubber = stubbed
    stubber.add_client_error("get_item", service_error_code=code, http_status_code=status)
    with pytest.raises(expected) as raised:
        registry.claim("acme", "docs", "a.txt", SEQ)
    assert type(raised.value) is expected and raised.value.details["aws_code"] == code  # type: ignore[attr-defined]


def get_item_params() -> dict[str, Any]:
    return dd.get_request(TABLE, "acme", "docs", "a.txt")


def test_refused_claim_returns_the_stored_item_and_writes_nothing(
    stubbed: tuple[dd.DynamoDbDocumentRegistry, Any],
) -> None:
    registry, stubber = stubbed
    stored = record(sequencer=normalise_sequencer("0056"), status="ready")
    stubber.add_response("get_item", {"Item": dd.record_to_item(stored)}, get_item_params())
    c = registry.claim("acme", "docs", "a.txt", SEQ)
    assert (c.granted, c.reason, c.record) == (False, "stale", stored)


def test_granted_claim_request_is_valid_for_the_api_model(
    stubbed: tuple[dd.DynamoDbDocumentRegistry, Any],
) -> None:
    registry, stubber = stubbed
    stubber.add_response("get_item", {}, get_item_params())
    stubber.add_response("put_item", {})
    c = registry.claim("acme", "docs", "a.txt", SEQ, source="s3://b/k", lease_seconds=60)
    assert c.granted and (c.record.generation, c.record.attempts, c.record.status) == (1, 1, "processing")
    assert c.record.lease_until == c.record.updated_at + timedelta(seconds=60)


def test_a_claim_overtaken_between_its_read_and_its_write_decides_again_on_what_won(
    stubbed: tuple[dd.DynamoDbDocumentRegistry, Any],
) -> None:
    """Two copies of one event read the same expired claim; the other copy's put lands first, so
    this one's conditional put fails, and on the new item (a live lease) it is busy — never granted
    from the state it first read (what moto, serialising requests, cannot show)."""
    registry, stubber = stubbed
    expired = record(status="processing", lease_until=AT, updated_at=AT)
    taken = record(status="processing", generation=4, lease_until=datetime.now(UTC) + timedelta(minutes=5))
    stubber.add_response("get_item", {"Item": dd.record_to_item(expired)}, get_item_params())
    stubber.add_client_error("put_item", service_error_code="ConditionalCheckFailedException")
    stubber.add_response("get_item", {"Item": dd.record_to_item(taken)}, get_item_params())
    c = registry.claim("acme", "docs", "a.txt", SEQ)
    assert (c.granted, c.reason, c.record) == (False, "busy", taken)


def test_a_claim_that_never_stops_being_overtaken_is_throttled_not_granted(
    stubbed: tuple[dd.DynamoDbDocumentRegistry, Any],
) -> None:
    registry, stubber = stubbed
    for _ in range(dd.CLAIM_TRIES):
        stubber.add_response("get_item", {}, get_item_params())
        stubber.add_client_error("put_item", service_error_code="ConditionalCheckFailedException")
    with pytest.raises(errors.Throttled):
        registry.claim("acme", "docs", "a.txt", SEQ)


def test_complete_after_a_newer_claim_is_false(stubbed: tuple[dd.DynamoDbDocumentRegistry, Any]) -> None:
    registry, stubber = stubbed
    stubber.add_client_error("put_item", service_error_code="ConditionalCheckFailedException")
    assert registry.complete(record(status="ready")) is False


class RaisingClient:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def get_item(self, **request: Any) -> dict[str, Any]:
        raise self.exc


def transport_errors() -> list[Any]:
    from botocore import exceptions as ex

    url, down = "https://dynamodb.us-east-1.amazonaws.com", errors.DependencyUnavailable
    return [
        pytest.param(ex.EndpointConnectionError(endpoint_url=url), down, id="endpoint"),
        pytest.param(ex.ConnectTimeoutError(endpoint_url=url), down, id="connect"),
        pytest.param(ex.ReadTimeoutError(endpoint_url=url), down, id="read"),
        pytest.param(ex.NoCredentialsError(), errors.DependencyFailed, id="no-credentials"),
    ]


@pytest.mark.parametrize(("exc", "expected"), transport_errors())
def test_transport_errors_are_translated_by_type(exc: Exception, expected: type[Exception]) -> None:
    with pytest.raises(expected):
        dd.DynamoDbDocumentRegistry(TABLE, client=RaisingClient(exc)).get("acme", "docs", "a.txt")


def test_construction_does_no_io_and_builds_no_client() -> None:
    registry = dd.DynamoDbDocumentRegistry(TABLE)
    assert registry._client._client is None  # built on first use only
