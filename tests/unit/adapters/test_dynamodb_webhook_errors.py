"""The webhook store and service against DynamoDB's exact error answers (``botocore`` Stubber: a real
client, no network): the cap's transaction, its contention, and ids no key could hold."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.aws.webhooks import DynamoDbWebhookStore
from ragline.domain.webhooks import Subscription
from ragline.services.authentication import Principal
from ragline.services.webhooks import WebhookService
from tests.support.dynamodb_stub import cancelled

SUB = Subscription(
    "wh_" + "0" * 24, "acme", "https://hooks.example.com/r", "whsec_x", created_at=datetime.now(UTC)
)


@pytest.fixture
def stubbed() -> Iterator[tuple[DynamoDbWebhookStore, Any]]:
    import boto3
    from botocore.stub import Stubber

    client = boto3.session.Session().client(
        "dynamodb", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with Stubber(client) as stubber:
        yield DynamoDbWebhookStore("tenants", client=client), stubber


def test_a_full_tenant_is_refused_by_the_counters_condition(
    stubbed: tuple[DynamoDbWebhookStore, Any],
) -> None:
    store, stubber = stubbed
    cancelled(stubber, "ConditionalCheckFailed", "None")
    assert store.add(SUB, limit=20) is False


def test_a_contended_counter_is_tried_again(stubbed: tuple[DynamoDbWebhookStore, Any]) -> None:
    store, stubber = stubbed
    cancelled(stubber, "TransactionConflict", "None")
    stubber.add_response("transact_write_items", {})
    assert store.add(SUB, limit=20) is True
    stubber.assert_no_pending_responses()


@pytest.mark.parametrize("webhook_id", ["x" * 1100, "wh_NOT-HEX-000000000000000", "../keys"])
def test_an_id_no_subscription_could_have_is_not_found_without_a_read(
    stubbed: tuple[DynamoDbWebhookStore, Any], webhook_id: str
) -> None:
    """Given DynamoDB's answer to a key past its 1,024-byte limit (a ValidationException), the API
    still answers 404 for such an id: it is never sent."""
    store, stubber = stubbed
    for action in ("get_item", "get_item", "get_item"):
        stubber.add_client_error(action, service_error_code="ValidationException", http_status_code=400)
    service = WebhookService(store)
    admin = Principal.operator("acme")
    for call in (service.get, service.delete, service.rotate):
        with pytest.raises(errors.NotFound):
            call(admin, webhook_id)
