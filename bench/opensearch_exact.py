"""A pool without an HNSW graph: what the write saves against what a pooled tenant's kNN then costs.

The write's floor without the graph is ~0.55 ms of node CPU per chunk (docs/benchmarks.md, "A cheaper
write"), so a pool index without a graph would halve the write for every pooled chunk. Its kNN would
then be exact: a ``script_score`` (``knn_score``, cosine) over the tenant's own chunks, cost linear in
the tenant's size. This bench measures both sides on one node, in one run:

- two indexes of ``--chunks`` random unit vectors (384-d) of three tenants (``--tenants``, sizes) and
  filler tenants of 100: one with the store's graph (lucene HNSW, ``requests.HNSW``), one with
  ``index.knn: false`` (vectors as doc values, no graph);
- node CPU per chunk of each load (``_bulk`` of 500, then a refresh; merges waited for);
- p50/p95 of a routed, tenant-filtered kNN (k=10, the store's 100 candidates) on the graph, and of the
  exact ``script_score`` on the other index, for each named tenant.

    infra/opensearch-local/run start 0
    .venv/bin/python bench/opensearch_exact.py --opensearch-url $OPENSEARCH_URL \\
        --node-pid $(cat infra/opensearch-local/target/node.pid)
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
from bench.opensearch_write import jvm_cpu_seconds
from opensearchpy import OpenSearch, helpers

from ragline.adapters.opensearch import requests as rq


def pct(ms: list[float], p: float) -> float:
    s = sorted(ms)
    return s[min(len(s) - 1, int(p * len(s)))]


def create(client: OpenSearch, index: str, graph: bool) -> None:
    vector: dict[str, Any] = {"type": "knn_vector", "dimension": 384}
    if graph:
        m, ef = rq.HNSW
        vector["method"] = {
            "name": "hnsw", "engine": "lucene", "space_type": "cosinesimil",
            "parameters": {"m": m, "ef_construction": ef},
        }  # fmt: skip
    client.indices.delete(index=index, ignore=[404])
    client.indices.create(
        index=index,
        body={
            "settings": {"index": {"knn": graph, "number_of_shards": 1, "number_of_replicas": 0}},
            "mappings": {"properties": {"tenant": {"type": "keyword"}, "v": vector}},
        },
    )


def load(client: OpenSearch, index: str, vectors: np.ndarray, tenants: list[str], pid: int | None) -> float:
    """Node CPU ms per chunk of writing every vector, refreshed and merged."""

    def actions() -> Iterator[dict[str, Any]]:
        for i, (v, t) in enumerate(zip(vectors, tenants, strict=True)):
            yield {"_index": index, "_id": str(i), "_routing": t, "_source": {"tenant": t, "v": v.tolist()}}

    cpu0 = jvm_cpu_seconds(pid) if pid else 0.0
    helpers.bulk(client, actions(), chunk_size=500, request_timeout=120)
    client.indices.refresh(index=index)
    for _ in range(240):
        if client.indices.stats(index=index, metric="merge")["_all"]["total"]["merges"]["current"] == 0:
            break
        time.sleep(0.5)
    return 1000 * (jvm_cpu_seconds(pid) - cpu0) / len(vectors) if pid else float("nan")


def latencies(client: OpenSearch, index: str, tenant: str, graph: bool, queries: np.ndarray) -> list[float]:
    ms = []
    for q in queries:
        filt = {"term": {"tenant": tenant}}
        query: dict[str, Any]
        if graph:
            query = {"knn": {"v": {"vector": q.tolist(), "k": rq.KNN_CANDIDATES, "filter": filt}}}
        else:
            params = {"field": "v", "query_value": q.tolist(), "space_type": "cosinesimil"}
            script = {"lang": "knn", "source": "knn_score", "params": params}
            query = {"script_score": {"query": {"bool": {"filter": filt}}, "script": script}}
        t0 = time.perf_counter()
        client.search(index=index, routing=tenant, body={"size": 10, "_source": False, "query": query})
        ms.append((time.perf_counter() - t0) * 1000)
    return ms


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opensearch-url", required=True)
    ap.add_argument("--node-pid", type=int, default=None, help="OpenSearch JVM pid, for node CPU")
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--tenants", default="1000,10000,50000", help="sizes of the tenants searched")
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args()
    sizes = [int(s) for s in args.tenants.split(",")]
    tenants = [f"t{s}" for s in sizes for _ in range(s)]
    tenants += [f"small{i // 100}" for i in range(max(0, args.chunks - len(tenants)))]
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((len(tenants), 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    order = rng.permutation(len(tenants))  # tenants interleaved, as concurrent ingestion writes them
    vectors, tenants = vectors[order], [tenants[i] for i in order]
    queries = rng.standard_normal((args.queries + 10, 384)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    client = OpenSearch(args.opensearch_url, timeout=300)
    rows = []
    for graph in (True, False):
        index = f"bench-exact-{'graph' if graph else 'flat'}"
        create(client, index, graph)
        cpu = load(client, index, vectors, tenants, args.node_pid)
        for s in sizes:
            ms = latencies(client, index, f"t{s}", graph, queries)[10:]  # 10 warm-up searches
            rows.append((graph, cpu, s, pct(ms, 0.5), pct(ms, 0.95)))
        client.indices.delete(index=index)
    print(f"{len(tenants):,} chunks, {args.queries} queries a tenant, k=10")
    print("| index | node CPU ms/chunk (write) | tenant size | kNN p50 ms | kNN p95 ms |")
    print("|---|---:|---:|---:|---:|")
    for graph, cpu, s, p50, p95 in rows:
        kind = "graph (filtered HNSW)" if graph else "no graph (exact `knn_score`)"
        print(f"| {kind} | {cpu:.2f} | {s:,} | {p50:.1f} | {p95:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
