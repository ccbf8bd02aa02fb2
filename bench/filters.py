"""Filtered vs unfiltered hybrid search (issue 29): p50/p95 at ``--chunks`` chunks (20k by default) on
the embedded store and, with ``--opensearch-url``, on OpenSearch.

Chunks: random unit vectors (``--dim``) and 30-word texts from a 2,000-word vocabulary, in 20-chunk
documents; 1 % of documents carry ``tier: gold``, every document names a group among ten. Views: none;
a 1 % filter (``tier = gold``); a user of one group (10 % readable, the readers clause); both. Each
view answers the same ``--queries`` hybrid queries (k = 10, 100 candidates per leg), once to warm,
then timed. The filter runs inside each leg (SQLite: masked rows; OpenSearch: the kNN ``filter``).

    .venv/bin/python bench/filters.py --opensearch-url http://127.0.0.1:44617
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.domain.access import UserContext, document_readers
from ragline.domain.filters import ReadView, parse_filter
from ragline.domain.models import Chunk, ChunkMetadata, HybridQuery, TenantScope
from ragline.ports import VectorStoreProvider

SCOPE = TenantScope(tenant_id="bench", namespace_id="filters")
GOLD = parse_filter({"equals": {"key": "tier", "value": "gold"}})
USER = UserContext.of("u1", ["g0"]).reader_terms()
"""In g0: every gold document too (gold documents are those whose number is a multiple of 100)."""
VIEWS = {
    "unfiltered": None,
    "1% filter": ReadView(GOLD),
    "user (10% readable)": ReadView(readers=USER),
    "1% filter + user": ReadView(GOLD, USER),
}


def corpus(n: int, dim: int, rng: np.random.Generator) -> list[Chunk]:
    words = [f"w{i}" for i in range(2000)]
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    out = []
    for i in range(n):
        doc = i // 20
        meta = ChunkMetadata(
            attributes={"tier": "gold" if doc % 100 == 0 else "plain", "n": float(doc)},
            readers=document_readers(groups=[f"g{doc % 10}"]),
        )
        text = " ".join(random.choices(words, k=30))
        out.append(Chunk(document_id=f"d{doc}", sequence_number=i % 20, text=text, metadata=meta,
                         embedding=tuple(vectors[i].tolist())))  # fmt: skip
    return out


def timed(provider: VectorStoreProvider, queries: list[HybridQuery]) -> dict[str, tuple[float, float, float]]:
    out = {}
    for name, view in VIEWS.items():
        store = provider.scoped(SCOPE, view)
        hits = [len(store.search(q)) for q in queries]  # warm
        times = []
        for q in queries:
            start = time.perf_counter()
            store.search(q)
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        out[name] = (statistics.median(times), times[int(len(times) * 0.95) - 1], statistics.mean(hits))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=20_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--opensearch-url", default="")
    args = ap.parse_args()
    random.seed(7)
    rng = np.random.default_rng(7)
    chunks = corpus(args.chunks, args.dim, rng)
    queries = [
        HybridQuery(
            text=" ".join(random.choices(chunks, k=1)[0].text.split()[:3]),
            vector=tuple(rng.standard_normal(args.dim).tolist()),
            k=10,
        )
        for _ in range(args.queries)
    ]
    providers: list[tuple[str, VectorStoreProvider]] = [
        ("embedded", SqliteVectorStoreProvider(Path(tempfile.mkdtemp()) / "s.sqlite", dimension=args.dim))
    ]
    if args.opensearch_url:
        from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
        from ragline.config import Settings

        client = build_client(Settings(opensearch_url=args.opensearch_url))
        index = f"bench-filters-{uuid.uuid4().hex[:8]}"
        providers.append(
            ("opensearch", OpenSearchVectorStoreProvider(client, index=index, dimension=args.dim))
        )
    print(f"{args.chunks} chunks, dim {args.dim}, {args.queries} hybrid queries, k=10")
    print("| store | view | p50 ms | p95 ms | hits |\n|---|---|---|---|---|")
    for name, provider in providers:
        provider.scoped(SCOPE).upsert(chunks)
        try:
            for view, (p50, p95, hits) in timed(provider, queries).items():
                print(f"| {name} | {view} | {p50:.1f} | {p95:.1f} | {hits:.1f} |")
        finally:
            if hasattr(provider, "drop"):
                provider.drop()
            provider.close()


if __name__ == "__main__":
    main()
