"""Retrieval benchmark: SciFact into the embedded SQLite store and OpenSearch, side by side, one run.

For each store: bulk indexing throughput (vectors precomputed), then for BM25 (keyword), kNN (semantic)
and hybrid (RRF, convex and ``adaptive``, the default): nDCG@10, Recall@30, Recall@100 and per-query
latency p50/p95 of ``store.search`` (embedding excluded: query vectors are computed up front). Each
metric reads a search of its own size — nDCG@10 a search of 10, Recall@30 of 30 (what a reranker of
30 sees), Recall@100 of 100 —, as ``adaptive`` keeps each leg's top ``k // 2`` in a fused ``k``.
``--filler N`` adds N generated chunks under *other* tenants to the same physical store first, so
latency is measured on a pooled, multi-tenant index.

    .venv/bin/python bench/retrieval.py --opensearch-url http://127.0.0.1:9200 --filler 95000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import filler_text
from ragline.adapters.embedded.embedding_cache import EmbeddingCache
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.metrics import dedupe_documents, ndcg_at, recall_at
from ragline.domain.models import Chunk, ChunkMetadata, HybridQuery, KeywordQuery, SemanticQuery, TenantScope
from ragline.ports import VectorStoreProvider
from ragline.services.evaluation import BeirDataset, load_beir

ROOT = Path(__file__).parents[1]
SCOPE = TenantScope(tenant_id="bench", namespace_id="scifact")


def filler_chunks(n: int, dim: int, vocab: list[str], seed: int = 7) -> list[tuple[TenantScope, Chunk]]:
    """``n`` chunks of real English text of other domains under 20 other tenants (:mod:`filler_text`:
    never uniform random words, which overstate how pooled statistics move a tenant's ranking),
    with stand-in vectors. ``vocab`` is no longer used (kept for callers)."""
    texts = filler_text.passages(n)
    vecs = filler_text.stand_in_vectors(texts, dim, seed)
    return [
        (
            TenantScope(tenant_id=f"filler{i % 20}", namespace_id="docs"),
            Chunk(document_id=f"f{i}", sequence_number=0, text=t, embedding=tuple(vecs[i].tolist())),
        )
        for i, t in enumerate(texts)
    ]


def index(
    provider: VectorStoreProvider, chunks: list[Chunk], filler: list[tuple[TenantScope, Chunk]]
) -> float:
    by_scope: dict[TenantScope, list[Chunk]] = {}
    for scope, c in filler:
        by_scope.setdefault(scope, []).append(c)
    for scope, cs in by_scope.items():
        for i in range(0, len(cs), 1000):
            provider.scoped(scope).upsert(cs[i : i + 1000])
    store = provider.scoped(SCOPE)
    started = time.perf_counter()
    for i in range(0, len(chunks), 500):
        store.upsert(chunks[i : i + 500])
    return len(chunks) / (time.perf_counter() - started)


def run_modes(
    provider: VectorStoreProvider, data: BeirDataset, qvecs: dict[str, tuple[float, ...]], k: int = 100
) -> dict[str, dict[str, float]]:
    """nDCG@10 and Recall@``k`` of searches of ``k`` hits, and their latency."""
    store = provider.scoped(SCOPE)
    results: dict[str, dict[str, float]] = {}
    for mode in MODES:
        lat: list[float] = []
        ndcg = recall = 0.0
        for qid, text in data.queries.items():
            v = qvecs[qid]
            q = (
                KeywordQuery(text=text, k=k)
                if mode == "keyword"
                else SemanticQuery(text=text, k=k, vector=v)
                if mode == "semantic"
                else HybridQuery(text=text, k=k, vector=v, candidates=100, fusion=mode.partition(":")[2])  # type: ignore[arg-type]
            )
            t0 = time.perf_counter()
            hits = store.search(q)
            lat.append((time.perf_counter() - t0) * 1000)
            ranked = dedupe_documents([h.chunk.document_id for h in hits])
            ndcg += ndcg_at(ranked, data.qrels[qid], 10)
            recall += recall_at(ranked, data.qrels[qid], k)
        n = len(data.queries)
        lat.sort()
        results[mode] = {
            "ndcg": ndcg / n,
            "recall": recall / n,
            "p50": statistics.median(lat),
            "p95": lat[int(0.95 * (len(lat) - 1))],
        }
    return results


MODES = ("keyword", "semantic", "hybrid:rrf", "hybrid:convex", "hybrid:adaptive")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--split", default="train")
    ap.add_argument("--opensearch-url", default="")
    ap.add_argument("--filler", type=int, default=0, help="extra chunks under other tenants")
    ap.add_argument(
        "--forcemerge", action="store_true", help="merge OpenSearch to one segment before querying"
    )
    ap.add_argument("--cache", type=Path, default=ROOT / ".ragline" / "bench-cache" / "embeddings.sqlite")
    args = ap.parse_args()

    data = load_beir(args.dataset, args.split)
    embedder = EmbeddingCache(LocalOnnxEmbedder(), args.cache)
    ids = list(data.corpus)
    texts = [f"{data.corpus[i][0]}\n{data.corpus[i][1]}".strip() for i in ids]
    t0 = time.perf_counter()
    dvecs = embedder.embed_documents(texts)
    qids = list(data.queries)
    qv = embedder.embed_documents([data.queries[q] for q in qids])
    took = time.perf_counter() - t0
    print(f"embedded {len(texts)} docs + {len(qids)} queries in {took:.1f}s (cached after the first run)")
    qvecs = {q: tuple(qv[i].tolist()) for i, q in enumerate(qids)}
    chunks = [
        Chunk(
            document_id=d,
            sequence_number=0,
            text=t,
            metadata=ChunkMetadata(filename=d),
            embedding=tuple(dvecs[i].tolist()),
        )
        for i, (d, t) in enumerate(zip(ids, texts, strict=True))
    ]
    vocab = sorted({w for t in texts[:500] for w in t.lower().split() if w.isalpha()})
    filler = filler_chunks(args.filler, embedder.dimension, vocab) if args.filler else []

    stores: list[tuple[str, VectorStoreProvider]] = []
    tmp = tempfile.TemporaryDirectory()
    stores.append(
        ("sqlite", SqliteVectorStoreProvider(Path(tmp.name) / "s.sqlite", dimension=embedder.dimension))
    )
    os_provider = None
    if args.opensearch_url:
        os_provider = OpenSearchVectorStoreProvider(
            build_client(Settings(opensearch_url=args.opensearch_url)),
            index=f"bench-{uuid.uuid4().hex[:8]}",
            dimension=embedder.dimension,
            refresh="false",
        )
        stores.append(("opensearch", os_provider))

    rows = []
    for name, provider in stores:
        rate = index(provider, chunks, filler)
        if os_provider is provider:
            os_provider.client.indices.refresh(index=os_provider.index)
            os_provider.client.indices.forcemerge(
                index=os_provider.index, max_num_segments=1, request_timeout=600
            )
        quick = run_modes(provider, data, qvecs, k=10)  # what a chat search asks for: latency at k=10
        thirty = run_modes(provider, data, qvecs, k=30)  # what a reranker of 30 candidates sees
        for mode, r in run_modes(provider, data, qvecs).items():
            ten = {"ndcg": quick[mode]["ndcg"], "p50_10": quick[mode]["p50"], "p95_10": quick[mode]["p95"]}
            rows.append((name, mode, {**r, **ten, "recall30": thirty[mode]["recall"]}, rate))
    if os_provider is not None:
        os_provider.drop()

    header = (
        f"SciFact {args.split}: {len(data.queries)} queries, {len(chunks)} docs, {args.filler} filler chunks"
    )
    print(f"\n{header}\n")
    columns = [
        "store",
        "mode",
        "nDCG@10",
        "Recall@30",
        "Recall@100",
        "p50 ms (k=100)",
        "p95 ms (k=100)",
        "p50 ms (k=10)",
        "p95 ms (k=10)",
        "indexing chunks/s",
    ]
    print("| " + " | ".join(columns) + " |")
    print("|---" * len(columns) + "|")
    for name, mode, r, rate in rows:
        cells = [
            name,
            mode,
            f"{r['ndcg']:.4f}",
            f"{r['recall30']:.4f}",
            f"{r['recall']:.4f}",
            f"{r['p50']:.1f}",
            f"{r['p95']:.1f}",
            f"{r['p50_10']:.1f}",
            f"{r['p95_10']:.1f}",
        ]
        print("| " + " | ".join([*cells, f"{rate:,.0f}"]) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
