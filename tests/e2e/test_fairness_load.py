"""Issue 30's load test, on moto's DynamoDB through the real search handler: tenant A bursts at ten
times its request rate while tenant B searches at its normal rate. B is never refused; A is refused
with ``Retry-After``, and admitted no more than its bucket allows over the time the burst took.

No latency is asserted here (B's p50/p95 with and without A's burst: ``bench/limits.py``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from ragline.domain.billing import current_period
from ragline.domain.limits import Limits
from tests.support.fairness import Answer, burst, fairness_container, steady

pytestmark = [pytest.mark.e2e]
RATE, BURST = 2.0, 2
LIMITS = Limits(requests_per_second=RATE, burst=BURST, max_concurrent_runs=4)


def test_a_bursting_tenant_is_refused_while_its_neighbour_at_its_normal_rate_never_is(
    dynamodb_client: Any, tmp_path: Path
) -> None:
    # Given two tenants with the same limits on one deployment
    c = fairness_container(dynamodb_client, tmp_path, {"tenant-a": LIMITS, "tenant-b": LIMITS})
    a_answers: list[Answer] = []
    a_seconds = [0.0]

    def tenant_a() -> None:  # When A sends 10x its rate for 3 s, every request on a thread of its own
        answers, seconds = burst(c, "tenant-a", 10 * RATE, 3.0)
        a_answers.extend(answers)
        a_seconds[0] = seconds

    noisy = threading.Thread(target=tenant_a)
    noisy.start()
    b_answers = steady(c, "tenant-b", RATE, 6)  # while B searches at its own rate, one at a time
    noisy.join(timeout=300)

    # Then B is never refused
    assert [a.status for a in b_answers] == [200] * 6
    # and A is: each refusal a 429 saying when to come back, admitted no more than its bucket holds
    assert len(a_answers) == 60
    refused = [a for a in a_answers if a.status == 429]
    admitted = [a for a in a_answers if a.status == 200]
    assert len(refused) + len(admitted) == 60, {a.code for a in a_answers}
    assert refused and all(a.retry_after and int(a.retry_after) >= 1 for a in refused)
    assert "rate_limited" in {a.code for a in refused} <= {"rate_limited", "too_many_runs"}
    assert len(admitted) <= BURST + RATE * a_seconds[0] + 1
    assert c.limiter.refusals("tenant-a", current_period()) == len(refused)
    assert c.limiter.refusals("tenant-b", current_period()) == 0
