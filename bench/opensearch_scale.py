"""OpenSearch at scale: ~1M chunks across ~1,000 tenants, written and searched through Ragline's store,
LanceDB beside it (issue 39, item 5).

    PYTHONPATH=shared .venv/bin/python bench/opensearch_scale.py --opensearch-url $OPENSEARCH_URL \\
        --node-pid $(cat infra/opensearch-local/target/node.pid) [--scale 1.0] [--runs 3] [--lancedb]

Tenants: ``--large`` tenants of ``--large-size`` chunks (default 9 × 100,000) and ``--small`` tenants of
``--small-size`` (default 990 × 100), all scaled by ``--scale`` (0.1 → ~100k chunks, 0.3 → ~300k). Texts
are real English passages of 100 words (bench/filler_text.py: installed packages' docs, /usr/share/doc,
man pages); there are fewer distinct passages on this machine than chunks, so each tenant reads its own
window of the passage list and large tenants' windows overlap. Vectors are the passages' 384-d
stand-ins (a seeded random projection of hashed tokens: near for passages that share words; embedding
1M texts with the offline model would take hours here). Chunks go in documents of 100, written by
``--writers`` threads through ``upsert`` + ``publish`` (as ingestion does) with the store's shipped
settings (``OpenSearchVectorStoreProvider.from_settings``), so the index layout, routing and encoding
are whatever Ragline deploys (``--engine faiss``: a domain's, as the template sets it; the node needs
k-NN's native library, which the Maven zip does not carry). The index is kept (``--index-prefix``) and
reused by the next run of the same size: ``--runs`` repeats only the searches.

Searches: for each tenant size, ``--queries`` hybrid searches (k = 10, Ragline's default convex fusion,
100 candidates per leg) of sampled tenants, each query six consecutive words of one of the tenant's own
passages with its stand-in vector, small and large interleaved; p50/p95 per run, then the median of
the runs and their spread. Writes: chunks/s until published and searchable, and the node's CPU per
chunk (``--node-pid``). Memory: the node's heap after the searches and how much of the index's files
the page cache holds (``fincore``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).parent))

import filler_text
from opensearch_write import jvm_cpu_seconds
from ragline import errors
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider
from ragline.config import Settings
from ragline.domain.models import Chunk, ChunkMetadata, HybridQuery, TenantScope

DIM = 384
DOC_CHUNKS = 100
NAMESPACE = "docs"


class Plan:
    """Which passages each tenant holds: tenant name → (first passage, chunk count)."""

    def __init__(self, args: argparse.Namespace, passages: int) -> None:
        large, small = round(args.large_size * args.scale), args.small_size
        n_small = max(1, round(args.small * args.scale))
        self.tenants: dict[str, tuple[int, int]] = {}
        rng = random.Random(5)
        for i in range(args.large):
            self.tenants[f"large-{i:02d}"] = (rng.randrange(passages), large)
        for i in range(n_small):
            self.tenants[f"small-{i:04d}"] = (rng.randrange(passages), small)
        self.passages = passages

    @property
    def chunks(self) -> int:
        return sum(n for _, n in self.tenants.values())

    def indexes(self, tenant: str) -> list[int]:
        start, n = self.tenants[tenant]
        return [(start + i) % self.passages for i in range(n)]


def load(provider: OpenSearchVectorStoreProvider, plan: Plan, texts: list[str], vectors: NDArray[np.float32],
         writers: int, node_pid: int | None) -> dict[str, float]:  # fmt: skip
    """Every tenant's documents through ``upsert`` + ``publish``; chunks/s and node CPU per chunk."""
    meta = ChunkMetadata(filename="passages.txt")
    jobs = [(t, d) for t, (_, n) in plan.tenants.items() for d in range(0, n, DOC_CHUNKS)]
    random.Random(3).shuffle(jobs)  # tenants interleave, as concurrent ingestion runs do

    def write(job: tuple[str, int]) -> int:
        tenant, first = job
        ids = plan.indexes(tenant)[first : first + DOC_CHUNKS]
        doc = f"doc-{first // DOC_CHUNKS:05d}"
        chunks = [
            Chunk(
                document_id=doc,
                sequence_number=i,
                text=texts[p],
                metadata=meta,
                embedding=tuple(vectors[p].tolist()),
            )
            for i, p in enumerate(ids)
        ]
        store = provider.scoped(TenantScope(tenant_id=tenant, namespace_id=NAMESPACE))
        for attempt in range(10):  # as the ingestion queue redelivers: a tenant being moved says retry
            try:
                store.upsert(chunks, generation=1)
                store.publish(doc, generation=1)
                return len(chunks)
            except errors.Throttled:
                time.sleep(1 + attempt)
        raise RuntimeError(f"{tenant}/{doc}: still throttled")

    cpu0 = jvm_cpu_seconds(node_pid) if node_pid else 0.0
    started = time.perf_counter()
    done = 0
    with ThreadPoolExecutor(writers) as pool:
        for n in pool.map(write, jobs):
            done += n
            if done % 50_000 < DOC_CHUNKS:
                print(f"  {done:,} chunks, {done / (time.perf_counter() - started):,.0f}/s", flush=True)
    published = time.perf_counter() - started
    provider.refresh_now()
    searchable = time.perf_counter() - started
    cpu = (jvm_cpu_seconds(node_pid) - cpu0) if node_pid else float("nan")
    writes = {
        "chunks": done,
        "published_per_s": done / published,
        "searchable_per_s": done / searchable,
        "node_cpu_ms_per_chunk": 1000 * cpu / done,
    }
    print(f"writes: {json.dumps(writes)}", flush=True)  # printed now: kept if a later step fails
    return writes


def queries(plan: Plan, texts: list[str], per_size: int) -> list[tuple[str, str, str]]:
    """(size, tenant, query text): six consecutive words of one of the tenant's own passages."""
    rng = random.Random(9)
    out = []
    for size in ("small", "large"):
        tenants = [t for t in plan.tenants if t.startswith(size)]
        for _ in range(per_size):
            tenant = rng.choice(tenants)
            words = texts[rng.choice(plan.indexes(tenant))].split()
            at = rng.randrange(max(1, len(words) - 6))
            out.append((size, tenant, " ".join(words[at : at + 6])))
    rng.shuffle(out)
    return out


def search_ragline(
    provider: OpenSearchVectorStoreProvider, qs: list[tuple[str, str, str]]
) -> dict[str, list[float]]:
    vectors = filler_text.stand_in_vectors([q for _, _, q in qs], DIM, seed=7)
    times: dict[str, list[float]] = {"small": [], "large": []}
    for (size, tenant, text), v in zip(qs, vectors, strict=True):
        store = provider.scoped(TenantScope(tenant_id=tenant, namespace_id=NAMESPACE))
        t = time.perf_counter()
        store.search(HybridQuery(text=text, vector=tuple(v.tolist()), k=10))
        times[size].append(1000 * (time.perf_counter() - t))
    return times


class Lance:
    """LanceDB with the same rows: one table, a ``tenant`` column every query filters on (BITMAP index),
    native FTS, exact cosine kNN, RRF — as bench/peer_stores.py's LanceDbStore, over many tenants."""

    def __init__(self, workdir: Path, plan: Plan, texts: list[str], vectors: NDArray[np.float32]) -> None:
        os.environ.setdefault("LANCEDB_LOG", "error")
        import lancedb
        import pyarrow as pa
        from lancedb.index import FTS

        self.db = lancedb.connect(str(workdir / "lancedb"))
        started = time.perf_counter()
        table = None
        for tenant in plan.tenants:
            ids = plan.indexes(tenant)
            batch = pa.table(
                {
                    "id": [f"{tenant}/{i}" for i in range(len(ids))],
                    "tenant": [tenant] * len(ids),
                    "text": [texts[p] for p in ids],
                    "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors[ids].reshape(-1)), DIM),
                }
            )
            if table is None:
                table = self.db.create_table("chunks", data=batch)
            else:
                table.add(batch)
        assert table is not None
        table.create_index("text", config=FTS())
        table.create_scalar_index("tenant", index_type="BITMAP")  # deprecated in 0.40, still served
        table.optimize()
        self.table = table
        self.write_s = time.perf_counter() - started

    def search(self, qs: list[tuple[str, str, str]]) -> dict[str, list[float]]:
        from lancedb.rerankers import RRFReranker

        vectors = filler_text.stand_in_vectors([q for _, _, q in qs], DIM, seed=7)
        times: dict[str, list[float]] = {"small": [], "large": []}
        for (size, tenant, text), v in zip(qs, vectors, strict=True):
            t = time.perf_counter()
            (
                self.table.search(query_type="hybrid", fts_columns="text")
                .vector(v)
                .text(text)
                .distance_type("cosine")
                .rerank(RRFReranker(K=60))
                .where(f"tenant = '{tenant}'", prefilter=True)
                .limit(100)
                .to_arrow()
            )
            times[size].append(1000 * (time.perf_counter() - t))
        return times


def node_memory(provider: OpenSearchVectorStoreProvider, node_home: str | None) -> dict[str, Any]:
    stats = provider.client.nodes.stats(metric="jvm,indices")
    node = next(iter(stats["nodes"].values()))
    out: dict[str, Any] = {
        "heap_used_mb": node["jvm"]["mem"]["heap_used_in_bytes"] / 2**20,
        "heap_max_mb": node["jvm"]["mem"]["heap_max_in_bytes"] / 2**20,
        "store_mb": node["indices"]["store"]["size_in_bytes"] / 2**20,
    }
    if node_home is None:  # the node says where its data lives (a node on this machine)
        found = provider.client.nodes.info(metric="settings", filter_path="nodes.*.settings.path.data")
        node_home = str(Path(next(iter(found["nodes"].values()))["settings"]["path"]["data"][0]).parent)
    if Path(node_home, "data").is_dir():  # the bench's indexes' files (folders named by index uuid)
        settings = provider.client.indices.get_settings(index=f"{provider.index}*")
        uuids = {s["settings"]["index"]["uuid"] for s in settings.values()}
        files = [str(p) for p in Path(node_home, "data").rglob("*") if p.is_file() and uuids & set(p.parts)]
        cached = 0
        for i in range(0, len(files), 500):
            res = subprocess.run(
                ["fincore", "--bytes", "--noheadings", "--output", "RES", *files[i : i + 500]],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            cached += sum(int(x) for x in res.stdout.split() if x.isdigit())
        out["page_cache_mb"] = cached / 2**20
    return out


def print_layout(provider: OpenSearchVectorStoreProvider) -> None:
    """The model's indexes (pool generations, silos, fences, placement) and their chunks."""
    found = provider.client.cat.indices(index=f"{provider.index}-*", format="json", h="index,pri,docs.count")
    print("indexes: " + ", ".join(f"{i['index']} ({i['pri']} pri, {int(i['docs.count']):,})" for i in found))


def summary(runs: list[dict[str, list[float]]], size: str) -> str:
    p50 = [statistics.median(r[size]) for r in runs]
    p95 = [statistics.quantiles(r[size], n=20)[18] for r in runs]
    return (
        f"{statistics.median(p50):.1f} ({min(p50):.1f}–{max(p50):.1f}) | "
        f"{statistics.median(p95):.1f} ({min(p95):.1f}–{max(p95):.1f})"
    )


def report(
    args: argparse.Namespace,
    plan: Plan,
    writes: dict[str, float],
    memory: dict[str, Any],
    runs: list[dict[str, list[float]]],
    lance_runs: list[dict[str, list[float]]],
) -> None:
    tenants = f"{len(plan.tenants):,} tenants (scale {args.scale})"
    print(f"\n{plan.chunks:,} chunks, {tenants}, {os.cpu_count()} cores")
    if writes:
        print(
            f"writes ({args.writers} writers): {writes['published_per_s']:,.0f} chunks/s published, "
            f"{writes['searchable_per_s']:,.0f} searchable; "
            f"node CPU {writes['node_cpu_ms_per_chunk']:.2f} ms/chunk"
        )
    print(f"memory: {json.dumps({k: round(v, 1) for k, v in memory.items()})}")
    print(f"\n| store | tenant size | hybrid p50 ms (median of {args.runs} runs, min–max) | p95 ms |")
    print("|---|---|---|---|")
    for size in ("small", "large"):
        chunks = plan.tenants[next(t for t in plan.tenants if t.startswith(size))][1]
        print(f"| Ragline on OpenSearch | {chunks:,} | {summary(runs, size)} |")
        if lance_runs:
            print(f"| LanceDB | {chunks:,} | {summary(lance_runs, size)} |")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--opensearch-url", default=os.environ.get("OPENSEARCH_URL", ""))
    parser.add_argument("--node-pid", type=int)
    parser.add_argument(
        "--node-home", help="the node's home, for fincore (default: the one the node reports)"
    )
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--large", type=int, default=9)
    parser.add_argument("--large-size", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=990)
    parser.add_argument("--small-size", type=int, default=100)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--queries", type=int, default=200, help="per tenant size and run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--index-prefix", default="bench-scale")
    parser.add_argument("--lancedb", action="store_true")
    parser.add_argument("--engine", choices=["lucene", "faiss"], default="lucene", help="faiss: a domain's")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not args.opensearch_url:
        parser.error("--opensearch-url (or OPENSEARCH_URL) is required")

    texts = filler_text.passages(1_000_000)
    plan = Plan(args, len(texts))
    vectors = filler_text.stand_in_vectors(texts, DIM, seed=7)
    provider = OpenSearchVectorStoreProvider.from_settings(
        Settings(
            opensearch_url=args.opensearch_url,
            opensearch_index_prefix=args.index_prefix,
            opensearch_engine=args.engine,
        ),
        dimension=DIM,
        model_id=f"scale-{plan.chunks}",
    )
    provider.ensure_index()
    provider.refresh_now()
    have = int(provider.client.count(index=provider.index)["count"])
    writes: dict[str, float] = {}
    if have < plan.chunks:
        print(f"writing {plan.chunks:,} chunks of {len(plan.tenants):,} tenants ({have:,} there)", flush=True)
        provider.drop()
        provider.ensure_index()
        writes = load(provider, plan, texts, vectors, args.writers, args.node_pid)
    print_layout(provider)
    qs = queries(plan, texts, args.queries)
    search_ragline(provider, qs[:50])  # warm: the first searches read the files into the page cache
    runs = [search_ragline(provider, qs) for _ in range(args.runs)]
    memory = node_memory(provider, args.node_home)
    lance_runs: list[dict[str, list[float]]] = []
    lance_write = float("nan")
    if args.lancedb:
        with tempfile.TemporaryDirectory() as d:
            lance = Lance(Path(d), plan, texts, vectors)
            lance_write = lance.write_s
            lance.search(qs[:50])
            lance_runs = [lance.search(qs) for _ in range(args.runs)]
    provider.close()

    report(args, plan, writes, memory, runs, lance_runs)
    if args.json:
        figures = {"chunks": plan.chunks, "writes": writes, "memory": memory, "runs": runs}
        args.json.write_text(json.dumps({**figures, "lance_runs": lance_runs, "lance_write_s": lance_write}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
