"""Fair sharing's cost and effect (issue 30), in one run on this machine.

1. The check's added latency per request: a token taken from a bucket (a busy bucket: one
   conditional ``UpdateItem``; an idle one: the same; the first of a flip: two), a run slot leased
   and released (a consistent ``Query``, a conditional ``PutItem``, a ``Query`` and a ``DeleteItem``),
   on DynamoDB-on-moto and on SQLite, beside the request without any limit (no call at all).
2. Tenant B's search latency through the real search handler (moto DynamoDB for the registry, the
   ledger and the limiter): alone, while tenant A bursts at 10x its rate on the same deployment,
   and while tenant C (no limit) sends the same burst — side by side, with the refusals.

moto is an emulator in this process (one request at a time, see tests/support/moto_server.py):
its milliseconds measure the adapter plus HTTP plus moto, not DynamoDB (single-digit ms in-Region).
API Gateway usage plans cannot run here; docs/benchmarks.md compares with their documented behaviour.

    .venv/bin/python bench/limits.py [--calls 200] [--searches 40]
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1]))

from tests.support.cfn_tables import create_table_from_template
from tests.support.fairness import Answer, burst, fairness_container, steady
from tests.support.moto_server import start_server

from ragline.adapters.aws.limits import DynamoDbRateLimiter
from ragline.adapters.embedded.limits import SqliteRateLimiter
from ragline.domain.limits import Bucket, Limits, Rate
from ragline.ports import RateLimiter


def ms(xs: list[float], q: int) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] * 1000


def timed(n: int, call: Callable[[int], Any]) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        call(i)
        out.append(time.perf_counter() - t0)
    return out


def check_costs(limiter: RateLimiter, calls: int) -> dict[str, list[float]]:
    busy, idle, slots = Bucket(f"b{uuid.uuid4().hex[:8]}"), Bucket(f"i{uuid.uuid4().hex[:8]}"), Bucket("s")
    fast, slow = Rate.of(1_000_000, 1_000_000), Rate.of(1_000_000, 1)  # never refuses; always idle again
    for _ in range(5):  # warm up the connection and the items
        limiter.take(busy, fast)
        limiter.release(slots, limiter.lease(slots, 4, 60) or "")
    return {
        "no limit (baseline)": timed(calls, lambda i: None),
        "take (busy bucket)": timed(calls, lambda i: limiter.take(busy, fast)),
        "take (idle bucket)": timed(calls, lambda i: limiter.take(idle, slow)),
        "lease + release a run slot": timed(
            calls, lambda i: limiter.release(slots, limiter.lease(slots, 4, 60) or "")
        ),
    }


def neighbour(dynamodb: Any, searches: int) -> dict[str, tuple[list[Answer], list[Answer]]]:
    """B's searches alone, beside A's burst at 10x A's limit, and beside the same burst from a tenant
    without limits (C: what A would cost B if nothing refused it); each with the burst's answers."""
    limits = Limits(requests_per_second=2, burst=2, max_concurrent_runs=4)
    tenants = {"tenant-a": limits, "tenant-b": Limits(), "tenant-c": Limits()}
    rows: dict[str, tuple[list[Answer], list[Answer]]] = {}
    with tempfile.TemporaryDirectory() as home:
        c = fairness_container(dynamodb, Path(home), tenants)
        steady(c, "tenant-b", 10, 5)  # warm up
        rows["alone"] = (steady(c, "tenant-b", 4, searches), [])
        for name, noisy_tenant in (
            ("A bursts at 10x its limit", "tenant-a"),
            ("C, unlimited, sends the same", "tenant-c"),
        ):
            noisy: list[Answer] = []
            thread = threading.Thread(
                target=lambda t=noisy_tenant, out=noisy: out.extend(burst(c, t, 20, searches / 4 + 1)[0])
            )
            thread.start()
            rows[name] = (steady(c, "tenant-b", 4, searches), noisy)
            thread.join()
        c.close()
    return rows


def main() -> None:
    import boto3

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--searches", type=int, default=40)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    os.environ["POWERTOOLS_METRICS_DISABLED"] = "true"  # the handler's metric lines are not the output
    server = start_server()
    host, port = server.get_host_and_port()
    dynamodb = boto3.client(
        "dynamodb", endpoint_url=f"http://{host}:{port}", region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    table = create_table_from_template(dynamodb, "UsageTable", f"usage-{uuid.uuid4().hex[:8]}")
    with tempfile.TemporaryDirectory() as folder:
        costs = {
            "DynamoDB (moto)": check_costs(DynamoDbRateLimiter(table, client=dynamodb), args.calls),
            "SQLite": check_costs(SqliteRateLimiter(Path(folder) / "limits.sqlite"), args.calls),
        }
    print(f"The check, {args.calls} sequential calls per row (ms):\n")
    print("| check | " + " | ".join(f"{b} p50 | {b} p95" for b in costs) + " |")
    print("|---|" + "---:|" * (2 * len(costs)))
    for row in costs["SQLite"]:
        cells = " | ".join(f"{ms(costs[b][row], 50):.2f} | {ms(costs[b][row], 95):.2f}" for b in costs)
        print(f"| {row} | {cells} |")

    rows = neighbour(dynamodb, args.searches)
    print(f"\nTenant B, {args.searches} searches at 4/s through the search handler (ms), while another")
    print("tenant sends 20 searches a second (A: limited to 2/s, burst 2; C: no limit):\n")
    print("| tenant B | p50 | p95 | B refused | the other's refused |\n|---|---:|---:|---:|---:|")
    for name, (answers, noisy) in rows.items():
        seconds = [a.seconds for a in answers]
        b_refused = sum(1 for a in answers if a.status != 200)
        other = f"{sum(1 for a in noisy if a.status == 429)} of {len(noisy)}" if noisy else "-"
        print(f"| {name} | {ms(seconds, 50):.1f} | {ms(seconds, 95):.1f} | {b_refused} | {other} |")
    server.stop()


if __name__ == "__main__":
    main()
