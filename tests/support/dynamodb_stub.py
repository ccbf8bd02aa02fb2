"""A DynamoDB usage ledger over botocore's Stubber, with a recorded sleep and a fixed clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from ragline.adapters.aws import ledger as dl

TABLE = "usage"
AT = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def stubbed() -> Iterator[tuple[dl.DynamoDbUsageLedger, Any, Sleeps]]:
    import boto3
    from botocore.stub import Stubber

    client = boto3.session.Session().client(
        "dynamodb", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    sleeps = Sleeps()
    with Stubber(client) as stubber:
        yield dl.DynamoDbUsageLedger(TABLE, client=client, sleep=sleeps, clock=lambda: AT), stubber, sleeps
        stubber.assert_no_pending_responses()


def cancelled(stubber: Any, *codes: str) -> None:
    """The stubbed client's next ``TransactWriteItems`` is cancelled with these reasons, in order."""
    stubber.add_client_error(
        "transact_write_items",
        service_error_code="TransactionCanceledException",
        http_status_code=400,
        modeled_fields={"CancellationReasons": [{"Code": c} for c in codes]},
    )
