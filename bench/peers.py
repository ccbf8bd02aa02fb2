"""Ragline beside its peers: SciFact in Ragline (embedded, OpenSearch), Milvus Lite and LanceDB, one run.

The same chunks (one per SciFact document: title + text) and the same cached all-MiniLM-L6-v2 vectors
go into every store; query vectors are computed up front, so latency is the store's search call alone.
For each store and mode (keyword, semantic, hybrid — Ragline's hybrid with both its convex fusion,
α = 0.5 over per-query min-max scores, and RRF k = 60; the peers' with their own RRF k = 60; 100
candidates per leg everywhere): nDCG@10 and Recall@100 from the k = 100 pass, p50/p95 latency at k = 10
and k = 100, indexing throughput (chunks/s until written, and until every mode has answered one query,
so lazily built indexes count) and memory.

Each store lives in its own worker process (``bench/peer_worker.py``): peak RSS is that process's
``VmHWM``, reset once the data was loaded (loading it and generating filler peaked higher than some
stores), and the delta is over its RSS at that point, before the store's SDK was imported.
OpenSearch keeps its index in the JVM, whose RSS is reported beside it. Stores are indexed one at a
time; queries then run in blocks interleaved across the stores, so other load on the machine falls on
all of them alike.

OpenSearch is written by ``--opensearch-writers`` side by side (ingestion functions write concurrently) and
queried with the segments its merge policy left (``--force-merge`` merges it into one segment first).

``--filler N`` first adds N generated chunks under 20 other tenants to the same physical store (Ragline:
other scopes; the peers: the same table/collection, told apart by a ``tenant`` field that every query
filters on), so latency is measured on a pooled, multi-tenant store.

The peers are the ``bench`` extra, kept out of ``dev`` so ``make test`` never installs them:

    .venv/bin/pip install -e '.[dev,bench]'
    infra/opensearch-local/run start 0       # prints OPENSEARCH_URL=...
    .venv/bin/python bench/peers.py --opensearch-url $OPENSEARCH_URL
    .venv/bin/python bench/peers.py --filler 95000 --stores ragline,milvus-lite,lancedb
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[1]
STORES = ("ragline", "ragline-opensearch", "milvus-lite", "lancedb")
NODE_PID = ROOT / "infra" / "opensearch-local" / "target" / "node.pid"


def prepare(args: argparse.Namespace, path: Path) -> int:
    """Loads SciFact and its cached vectors once; each worker reads them from ``path``."""
    from ragline.adapters.embedded.embedding_cache import EmbeddingCache
    from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
    from ragline.services.evaluation import load_beir

    data = load_beir(args.dataset, args.split)
    embedder = EmbeddingCache(LocalOnnxEmbedder(), args.cache)
    ids = list(data.corpus)
    texts = [f"{data.corpus[i][0]}\n{data.corpus[i][1]}".strip() for i in ids]
    qids = list(data.queries)
    t0 = time.perf_counter()
    vectors = embedder.embed_documents(texts)
    qvectors = embedder.embed_documents([data.queries[q] for q in qids])
    print(f"vectors for {len(texts)} docs + {len(qids)} queries in {time.perf_counter() - t0:.1f}s")
    print(f"embedding cache: {embedder.hits} hits, {embedder.misses} misses")
    payload = {
        "ids": ids,
        "texts": texts,
        "vectors": vectors,
        "qids": qids,
        "queries": [data.queries[q] for q in qids],
        "qvectors": qvectors,
        "qrels": data.qrels,
        "vocab": sorted({w for t in texts[:500] for w in t.lower().split() if w.isalpha()}),
        "filler": args.filler,
    }
    path.write_bytes(pickle.dumps(payload))
    return min(len(qids), args.queries or len(qids))


class Worker:
    """One store's process (``bench/peer_worker.py``); ``ask`` sends a command and waits for its answer."""

    def __init__(self, name: str, data: Path, url: str, pid: int) -> None:
        self.name = name
        script = Path(__file__).with_name("peer_worker.py")
        self.proc = subprocess.Popen(
            [sys.executable, str(script), str(data), name, url, str(pid)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ask(self, **cmd: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        for line in self.proc.stdout:
            if line.startswith("@@ "):
                answer: dict[str, Any] = json.loads(line[3:])
                return answer
            print(f"[{self.name}] {line}", end="", file=sys.stderr)
        raise RuntimeError(f"{self.name}: worker exited ({self.proc.wait()})")


def measure(workers: list[Worker], n_queries: int, block: int) -> list[dict[str, Any]]:
    """Index one store at a time (the others idle), then query in interleaved blocks."""
    results = []
    for w in workers:
        started = time.perf_counter()
        results.append({"store": w.name, **w.ask(op="index")})
        print(f"{w.name}: searchable after {time.perf_counter() - started:.0f}s", flush=True)
    passes: dict[tuple[str, str, int], dict[str, Any]] = {}
    for k in (10, 100):
        for b, lo in enumerate(range(0, n_queries, block)):
            for i in range(len(workers)):  # a different store goes first in each block
                w, r = workers[(i + b) % len(workers)], results[(i + b) % len(workers)]
                for mode in r["modes"]:
                    got = w.ask(op="pass", mode=mode, k=k, lo=lo, hi=min(lo + block, n_queries))
                    acc = passes.setdefault((w.name, mode, k), {"lat": [], "ndcg": 0.0, "recall": 0.0})
                    acc["lat"] += got["lat"]
                    acc["ndcg"] += got["ndcg"]
                    acc["recall"] += got["recall"]
        print(f"k={k}: done", flush=True)
    for w, r in zip(workers, results, strict=True):
        r.update(w.ask(op="close"))
        w.proc.wait()
        r["queries"] = n_queries
        r["modes"] = {mode: summary(passes, w.name, mode, n_queries) for mode in r["modes"]}
    return results


def summary(
    passes: dict[tuple[str, str, int], dict[str, Any]], name: str, mode: str, n: int
) -> dict[str, float]:
    out = {"ndcg": passes[name, mode, 100]["ndcg"] / n, "recall": passes[name, mode, 100]["recall"] / n}
    for k in (10, 100):
        lat = sorted(passes[name, mode, k]["lat"])
        out[f"p50_{k}"] = statistics.median(lat)
        out[f"p95_{k}"] = lat[int(0.95 * (len(lat) - 1))]
    return out


def row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def table(results: list[dict[str, Any]], header: str) -> str:
    quality = ["store", "mode", "nDCG@10", "Recall@100"]
    quality += [f"{p} ms (k={k})" for k in (10, 100) for p in ("p50", "p95")]
    lines = [header, "", row(quality), row(["---"] * 2 + ["---:"] * 6)]
    for r in results:
        for mode, m in r["modes"].items():
            cells = [f"{m['ndcg']:.4f}", f"{m['recall']:.4f}"]
            cells += [f"{m[f'{p}_{k}']:.1f}" for k in (10, 100) for p in ("p50", "p95")]
            lines.append(row([r["store"], mode, *cells]))
    cost = ["store", "chunks", "write chunks/s", "searchable chunks/s", "merge/compact s", "on disk MiB"]
    cost += ["peak RSS MiB", "RSS Δ MiB"]
    lines += ["", row(cost), row(["---"] + ["---:"] * 7)]
    for r in results:
        delta = f"{r['peak_mib'] - r['baseline_mib']:,.0f}"
        if r["server_mib"]:
            delta += f" (+ OpenSearch JVM {r['server_mib']:,.0f})"
        cells = [f"{r['chunks']:,}", f"{r['write_rate']:,.0f}", f"{r['rate']:,.0f}", f"{r['maintain_s']:.1f}"]
        disk = f"{r.get('index_bytes', r['disk_mib'] * 2**20) / 2**20:,.0f}"  # OpenSearch: the index's
        cells += [disk, f"{r['peak_mib']:,.0f}", delta]
        lines.append(row([r["store"], *cells]))
    for r in results:
        if "segments" in r:
            per_chunk = r["index_bytes"] / r["chunks"]
            note = f"{r['segments']} segments when queried, {per_chunk:,.0f} bytes per chunk on disk"
            lines += ["", f"{r['store']}: {note}"]
    lines += ["", "Versions: " + "; ".join(f"{r['store']}: {r['versions']}" for r in results)]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--split", default="train")
    ap.add_argument("--cache", type=Path, default=ROOT / ".ragline" / "bench-cache" / "embeddings.sqlite")
    ap.add_argument("--opensearch-url", default="", help="adds ragline-opensearch to the stores")
    ap.add_argument("--opensearch-pid", type=int, default=0, help="the node's pid (default: run's pid file)")
    ap.add_argument("--filler", type=int, default=0, help="extra chunks under 20 other tenants")
    ap.add_argument("--queries", type=int, default=0, help="only the first N queries (a smoke run)")
    ap.add_argument("--stores", default="", help=f"comma-separated subset of {','.join(STORES)}")
    ap.add_argument("--block", type=int, default=100, help="queries per interleaved block")
    ap.add_argument(
        "--opensearch-writers", type=int, default=1, help="OpenSearch: tenants' chunks written side by side"
    )
    ap.add_argument(
        "--force-merge", action="store_true", help="merge OpenSearch's index into one segment before queries"
    )
    args = ap.parse_args()

    names = args.stores.split(",") if args.stores else [s for s in STORES if s != "ragline-opensearch"]
    if args.opensearch_url and not args.stores:
        names.insert(1, "ragline-opensearch")
    if "ragline-opensearch" in names and not args.opensearch_pid and NODE_PID.exists():
        args.opensearch_pid = int(NODE_PID.read_text())
    os.environ["RAGLINE_BENCH_OPENSEARCH_WRITERS"] = str(args.opensearch_writers)  # read by the worker
    if args.force_merge:
        os.environ["RAGLINE_BENCH_FORCE_MERGE"] = "1"  # read by the OpenSearch worker
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data.pkl"
        n_queries = prepare(args, data)
        pids = {"ragline-opensearch": args.opensearch_pid}
        workers = [Worker(n, data, args.opensearch_url, pids.get(n, 0)) for n in names]
        results = measure(workers, n_queries, args.block)
    header = (
        f"SciFact {args.split}: {results[0]['queries']} queries, {results[0]['chunks'] - args.filler:,} "
        f"chunks + {args.filler:,} filler chunks"
    )
    print()
    print(table(results, header))
    return 0


if __name__ == "__main__":
    sys.exit(main())
