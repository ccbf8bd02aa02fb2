"""The 20-webhook cap holds under concurrent creations (concurrent Lambdas on one tenant): on
DynamoDB (moto server) every creation past the cap is a 409, never a 21st webhook."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.aws.webhooks import DynamoDbWebhookStore
from ragline.domain.webhook_api import MAX_WEBHOOKS, NewWebhook
from ragline.services.authentication import Principal
from ragline.services.webhooks import WebhookService

pytestmark = pytest.mark.integration


def test_concurrent_creations_never_pass_the_cap(dynamodb_client: Any) -> None:
    from tests.support.cfn_tables import create_table_from_template

    # Given a tenant with no webhook
    table = create_table_from_template(dynamodb_client, "TenantsTable", f"tenants-{uuid.uuid4().hex}")
    service = WebhookService(DynamoDbWebhookStore(table, client=dynamodb_client))
    admin = Principal.operator("acme")
    outcomes: list[str] = []
    barrier = threading.Barrier(MAX_WEBHOOKS + 10)

    def create(i: int) -> None:
        barrier.wait()
        try:
            service.create(admin, NewWebhook(url=f"https://hooks.example.com/{i}"))
            outcomes.append("created")
        except errors.Conflict:
            outcomes.append("conflict")

    # When 30 creations race
    threads = [threading.Thread(target=create, args=(i,)) for i in range(MAX_WEBHOOKS + 10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Then 20 are created and the rest refused
    try:
        assert outcomes.count("created") == MAX_WEBHOOKS and outcomes.count("conflict") == 10
        assert len(service.list(admin).webhooks) == MAX_WEBHOOKS
    finally:
        dynamodb_client.delete_table(TableName=table)
