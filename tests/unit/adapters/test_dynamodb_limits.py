"""The DynamoDB limiter's requests as plain data: each decision is one conditional write whose
condition is the decision's premise (the argument in :mod:`ragline.adapters.aws.limits`)."""

from __future__ import annotations

import pytest

from ragline.adapters.aws.limits import busy_request, idle_request, key, lease_request
from ragline.domain.limits import MICROS, Bucket, Rate

pytestmark = pytest.mark.unit
RATE = Rate.of(10, 5)  # one every 100 ms, 5 at once: tolerance 400 ms
NOW = 1_700_000_000 * MICROS


def test_a_busy_bucket_is_a_relative_update_within_the_admissible_range() -> None:
    request = busy_request("usage", Bucket("acme", "k1"), RATE, NOW)
    assert request["Key"] == {"pk": {"S": "LIMIT#acme"}, "sk": {"S": "RATE#key#k1"}}
    assert request["UpdateExpression"].startswith("SET tat = tat + :interval")
    assert request["ConditionExpression"] == "tat BETWEEN :now AND :ceiling"
    values = request["ExpressionAttributeValues"]
    assert (values[":interval"], values[":now"]) == ({"N": "100000"}, {"N": str(NOW)})
    assert values[":ceiling"] == {"N": str(NOW + 400_000)}
    assert request["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"


def test_an_idle_bucket_restarts_from_now_only_if_it_is_idle() -> None:
    request = idle_request("usage", Bucket("acme"), RATE, NOW)
    assert request["Key"]["sk"] == {"S": "RATE#tenant"}
    assert request["UpdateExpression"].startswith("SET tat = :next")
    assert request["ConditionExpression"] == "attribute_not_exists(tat) OR tat < :now"
    assert request["ExpressionAttributeValues"][":next"] == {"N": str(NOW + 100_000)}
    expires = int(request["ExpressionAttributeValues"][":expires"]["N"])
    assert expires > NOW // MICROS  # a TTL in seconds, after the bucket is full again


def test_a_slot_is_taken_only_when_free_or_expired_and_names_its_lease() -> None:
    request = lease_request("usage", Bucket("acme"), 3, "3.abc", NOW, 960)
    assert request["Item"]["sk"] == {"S": "SLOT#tenant#3"}
    assert request["Item"]["lease_id"] == {"S": "3.abc"}
    assert request["Item"]["lease_expires"] == {"N": str(NOW + 960 * MICROS)}
    assert request["ConditionExpression"] == "attribute_not_exists(pk) OR lease_expires < :now"


def test_a_tenant_id_cannot_alias_another_tenants_keys() -> None:
    with pytest.raises(ValueError, match="'#'"):
        key("acme#RATE", "RATE#tenant")
