"""The RateLimiter contract on SQLite (one temp file) and DynamoDB (moto server, the UsageTable of
``template.yaml``), and DynamoDB's own race: another Lambda's write landing between two of one
Lambda's conditional writes, at every point hypothesis picks."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.adapters.aws.limits import DynamoDbRateLimiter
from ragline.adapters.embedded.limits import SqliteRateLimiter
from ragline.domain.limits import Bucket, Rate, admit
from tests.contract.rate_limiter_contract import Clock, Factory, RateLimiterContract, fresh_tenant
from tests.support.cfn_tables import create_table_from_template

pytestmark = pytest.mark.contract


class TestSqliteRateLimiter(RateLimiterContract):
    @pytest.fixture
    def limiters(self, tmp_path: Path, clock: Clock) -> Factory:
        path = tmp_path / f"limits-{uuid.uuid4().hex}.sqlite"
        return lambda: SqliteRateLimiter(path, clock=clock)


@pytest.fixture
def usage_table(dynamodb_client: Any) -> Iterator[str]:
    table = create_table_from_template(dynamodb_client, "UsageTable", f"usage-{uuid.uuid4().hex}")
    yield table
    dynamodb_client.delete_table(TableName=table)


class TestDynamoDbRateLimiter(RateLimiterContract):
    @pytest.fixture
    def limiters(self, dynamodb_client: Any, usage_table: str, clock: Clock) -> Factory:
        return lambda: DynamoDbRateLimiter(usage_table, client=dynamodb_client, clock=clock)


class Interposing:
    """A DynamoDB client through which, before a conditional write of the limiter under test, another
    Lambda (``other``) takes from the same bucket — when the next of ``plan``'s flags says so."""

    def __init__(self, client: Any, plan: list[bool], other: DynamoDbRateLimiter, bucket: Bucket, rate: Rate):
        self._client, self._plan = client, list(plan)
        self._other, self._bucket, self._rate = other, bucket, rate
        self.others: list[int] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if name not in ("update_item", "get_item"):
            return method

        def interposed(**request: Any) -> Any:
            if self._plan and self._plan.pop(0):
                self.others.append(self._other.take(self._bucket, self._rate))
            return method(**request)

        return interposed


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    plan=st.lists(st.booleans(), max_size=12),
    takes=st.integers(1, 6),
    start_busy=st.booleans(),
    gap=st.sampled_from([0, 50_000, 100_000, 400_000]),
)
def test_property_writes_landing_between_a_lambdas_writes_never_overadmit(
    dynamodb_client: Any, usage_table: str, plan: list[bool], takes: int, start_busy: bool, gap: int
) -> None:
    """Given a bucket busy or idle, when another Lambda's take lands before any of this Lambda's
    writes (hypothesis picks which), then the two together admit exactly what one serial bucket
    admits at that instant, and every refusal's wait is the serial bucket's."""
    clock, rate, bucket = Clock(), Rate.of(10, 3), Bucket(fresh_tenant())
    other = DynamoDbRateLimiter(usage_table, client=dynamodb_client, clock=clock)
    if start_busy:
        for _ in range(2):
            other.take(bucket, rate)
    clock.advance(gap)
    client = Interposing(dynamodb_client, plan, other, bucket, rate)
    mine = DynamoDbRateLimiter(usage_table, client=client, clock=clock)
    mine._idle[bucket] = not start_busy  # the hint may be wrong either way: correctness must not rest on it
    answers = [mine.take(bucket, rate) for _ in range(takes)]
    tat = clock.now - gap + 2 * rate.interval if start_busy else None
    expected_admitted = 0
    for _ in range(takes + len(client.others)):
        answer = admit(tat, clock.now, rate)
        expected_admitted, tat = expected_admitted + answer.admitted, answer.tat
    waits = answers + client.others
    assert sum(1 for w in waits if w == 0) == expected_admitted
    assert {w for w in waits if w} <= {admit(tat, clock.now, rate).wait}


class CountingClient:
    """A DynamoDB client that counts the calls of each action."""

    def __init__(self, client: Any) -> None:
        self._client, self.calls = client, dict[str, int]()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def counted(**request: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            return method(**request)

        return counted


def test_a_lease_reads_the_slots_once_whatever_their_number(dynamodb_client: Any, usage_table: str) -> None:
    # Given a tenant allowed 50 runs at once, one of them in flight
    counting = CountingClient(dynamodb_client)
    limiter = DynamoDbRateLimiter(usage_table, client=counting, clock=Clock())
    bucket = Bucket(fresh_tenant())
    assert limiter.lease(bucket, 50, 960) is not None
    counting.calls.clear()
    # When another run takes a slot, then the slots were read with one query and one write took it
    assert limiter.lease(bucket, 50, 960) is not None
    assert counting.calls == {"query": 1, "put_item": 1}
