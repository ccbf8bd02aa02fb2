"""Hosting search vs one hybrid search: SciFact in the embedded SQLite store and OpenSearch, one run.

For each store the corpus is indexed once (``ragline eval``'s indexing: one chunk of title + text per
document), then every query runs, interleaved so both see the same machine noise, through:
- ``search``: one hybrid search of the raw query, k = ``--top-k`` (``SearchService``, as the route runs);
- ``hosting fast``: ``HostingSearchService`` (topK ``--top-k``, maxEvals ``--max-evals``), pooled order;
- ``hosting accurate``: the same, reranked, only when the default wiring has a reranker (it has none
  without a model endpoint).

Offline throughout: ``Settings`` are built here, not from the environment, so the planner is the
``OfflinePlanner`` and the embedder the offline MiniLM (document vectors cached in ``--cache``, shared
with ``bench/retrieval.py``). Latency is the whole service call per query (query embedding, every store
search, the planner, metering). State lives in a fresh home under /tmp; the OpenSearch index is new and
dropped at the end.

    .venv/bin/python bench/hosting_search.py --opensearch-url http://127.0.0.1:9200
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ragline.adapters.embedded.embedding_cache import EmbeddingCache
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.api import HostingSearchRequest, SearchRequest
from ragline.domain.metrics import dedupe_documents, ndcg_at, recall_at
from ragline.domain.models import TenantScope
from ragline.ports import VectorStoreProvider
from ragline.services.authentication import Principal
from ragline.services.evaluation import BeirDataset, load_beir
from ragline.wiring import Container

ROOT = Path(__file__).parents[1]
TENANT = "local"
NAMESPACE = "scifact"
WARMUP = 3
"""Queries run (unscored, untimed) before each store's measurement: model and connection warm-up."""


@dataclass
class Tally:
    ndcg: float = 0.0
    recall: float = 0.0
    rounds: int = 0
    queries: int = 0
    latency_ms: list[float] = field(default_factory=list)
    exits: Counter[str] = field(default_factory=Counter)

    def add(
        self, ranked: list[str], qrels: dict[str, int], k: int, ms: float, rounds: int, queries: int
    ) -> None:
        self.ndcg += ndcg_at(ranked, qrels, 10)
        self.recall += recall_at(ranked, qrels, k)
        self.rounds += rounds
        self.queries += queries
        self.latency_ms.append(ms)


def run_store(
    c: Container, data: BeirDataset, qids: list[str], top_k: int, max_evals: int
) -> dict[str, Tally]:
    principal = Principal.operator(TENANT)
    methods = ["search", "hosting fast"] + (["hosting accurate"] if c.reranker is not None else [])
    tallies = {m: Tally() for m in methods}

    def one(method: str, text: str) -> tuple[list[str], float, int, int, str]:
        t0 = time.perf_counter()
        if method == "search":
            request = SearchRequest.model_validate({"query": text, "mode": "hybrid", "k": top_k})
            out = c.search.search(principal, NAMESPACE, request)
            ms = (time.perf_counter() - t0) * 1000
            return [h.document_id for h in out.hits], ms, 1, 1, ""
        hosting = HostingSearchRequest.model_validate(
            {"query": text, "namespaces": [NAMESPACE], "mode": method.split()[1], "topK": top_k,
             "maxEvals": max_evals}
        )  # fmt: skip
        res = c.hosting_search.search(principal, hosting)
        ms = (time.perf_counter() - t0) * 1000
        return [h.document_id for h in res.chunks], ms, len(res.rounds), res.total_queries, res.exit_reason

    for qid in qids[:WARMUP]:
        for m in methods:
            one(m, data.queries[qid])
    for n, qid in enumerate(qids, start=1):
        for m in methods:  # interleaved: every method sees the same moments of machine noise
            docs, ms, rounds, queries, exit_reason = one(m, data.queries[qid])
            tallies[m].add(dedupe_documents(docs), data.qrels[qid], top_k, ms, rounds, queries)
            if exit_reason:
                tallies[m].exits[exit_reason] += 1
        if n % 100 == 0:
            print(f"  {n}/{len(qids)} queries", file=sys.stderr, flush=True)
    return tallies


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--split", default="train")
    ap.add_argument("--queries", type=int, default=0, help="first N queries with qrels (0: all)")
    ap.add_argument("--top-k", type=int, default=15)
    ap.add_argument("--max-evals", type=int, default=3)
    ap.add_argument(
        "--opensearch-url",
        default=os.environ.get("RAGLINE_TEST_OPENSEARCH_URL", ""),
        help="default: $RAGLINE_TEST_OPENSEARCH_URL; empty: the embedded store only",
    )
    ap.add_argument("--cache", type=Path, default=ROOT / ".ragline" / "bench-cache" / "embeddings.sqlite")
    args = ap.parse_args()

    data = load_beir(args.dataset, args.split)
    qids = list(data.queries)[: args.queries or None]
    embedder = EmbeddingCache(LocalOnnxEmbedder(), args.cache)
    tmp = tempfile.TemporaryDirectory(prefix="ragline-bench-hosting-")
    home = Path(tmp.name)

    stores: list[tuple[str, VectorStoreProvider]] = [
        ("sqlite", SqliteVectorStoreProvider(home / "sqlite" / "store.sqlite", dimension=embedder.dimension))
    ]
    os_provider = None
    if args.opensearch_url:
        os_provider = OpenSearchVectorStoreProvider(
            build_client(Settings(opensearch_url=args.opensearch_url)),
            index=f"bench-hosting-{uuid.uuid4().hex[:8]}",
            dimension=embedder.dimension,
            refresh="false",
        )
        stores.append(("opensearch", os_provider))

    results: list[tuple[str, dict[str, Tally], float]] = []
    scope = TenantScope(tenant_id=TENANT, namespace_id=NAMESPACE)
    try:
        for name, provider in stores:
            # Settings(...) is pure: no model endpoint, so the offline planner and no reranker.
            c = Container(Settings(home=home / name), embedder=embedder, stores=provider)
            t0 = time.perf_counter()
            c.evaluation.index(scope, data)
            if provider is os_provider:
                os_provider.client.indices.refresh(index=os_provider.index)
                os_provider.client.indices.forcemerge(
                    index=os_provider.index, max_num_segments=1, request_timeout=600
                )
            took = time.perf_counter() - t0
            print(f"{name}: indexed {len(data.corpus)} docs in {took:.1f}s", file=sys.stderr)
            t0 = time.perf_counter()
            tallies = run_store(c, data, qids, args.top_k, args.max_evals)
            took = time.perf_counter() - t0
            print(f"{name}: {len(qids)} queries in {took:.0f}s", file=sys.stderr)
            results.append((name, tallies, took))
    finally:
        if os_provider is not None:
            os_provider.drop()

    n = len(qids)
    print(
        f"\nSciFact {args.split}: {n} of {len(data.queries)} queries with qrels, {len(data.corpus)} docs;"
        f" top_k {args.top_k}, max_evals {args.max_evals}, offline planner and embedder\n"
    )
    columns = [
        "store",
        "method",
        f"Recall@{args.top_k}",
        "nDCG@10",
        "mean rounds",
        "mean queries/run",
        "mean ms",
        "p95 ms",
        "exit reasons",
    ]
    print("| " + " | ".join(columns) + " |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for name, tallies, _ in results:
        for method, t in tallies.items():
            lat = sorted(t.latency_ms)
            exits = ", ".join(f"{r} {k}" for r, k in t.exits.most_common()) or "—"
            cells = [
                name,
                method,
                f"{t.recall / n:.4f}",
                f"{t.ndcg / n:.4f}",
                f"{t.rounds / n:.2f}",
                f"{t.queries / n:.2f}",
                f"{statistics.mean(lat):.0f}",
                f"{lat[int(0.95 * (len(lat) - 1))]:.0f}",
                exits,
            ]
            print("| " + " | ".join(cells) + " |")
    print("\n" + ", ".join(f"{name}: {took:.0f} s for the queries" for name, _, took in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
