"""Semantic search on the embedded store with numpy's default BLAS threads vs one thread, on an idle
and on a busy host (issue 39, item 6).

Run: ``PYTHONPATH=shared .venv/bin/python bench/blas_threads.py [--chunks 20000] [--queries 300]``

Each configuration runs in a fresh process (OpenBLAS reads its thread variables when numpy loads):
a namespace of ``--chunks`` random 384-d unit vectors is written through the store's API, then
``--queries`` semantic searches (k=10) are timed, ``--concurrency`` at a time (``serve`` answers
requests on several threads). "Busy" runs one CPU-bound process per core beside
the measuring process, as a shared host or a Lambda sandbox's neighbours would. Milliseconds are wall
time of ``search``; the configurations alternate, so all four see the same machine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time

CHILD = """
import json, sys, tempfile, time
import numpy as np
import threadpoolctl
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.domain.models import Chunk, ChunkMetadata, SemanticQuery, TenantScope

n, queries = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(7)
vectors = rng.standard_normal((n, 384)).astype(np.float32)
vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
meta = ChunkMetadata(filename="bench.txt")
with tempfile.TemporaryDirectory() as d:
    provider = SqliteVectorStoreProvider(f"{d}/s.db", dimension=384)
    store = provider.scoped(TenantScope(tenant_id="t", namespace_id="n"))
    for start in range(0, n, 1000):
        doc = f"doc{start}"
        chunks = [Chunk(document_id=doc, sequence_number=i, text=f"chunk {start + i}", metadata=meta,
                        embedding=tuple(vectors[start + i].tolist())) for i in range(min(1000, n - start))]
        store.upsert(chunks, generation=1)
        store.publish(doc, generation=1)
    store.search(SemanticQuery(text="q", vector=tuple(vectors[0].tolist()), k=10))  # the matrix is read once
    def timed(q):
        t = time.perf_counter()
        store.search(SemanticQuery(text="q", vector=tuple(q.tolist()), k=10))
        return (time.perf_counter() - t) * 1000
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(int(sys.argv[3])) as pool:
        times = list(pool.map(timed, rng.standard_normal((queries, 384)).astype(np.float32)))
threads = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
print(json.dumps({"threads": threads, "times": times}))
"""


def burn(stop: float) -> None:
    x = 0
    while time.time() < stop:
        x += 1


def measure(chunks: int, queries: int, concurrency: int, one_thread: bool, busy: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    if one_thread:
        env["OPENBLAS_NUM_THREADS"] = "1"
    burners = []
    if busy:
        stop = time.time() + 600
        burners = [multiprocessing.Process(target=burn, args=(stop,)) for _ in range(os.cpu_count() or 1)]
        for b in burners:
            b.start()
    try:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(chunks), str(queries), str(concurrency)],
            env=env,
            check=False,
            capture_output=True,
            text=True,
        )
        if out.returncode:
            raise SystemExit(out.stderr[-3000:])
    finally:
        for b in burners:
            b.terminate()
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--concurrency", type=int, default=1, help="searches in flight in the process (serve)"
    )
    args = parser.parse_args()
    rows: dict[tuple[bool, bool], list[list[float]]] = {}
    threads: dict[tuple[bool, bool], object] = {}
    for _ in range(args.rounds):
        for busy in (False, True):
            for one in (False, True):
                r = measure(args.chunks, args.queries, args.concurrency, one, busy)
                rows.setdefault((busy, one), []).append(r["times"])  # type: ignore[arg-type]
                threads[(busy, one)] = r["threads"]
    print(
        f"{args.chunks:,} chunks, {args.queries} queries x {args.rounds} rounds, "
        f"{args.concurrency} in flight, {os.cpu_count()} cores"
    )
    print("| host | BLAS threads | p50 ms (median of rounds, min-max) | p95 ms (median, min-max) |")
    print("|---|---|---|---|")
    for (busy, one), runs in rows.items():
        p50 = [statistics.median(t) for t in runs]
        p95 = [statistics.quantiles(t, n=20)[18] for t in runs]
        print(
            f"| {'+1 busy process per core' if busy else 'as found'} "
            f"| {threads[(busy, one)]} {'(one)' if one else '(default)'} "
            f"| {statistics.median(p50):.2f} ({min(p50):.2f}-{max(p50):.2f}) "
            f"| {statistics.median(p95):.2f} ({min(p95):.2f}-{max(p95):.2f}) |"
        )


if __name__ == "__main__":
    main()
