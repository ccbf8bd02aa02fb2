"""The DynamoDB tenant registry's request builders and item codec as plain dicts, and its errors.

Error paths use ``botocore.stub.Stubber`` (a real client, no network) so the codes are the exact ones
DynamoDB sends; the stubber also checks every built request against the DynamoDB API model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.aws import namespace_requests as nr
from ragline.adapters.aws import tenant_items as ti
from ragline.adapters.aws import tenants as dt
from ragline.domain.limits import Limits
from ragline.domain.tenancy import ApiKeyRecord, Namespace, NamespaceSettings, Tenant
from tests.support.dynamodb_stub import cancelled

pytestmark = pytest.mark.unit
AT = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
TABLE = "tenants"
HASH = hashlib.sha256(b"rl_secret").hexdigest()


def key(**kw: Any) -> ApiKeyRecord:
    base: dict[str, Any] = {"key_id": "key_1", "key_hash": HASH, "tenant_id": "acme", "created_at": AT}
    return ApiKeyRecord(**(base | kw))


def namespace(**kw: Any) -> Namespace:
    settings = NamespaceSettings(embedding_model="bge", embedding_dimension=384, system_prompt="p")
    base: dict[str, Any] = {
        "tenant_id": "acme",
        "namespace_id": "docs",
        "settings": settings,
        "created_at": AT,
    }
    return Namespace(**(base | kw))


def placeholders(request: dict[str, Any], mark: str) -> set[str]:
    text = " ".join(v for k, v in request.items() if k.endswith("Expression"))
    return set(re.findall(re.escape(mark) + r"\w+", text))


# -- keys and items ---------------------------------------------------------------------------------
def test_keys_follow_the_single_table_layout() -> None:
    assert ti.tenant_key("acme") == {"pk": {"S": "TENANT#acme"}, "sk": {"S": "TENANT"}}
    assert ti.namespace_key("acme", "docs") == {"pk": {"S": "TENANT#acme"}, "sk": {"S": "NS#docs"}}
    assert ti.api_key_key(HASH) == {"pk": {"S": f"KEY#{HASH}"}, "sk": {"S": "KEY"}}
    assert ti.key_ref_key("acme", "key_1") == {"pk": {"S": "TENANT#acme"}, "sk": {"S": "KEY#key_1"}}


def test_tenant_item_has_typed_attributes_and_omits_an_unlimited_quota() -> None:
    item = dt.tenant_to_item(Tenant(tenant_id="acme", name="Acme", created_at=AT))
    assert item == {
        "pk": {"S": "TENANT#acme"},
        "sk": {"S": "TENANT"},
        "tenant_id": {"S": "acme"},
        "name": {"S": "Acme"},
        "plan": {"S": "standard"},
        "status": {"S": "active"},
        "created_at": {"S": "2026-01-02T03:04:05.678901+00:00"},
    }
    capped = dt.tenant_to_item(Tenant(tenant_id="acme", max_runs_per_period=500, created_at=AT))
    assert capped["max_runs_per_period"] == {"N": "500"}
    limited = Tenant(tenant_id="acme", created_at=AT, limits=Limits(requests_per_second=5))
    assert dt.tenant_to_item(limited)["limits"] == {"M": {"requestsPerSecond": {"N": "5.0"}}}


def test_namespace_item_nests_its_settings_as_a_map() -> None:
    item = dt.namespace_to_item(namespace(default=True))
    assert item["default"] == {"BOOL": True}
    assert item["settings"] == {
        "M": {
            "embedding_model": {"S": "bge"},
            "embedding_dimension": {"N": "384"},
            "system_prompt": {"S": "p"},
            "chunks_per_search": {"N": "0"},
            "metadata_schema": {"M": {}},
            "chunking": {
                "M": {
                    "chunk_tokens": {"N": "0"},
                    "chunk_overlap_tokens": {"N": "0"},
                    "strategy": {"S": ""},
                    "parent_tokens": {"N": "0"},
                }
            },
            "generation": {"N": "1"},
        }
    }
    # an item written before chunking strategies existed still reads, with the deployment's
    chunking = item["settings"]["M"]["chunking"]["M"]
    old = {k: v for k, v in chunking.items() if k not in ("strategy", "parent_tokens")}
    aged = {**item, "settings": {"M": {**item["settings"]["M"], "chunking": {"M": old}}}}
    assert Namespace.model_validate(ti.item_fields(aged)).settings.chunking.strategy == ""
    # an item written before chunks_per_search existed still reads, with the deployment's setting
    del item["settings"]["M"]["chunks_per_search"]
    assert Namespace.model_validate(ti.item_fields(item)).settings.chunks_per_search == 0


def test_api_key_item_holds_the_hash_lists_and_no_unset_times() -> None:
    item = dt.api_key_to_item(key(scopes=("chat", "admin"), namespaces=()))
    assert item["key_hash"] == {"S": HASH}
    assert item["scopes"] == {"L": [{"S": "chat"}, {"S": "admin"}]}
    assert item["namespaces"] == {"L": []}
    assert "last_used_at" not in item and "revoked_at" not in item  # absent, so attribute_not_exists works
    assert dt.key_ref_to_item(key()) == {
        "pk": {"S": "TENANT#acme"},
        "sk": {"S": "KEY#key_1"},
        "tenant_id": {"S": "acme"},
        "key_id": {"S": "key_1"},
        "key_hash": {"S": HASH},
    }


@pytest.mark.parametrize(
    "model",
    [
        Tenant(tenant_id="acme", name="A", plan="pro", max_runs_per_period=3, created_at=AT),
        Tenant(tenant_id="acme", created_at=AT),
        namespace(description="d", default=True),
        key(name="CI", scopes=("ingest",), namespaces=("docs",), last_used_at=AT, revoked_at=AT),
        key(),
    ],
    ids=["tenant", "tenant-unlimited", "namespace", "key-full", "key-minimal"],
)
def test_item_codec_round_trips_every_field(model: Any) -> None:
    item = dt.model_to_item(model, ti.tenant_key("x"))
    assert set(type(model).model_fields) >= set(item) - {"pk", "sk"}
    assert type(model).model_validate(ti.item_fields(item)) == model


def test_times_are_fixed_width_utc_so_text_order_is_time_order() -> None:
    whole_second = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert dt.timestamp(whole_second) == "2026-01-02T03:04:05.000000+00:00"
    assert dt.timestamp(whole_second) < dt.timestamp(whole_second + timedelta(microseconds=1))
    plus_two = datetime(2026, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    assert dt.timestamp(plus_two) == dt.timestamp(whole_second)
    assert dt.timestamp(datetime(2026, 1, 2, 3, 4, 5)) == dt.timestamp(whole_second)  # naive = UTC


def test_codec_encodes_plain_values() -> None:
    assert ti.encode(1.5) == {"N": "1.5"} and ti.decode({"N": "1.5"}) == 1.5
    assert ti.decode({"N": "-7"}) == -7
    assert ti.encode(None) == {"NULL": True} and ti.decode({"NULL": True}) is None
    with pytest.raises(ValueError):
        ti.encode(float("nan"))
    with pytest.raises(TypeError):
        ti.encode(object())


# -- request builders -------------------------------------------------------------------------------
def test_creates_are_puts_conditioned_on_absence_and_updates_on_presence() -> None:
    item = dt.namespace_to_item(namespace())
    assert dt.put_new_request(TABLE, item) == {
        "TableName": TABLE,
        "Item": item,
        "ConditionExpression": "attribute_not_exists(pk)",
    }
    assert dt.put_existing_request(TABLE, item)["ConditionExpression"] == "attribute_exists(pk)"
    assert dt.delete_existing_request(TABLE, ti.namespace_key("acme", "docs")) == {
        "TableName": TABLE,
        "Key": ti.namespace_key("acme", "docs"),
        "ConditionExpression": "attribute_exists(pk)",
    }


def test_reads_are_consistent() -> None:
    assert ti.get_request(TABLE, ti.api_key_key(HASH)) == {
        "TableName": TABLE,
        "Key": ti.api_key_key(HASH),
        "ConsistentRead": True,
    }


def test_listing_namespaces_and_key_references_is_a_prefix_query_on_the_tenant() -> None:
    assert dt.list_namespaces_request(TABLE, "acme") == {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
        "ExpressionAttributeValues": {":pk": {"S": "TENANT#acme"}, ":prefix": {"S": "NS#"}},
        "ScanIndexForward": True,
        "ConsistentRead": True,
    }
    refs = dt.list_key_refs_request(TABLE, "acme", {"pk": {"S": "TENANT#acme"}, "sk": {"S": "KEY#k"}})
    assert refs["ExpressionAttributeValues"][":prefix"] == {"S": "KEY#"}
    assert refs["ExclusiveStartKey"] == {"pk": {"S": "TENANT#acme"}, "sk": {"S": "KEY#k"}}


def test_put_api_key_is_one_transaction_of_two_new_items() -> None:
    rq = dt.put_api_key_request(TABLE, key(), token="tok")
    assert rq["ClientRequestToken"] == "tok"
    record, ref = (i["Put"] for i in rq["TransactItems"])
    assert record == dt.put_new_request(TABLE, dt.api_key_to_item(key()))
    assert ref == dt.put_new_request(TABLE, dt.key_ref_to_item(key()))


def test_batch_get_is_consistent() -> None:
    keys = [ti.api_key_key(HASH)]
    assert dt.batch_get_request(TABLE, keys) == {
        "RequestItems": {TABLE: {"Keys": keys, "ConsistentRead": True}}
    }


def test_revoke_sets_the_time_once_and_only_on_the_tenants_own_key() -> None:
    rq = dt.revoke_request(TABLE, "acme", "key_1", HASH, AT)
    assert rq["Key"] == ti.api_key_key(HASH)
    assert rq["ConditionExpression"] == (
        "attribute_exists(#pk) AND #tenant_id = :tenant_id AND #key_id = :key_id"
    )
    assert rq["UpdateExpression"] == "SET #revoked_at = if_not_exists(#revoked_at, :at)"
    assert rq["ExpressionAttributeValues"] == {
        ":tenant_id": {"S": "acme"},
        ":key_id": {"S": "key_1"},
        ":at": {"S": "2026-01-02T03:04:05.678901+00:00"},
    }
    assert rq["ReturnValues"] == "ALL_NEW"


def test_touch_writes_only_an_existing_key_last_used_over_a_minute_ago() -> None:
    rq = ti.touch_request(TABLE, HASH, AT)
    assert rq["Key"] == ti.api_key_key(HASH)
    assert rq["ConditionExpression"] == (
        "attribute_exists(#pk) AND (attribute_not_exists(#last_used_at) OR #last_used_at < :stale_before)"
    )
    assert rq["UpdateExpression"] == "SET #last_used_at = :at"
    assert rq["ExpressionAttributeValues"] == {
        ":at": {"S": "2026-01-02T03:04:05.678901+00:00"},
        ":stale_before": {"S": "2026-01-02T03:03:05.678901+00:00"},
    }


def test_clearing_a_default_updates_that_attribute_alone_on_an_existing_namespace() -> None:
    rq = dt.clear_default_request(TABLE, "acme", "docs")
    assert rq["Key"] == ti.namespace_key("acme", "docs")
    assert rq["ConditionExpression"] == "attribute_exists(pk)"
    assert rq["UpdateExpression"] == "SET #default = :false"
    assert rq["ExpressionAttributeValues"] == {":false": {"BOOL": False}}


@pytest.mark.parametrize(
    "request_",
    [
        dt.clear_default_request(TABLE, "acme", "docs"),
        dt.revoke_request(TABLE, "acme", "key_1", HASH, AT),
        ti.touch_request(TABLE, HASH, AT),
        dt.list_namespaces_request(TABLE, "acme"),
        dt.list_key_refs_request(TABLE, "acme"),
    ],
    ids=["clear_default", "revoke", "touch", "list_namespaces", "list_key_refs"],
)
def test_every_placeholder_is_defined_and_used(request_: dict[str, Any]) -> None:
    # DynamoDB rejects both an undefined and an unused name or value.
    assert placeholders(request_, "#") == set(request_.get("ExpressionAttributeNames", {}))
    assert placeholders(request_, ":") == set(request_.get("ExpressionAttributeValues", {}))


# -- sending: paging, refusals, errors ----------------------------------------------------------------
class FakeClient:
    """Serves key references in pages of one, and key records with one round of unprocessed keys."""

    def __init__(self, records: list[ApiKeyRecord], *, stuck: bool = False) -> None:
        self.records = {r.key_hash: dt.api_key_to_item(r) for r in records}
        self.refs = [dt.key_ref_to_item(r) for r in records]
        self.unprocessed_rounds = 1
        self.stuck = stuck
        self.calls: list[str] = []

    def query(self, **request: Any) -> dict[str, Any]:
        self.calls.append("query")
        i = 0 if "ExclusiveStartKey" not in request else int(request["ExclusiveStartKey"]["i"]) + 1
        page: dict[str, Any] = {"Items": self.refs[i : i + 1]}
        if i + 1 < len(self.refs):
            page["LastEvaluatedKey"] = {"i": str(i)}
        return page

    def batch_get_item(self, **request: Any) -> dict[str, Any]:
        self.calls.append("batch_get_item")
        ((table, spec),) = request["RequestItems"].items()
        keys = spec["Keys"]
        if self.stuck:
            return {"Responses": {table: []}, "UnprocessedKeys": request["RequestItems"]}
        if self.unprocessed_rounds > 0 and len(keys) > 1:
            self.unprocessed_rounds -= 1
            first, rest = keys[0], keys[1:]
            return {
                "Responses": {table: [self.records[first["pk"]["S"][4:]]]},
                "UnprocessedKeys": {table: {"Keys": rest, "ConsistentRead": True}},
            }
        return {"Responses": {table: [self.records[k["pk"]["S"][4:]] for k in keys]}}


def hashed(i: int) -> str:
    return hashlib.sha256(f"rl_{i}".encode()).hexdigest()


def test_list_follows_every_page_and_retries_unprocessed_keys() -> None:
    records = [key(key_id=f"key_{i}", key_hash=hashed(i)) for i in (2, 0, 1)]
    client = FakeClient(records)
    got = dt.DynamoDbTenantRegistry(TABLE, client=client).list_api_keys("acme")
    assert [k.key_id for k in got] == ["key_0", "key_1", "key_2"]
    assert client.calls == ["query"] * 3 + ["batch_get_item"] * 2


def test_list_gives_up_on_keys_left_unprocessed_as_throttled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dt, "backoff", lambda _attempt: None)
    client = FakeClient([key(key_id=f"key_{i}", key_hash=hashed(i)) for i in range(3)], stuck=True)
    with pytest.raises(errors.Throttled):
        dt.DynamoDbTenantRegistry(TABLE, client=client).list_api_keys("acme")
    assert client.calls.count("batch_get_item") == dt.BATCH_GET_ATTEMPTS


def test_list_never_returns_a_record_of_another_tenant() -> None:
    client = FakeClient([key(key_id="key_1", key_hash=hashed(1), tenant_id="globex")])
    client.refs = [dt.key_ref_to_item(key(key_id="key_1", key_hash=hashed(1)))]  # a corrupt reference
    assert dt.DynamoDbTenantRegistry(TABLE, client=client).list_api_keys("acme") == []


@pytest.fixture
def stubbed() -> Iterator[tuple[dt.DynamoDbTenantRegistry, Any]]:
    import boto3
    from botocore.stub import Stubber

    client = boto3.session.Session().client(
        "dynamodb", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with Stubber(client) as stubber:
        yield dt.DynamoDbTenantRegistry(TABLE, client=client), stubber
        stubber.assert_no_pending_responses()


def test_put_api_key_sends_the_transaction(stubbed: tuple[dt.DynamoDbTenantRegistry, Any]) -> None:
    registry, stubber = stubbed
    stubber.add_response("transact_write_items", {})
    assert registry.put_api_key(key()) == key()


@pytest.mark.parametrize(
    ("codes", "expected"),
    [
        (("ConditionalCheckFailed", "None"), errors.Conflict),
        (("None", "ConditionalCheckFailed"), errors.Conflict),
        (("TransactionConflict", "None"), errors.Throttled),
        (("ValidationError", "None"), errors.DependencyFailed),
    ],
)
def test_a_cancelled_key_transaction_is_translated_by_reason(
    stubbed: tuple[dt.DynamoDbTenantRegistry, Any], codes: tuple[str, ...], expected: type[Exception]
) -> None:
    registry, stubber = stubbed
    cancelled(stubber, *codes)
    with pytest.raises(expected) as raised:
        registry.put_api_key(key())
    assert type(raised.value) is expected


def test_a_plaintext_key_is_refused_before_any_request() -> None:
    registry = dt.DynamoDbTenantRegistry(TABLE, client=object())  # any call would fail
    with pytest.raises(ValueError, match="SHA-256"):
        registry.put_api_key(key(key_hash="rl_live_secret"))
    assert registry.find_api_key("rl_live_secret") is None
    registry.touch_api_key("rl_live_secret")


def test_touch_swallows_only_its_failed_condition(stubbed: tuple[dt.DynamoDbTenantRegistry, Any]) -> None:
    registry, stubber = stubbed
    stubber.add_client_error("update_item", service_error_code="ConditionalCheckFailedException")
    registry.touch_api_key(HASH)
    stubber.add_client_error("update_item", service_error_code="ThrottlingException")
    with pytest.raises(errors.Throttled):
        registry.touch_api_key(HASH)


def test_revoke_of_a_key_whose_record_belongs_elsewhere_is_not_found(
    stubbed: tuple[dt.DynamoDbTenantRegistry, Any],
) -> None:
    registry, stubber = stubbed
    stubber.add_response("get_item", {"Item": dt.key_ref_to_item(key())})
    stubber.add_client_error("update_item", service_error_code="ConditionalCheckFailedException")
    with pytest.raises(errors.NotFound):
        registry.revoke_api_key("acme", "key_1")


@pytest.mark.parametrize(
    ("call", "action", "expected"),
    [
        (lambda r: r.create_tenant(Tenant(tenant_id="acme")), "put_item", errors.Conflict),
        (lambda r: r.create_namespace(namespace()), "put_item", errors.Conflict),
        (lambda r: r.update_namespace(namespace()), "update_item", errors.NamespaceNotFound),
        (lambda r: r.delete_namespace("acme", "docs"), "delete_item", errors.NamespaceNotFound),
    ],
    ids=["create_tenant", "create_namespace", "update_namespace", "delete_namespace"],
)
def test_failed_conditions_become_the_contracts_errors(
    stubbed: tuple[dt.DynamoDbTenantRegistry, Any], call: Any, action: str, expected: type[Exception]
) -> None:
    registry, stubber = stubbed
    stubber.add_client_error(action, service_error_code="ConditionalCheckFailedException")
    with pytest.raises(expected) as raised:
        call(registry)
    assert type(raised.value) is expected


@pytest.mark.parametrize(
    ("code", "status", "expected"),
    [
        ("ProvisionedThroughputExceededException", 400, errors.Throttled),
        ("ThrottlingException", 400, errors.Throttled),
        ("InternalServerError", 500, errors.DependencyUnavailable),
        ("ValidationException", 400, errors.DependencyFailed),
        ("ResourceNotFoundException", 400, errors.DependencyFailed),
    ],
)
def test_vendor_errors_become_ragline_errors_by_code(
    stubbed: tuple[dt.DynamoDbTenantRegistry, Any], code: str, status: int, expected: type[Exception]
) -> None:
    registry, stubber = stubbed
    stubber.add_client_error("get_item", service_error_code=code, http_status_code=status)
    with pytest.raises(expected) as raised:
        registry.find_api_key(HASH)
    assert type(raised.value) is expected and raised.value.details["aws_code"] == code  # type: ignore[attr-defined]


def test_construction_does_no_io_and_builds_no_client() -> None:
    registry = dt.DynamoDbTenantRegistry(TABLE)
    assert registry._client._client is None  # built on first use only


def test_a_namespace_update_writes_every_field_but_the_metadata_schema() -> None:
    """Issue 29: only extend_metadata_schema writes the schema, so a settings PATCH cannot drop a key."""
    ns = namespace(default=True)
    ns = ns.model_copy(
        update={"settings": ns.settings.model_copy(update={"metadata_schema": {"y": "number"}})}
    )
    request = nr.update_namespace_request(TABLE, ns)
    assert "metadata_schema" not in str(request)
    _, _, removed = request["UpdateExpression"].partition(" REMOVE ")
    names = request["ExpressionAttributeNames"]
    # only a field now None goes (no rebuild recorded), never the schema
    assert {names[p.split(".")[-1]] for p in removed.split(", ") if p} == {"rebuild"}
    assert request["ConditionExpression"] == "attribute_exists(#pk)"
    written = {request["ExpressionAttributeNames"][n] for n in request["ExpressionAttributeNames"]}
    assert {"description", "default", "embedding_model", "system_prompt", "chunks_per_search"} <= written


def test_a_schema_extension_conditions_each_new_key_on_being_absent_or_the_same_type() -> None:
    request = nr.extend_schema_request(TABLE, "acme", "docs", {"year": "number"}, stored={"team": "string"})
    assert request["UpdateExpression"] == "SET #s.#m.#k0 = :t0"
    assert request["ConditionExpression"] == (
        "attribute_exists(#pk) AND size(#s.#m) <= :room"
        " AND (attribute_not_exists(#s.#m.#k0) OR #s.#m.#k0 = :t0)"
    )
    assert request["ExpressionAttributeNames"]["#k0"] == "year"
    assert request["ExpressionAttributeValues"][":t0"] == {"S": "number"}
    whole = nr.extend_schema_request(TABLE, "acme", "docs", {"year": "number"}, stored=None)
    assert whole["ConditionExpression"] == "attribute_exists(#pk) AND attribute_not_exists(#s.#m)"
    many = {f"k{i}": "string" for i in range(nr.PER_KEY_WRITE + 1)}
    cas = nr.extend_schema_request(TABLE, "acme", "docs", many, stored={"team": "string"})
    assert cas["ConditionExpression"] == "attribute_exists(#pk) AND #s.#m = :stored"
    assert len(cas["UpdateExpression"]) < 100  # one SET of the whole map: within DynamoDB's 4 KB
