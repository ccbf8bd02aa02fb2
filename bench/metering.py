"""Usage-ledger cost per run: ``commit`` (and ``reserve``) on DynamoDB-on-moto and on SQLite, side by side.

Each backend gets a fresh ledger: DynamoDB a table created from ``UsageTable`` in ``template.yaml`` on an
in-process moto server (loopback, dummy credentials; never AWS), SQLite a temp file. Rows:

- ``reserve``: the quota check before a run (one consistent read);
- ``commit (new run)``: distinct run ids, the normal path (one transaction);
- ``commit (replay)``: the same run ids again (DynamoDB: a cancelled transaction whose reason carries the
  stored marker; SQLite: one indexed read, rolled back);
- ``commit (over quota)``: new runs past the limit (DynamoDB: a cancelled transaction plus the
  unconditional one).

moto is an emulator in this process: its numbers measure the adapter plus HTTP plus moto, not DynamoDB's
service latency (single-digit ms in-region). moto also deep-copies the whole table before every
transaction (to roll back), so its transaction rows grow with the table: compare rows, not absolutes.
Sequential, one client.

    .venv/bin/python bench/metering.py [--runs 150]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parents[1]))

from tests.support.cfn_tables import create_table_from_template

from ragline.adapters.aws.ledger import DynamoDbUsageLedger
from ragline.adapters.embedded.ledger import SqliteUsageLedger
from ragline.domain.models import RunUsage
from ragline.ports import UsageLedger

USAGE = RunUsage(retrievals=3, reranks=1, llm_input_tokens=2400, llm_output_tokens=310, embedded_tokens=12)


def timed(n: int, call: Callable[[int], Any]) -> list[float]:
    """Seconds per call of ``call(i)`` for i in range(n)."""
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        call(i)
        out.append(time.perf_counter() - t0)
    return out


def percentile(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[int(q) - 1]


def measure(ledger: UsageLedger, runs: int) -> dict[str, list[float]]:
    tenant, quota_tenant = "acme", "globex"
    for i in range(5):  # warm up connections, the table's first item, SQLite's schema
        ledger.commit("warm", f"w{i}", USAGE)
        ledger.reserve("warm", f"w{i}", 1000)
    rows = {
        "reserve": timed(runs, lambda i: ledger.reserve(tenant, f"r{i}", 10**9)),
        "commit (new run)": timed(runs, lambda i: ledger.commit(tenant, f"r{i}", USAGE, 10**9)),
        "commit (replay)": timed(runs, lambda i: ledger.commit(tenant, f"r{i}", USAGE, 10**9)),
    }
    ledger.commit(quota_tenant, "first", USAGE, 1)
    rows["commit (over quota)"] = timed(runs, lambda i: ledger.commit(quota_tenant, f"q{i}", USAGE, 1))
    period = time.strftime("%Y-%m", time.gmtime())
    assert ledger.period_runs(tenant, period) == runs, "every new run charged once, no replay charged"
    assert ledger.period_runs(quota_tenant, period) == runs + 1, "over-quota runs are still charged"
    return rows


def dynamodb_ledger(runs: int) -> dict[str, list[float]]:
    import boto3
    from botocore.config import Config
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        client = boto3.session.Session().client(
            "dynamodb",
            endpoint_url=f"http://{host}:{port}",
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            aws_session_token="testing",
            config=Config(retries={"max_attempts": 2, "mode": "standard"}),
        )
        table = create_table_from_template(client, "UsageTable", f"usage-bench-{uuid.uuid4().hex[:8]}")
        return measure(DynamoDbUsageLedger(table, client=client), runs)
    finally:
        server.stop()


def sqlite_ledger(runs: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        return measure(SqliteUsageLedger(Path(tmp) / "usage.sqlite"), runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=150, help="calls per row (default 150)")
    args = parser.parse_args()
    logging.getLogger("ragline").setLevel(logging.ERROR)  # the over-quota row logs a warning per run
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's request log

    t0 = time.perf_counter()
    results = {"DynamoDB (moto)": dynamodb_ledger(args.runs), "SQLite": sqlite_ledger(args.runs)}
    backends = list(results)
    print(f"Usage ledger, {args.runs} sequential calls per row (latency in ms)\n")
    header = "| operation |" + "".join(f" {b} ops/s | {b} p50 | {b} p95 |" for b in backends)
    print(header)
    print("|---|" + "---:|" * (3 * len(backends)))
    for row in results[backends[0]]:
        cells = []
        for b in backends:
            xs = results[b][row]
            p50, p95 = percentile(xs, 50) * 1e3, percentile(xs, 95) * 1e3
            cells += [f"{len(xs) / sum(xs):,.0f}", f"{p50:.2f}", f"{p95:.2f}"]
        print(f"| {row} | " + " | ".join(cells) + " |")
    print(f"\n(total {time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
