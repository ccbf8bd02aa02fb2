"""OpenSearch write path: chunks/s of ``upsert`` (and of ``publish``) as ingestion calls them.

Embedding excluded: SciFact train abstracts with their cached vectors (384-d, all-MiniLM-L6-v2), grouped
into documents. Each scenario writes into a fresh index with the store's shipped refresh policy:

- ``20-chunk documents``: one document at a time, ``upsert`` then ``publish`` (what an ingest worker
  does per small document); rows for the upserts alone and for upsert + publish (until searchable);
- ``500-chunk batches``: one large document written 500 chunks per ``upsert`` (ingestion's write batch),
  then ``publish``.

Besides wall-clock throughput it reports CPU per chunk: this Python process's, and the OpenSearch JVM's
(``--node-pid``, read from /proc; merges that finish within 60 s after the scenario are included), so
runs on a busy machine can still be compared.

    .venv/bin/python bench/opensearch_write.py --opensearch-url $OPENSEARCH_URL \\
        --node-pid $(cat infra/opensearch-local/target/node.pid)

``--hnsw`` compares graph settings (write speed against recall@10); ``--knn-candidates`` compares how
many graph candidates a k=10 semantic search explores (recall@10 against latency).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ragline.adapters.embedded.embedding_cache import EmbeddingCache
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.adapters.opensearch.store import (
    OpenSearchVectorStore,
    OpenSearchVectorStoreProvider,
    build_client,
)
from ragline.config import Settings
from ragline.domain.models import Chunk, ChunkMetadata, SemanticQuery, TenantScope
from ragline.services.evaluation import load_beir

ROOT = Path(__file__).parents[1]
SCOPE = TenantScope(tenant_id="bench", namespace_id="docs")


def jvm_cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (fields 14 and 15 of /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def documents(per_doc: int, cache: Path, dataset: Path) -> list[list[Chunk]]:
    data = load_beir(dataset, "train")
    embedder = EmbeddingCache(LocalOnnxEmbedder(), cache)
    ids = list(data.corpus)
    texts = [f"{data.corpus[i][0]}\n{data.corpus[i][1]}".strip() for i in ids]
    vectors = embedder.embed_documents(texts)
    docs: list[list[Chunk]] = []
    for i, text in enumerate(texts):
        doc, seq = divmod(i, per_doc)
        if seq == 0:
            docs.append([])
        docs[-1].append(
            Chunk(
                document_id=f"doc{doc}",
                sequence_number=seq,
                text=text,
                metadata=ChunkMetadata(filename=f"doc{doc}.txt", page=1 + seq // 4),
                embedding=tuple(vectors[i].tolist()),
            )
        )
    return docs


class Meter:
    """Wall, client CPU and server CPU of one scenario."""

    def __init__(
        self, provider: OpenSearchVectorStoreProvider, node_pid: int | None, settle: float = 60
    ) -> None:
        self.provider, self.node_pid, self.settle = provider, node_pid, settle

    def __enter__(self) -> Meter:
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()
        self.jvm0 = jvm_cpu_seconds(self.node_pid) if self.node_pid else 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = time.process_time() - self.cpu0
        self.jvm = None
        if self.node_pid:
            deadline = time.monotonic() + self.settle
            while time.monotonic() < deadline:  # merges the writes started belong to their cost
                stats = self.provider.client.indices.stats(index=self.provider.index, metric="merge")
                if stats["_all"]["total"]["merges"]["current"] == 0:
                    break
                time.sleep(0.5)
            self.jvm = jvm_cpu_seconds(self.node_pid) - self.jvm0


def row(label: str, chunks: int, wall: float, cpu: float, jvm: float | None) -> list[str]:
    server = f"{1000 * jvm / chunks:.2f}" if jvm is not None else "—"
    return [label, f"{chunks:,}", f"{chunks / wall:,.0f}", f"{1000 * cpu / chunks:.2f}", server]


def compare_hnsw(args: argparse.Namespace) -> int:
    """Every ``m:ef_construction`` setting in turn: the large document written in 500-chunk batches and
    published (chunks/s, server CPU), then recall@10 of kNN against exact cosine over the same vectors
    for the first ``--queries`` SciFact train queries (the graph's price for its speed)."""
    settings = [tuple(int(x) for x in pair.split(":")) for pair in args.hnsw.split(",")]
    large = [c for doc in documents(args.large_chunks, args.cache, args.dataset)[:1] for c in doc]
    queries = query_vectors(args)
    client = build_client(Settings(opensearch_url=args.opensearch_url))
    print("| m | ef_construction | chunks | chunks/s | server CPU ms/chunk | recall@10 vs exact |")
    print("|---:|---:|---:|---:|---:|---:|")
    for m_, ef in settings:
        provider = OpenSearchVectorStoreProvider(
            client, index=f"bench-h-{uuid.uuid4().hex[:8]}", dimension=384, hnsw=(m_, ef)
        )
        store = provider.scoped(SCOPE)
        with Meter(provider, args.node_pid) as meter:
            for i in range(0, len(large), 500):
                store.upsert(large[i : i + 500], generation=1)
            store.publish(large[0].document_id, generation=1)
        recall, _ = knn_recall_at_10(store, large, queries)
        r = row("", len(large), meter.wall, meter.cpu, meter.jvm)
        print(f"| {m_} | {ef} | {r[1]} | {r[2]} | {r[4]} | {recall:.4f} |")
        provider.drop()
    client.close()
    return 0


def query_vectors(args: argparse.Namespace) -> list[NDArray[np.float32]]:
    """The first ``--queries`` SciFact train queries, embedded (cached)."""
    data = load_beir(args.dataset, "train")
    embedder = EmbeddingCache(LocalOnnxEmbedder(), args.cache)
    return [
        np.asarray(embedder.embed_query(q), dtype=np.float32)
        for q in list(data.queries.values())[: args.queries]
    ]


def knn_recall_at_10(
    store: OpenSearchVectorStore, chunks: list[Chunk], queries: list[NDArray[np.float32]]
) -> tuple[float, list[float]]:
    """Recall@10 of the store's semantic search (k=10) against exact cosine over the same vectors,
    and each search's latency in ms."""
    matrix = np.array([c.embedding for c in chunks], dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    found, latencies = 0, []
    for q in queries:
        exact = {chunks[i].id for i in np.argsort(-(matrix @ q))[:10]}
        query = SemanticQuery(text="q", vector=tuple(float(x) for x in q), k=10)
        t0 = time.perf_counter()
        hits = store.search(query)
        latencies.append((time.perf_counter() - t0) * 1000)
        found += len(exact & {h.chunk.id for h in hits})
    return found / (10 * len(queries)), latencies


def compare_knn_candidates(args: argparse.Namespace) -> int:
    """The large document written once; then, in interleaved rounds over the same index, semantic
    searches at k=10 with each ``--knn-candidates`` setting (the least ``k`` the kNN query explores):
    recall@10 against exact cosine, and p50/p95 latency."""
    settings = [int(x) for x in args.knn_candidates.split(",")]
    large = [c for doc in documents(args.large_chunks, args.cache, args.dataset)[:1] for c in doc]
    queries = query_vectors(args)
    client = build_client(Settings(opensearch_url=args.opensearch_url))
    index = f"bench-k-{uuid.uuid4().hex[:8]}"
    providers = {
        c: OpenSearchVectorStoreProvider(client, index=index, dimension=384, knn_candidates=c)
        for c in settings
    }
    first = providers[settings[0]].scoped(SCOPE)
    for i in range(0, len(large), 500):
        first.upsert(large[i : i + 500], generation=1)
    first.publish(large[0].document_id, generation=1)
    knn_recall_at_10(first, large, queries[:50])  # warm-up: caches and JIT, not measured
    recall: dict[int, float] = {}
    latencies: dict[int, list[float]] = {c: [] for c in settings}
    for _ in range(args.rounds):
        for c in settings:
            recall[c], ms = knn_recall_at_10(providers[c].scoped(SCOPE), large, queries)
            latencies[c] += ms
    print("| kNN candidates (k=10) | recall@10 vs exact | p50 ms | p95 ms |")
    print("|---:|---:|---:|---:|")
    for c in settings:
        ms = sorted(latencies[c])
        p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
        print(f"| {c} | {recall[c]:.4f} | {statistics.median(ms):.1f} | {p95:.1f} |")
    providers[settings[0]].drop()
    client.close()
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opensearch-url", required=True)
    ap.add_argument("--node-pid", type=int, default=None, help="OpenSearch JVM pid, for server CPU")
    ap.add_argument("--dataset", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--cache", type=Path, default=ROOT / ".ragline" / "bench-cache" / "embeddings.sqlite")
    ap.add_argument("--small-docs", type=int, default=100, help="20-chunk documents to write")
    ap.add_argument("--large-chunks", type=int, default=5000, help="chunks of the large document")
    ap.add_argument("--label", default="", help="prefix for the rows (e.g. the tree measured)")
    ap.add_argument("--hnsw", default="", help="m:ef_construction,... : compare graph settings instead")
    ap.add_argument("--queries", type=int, default=300, help="queries for --hnsw and --knn-candidates")
    ap.add_argument("--knn-candidates", default="", help="c,... : compare kNN candidate counts instead")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds for --knn-candidates")
    args = ap.parse_args()
    if args.hnsw:
        return compare_hnsw(args)
    if args.knn_candidates:
        return compare_knn_candidates(args)

    small = documents(20, args.cache, args.dataset)[: args.small_docs]
    large = [c for doc in documents(args.large_chunks, args.cache, args.dataset)[:1] for c in doc]
    client = build_client(Settings(opensearch_url=args.opensearch_url))
    rows: list[list[str]] = []
    prefix = f"{args.label} " if args.label else ""

    provider = OpenSearchVectorStoreProvider(client, index=f"bench-w-{uuid.uuid4().hex[:8]}", dimension=384)
    store = provider.scoped(SCOPE)
    upserting = 0.0
    upsert_cpu = 0.0
    with Meter(provider, args.node_pid) as m:
        for doc in small:
            t0, c0 = time.perf_counter(), time.process_time()
            store.upsert(doc, generation=1)
            upserting += time.perf_counter() - t0
            upsert_cpu += time.process_time() - c0
            store.publish(doc[0].document_id, generation=1)
    n = sum(len(d) for d in small)
    assert store.count() == n
    rows.append(row(f"{prefix}20-chunk documents: upsert", n, upserting, upsert_cpu, None))
    rows.append(row(f"{prefix}20-chunk documents: upsert + publish", n, m.wall, m.cpu, m.jvm))
    provider.drop()

    provider = OpenSearchVectorStoreProvider(client, index=f"bench-w-{uuid.uuid4().hex[:8]}", dimension=384)
    store = provider.scoped(SCOPE)
    with Meter(provider, args.node_pid) as m:
        for i in range(0, len(large), 500):
            store.upsert(large[i : i + 500], generation=1)
        store.publish(large[0].document_id, generation=1)
    assert store.count() == len(large)
    rows.append(row(f"{prefix}500-chunk batches + publish", len(large), m.wall, m.cpu, m.jvm))
    provider.drop()
    provider.close()

    print("| scenario | chunks | chunks/s | client CPU ms/chunk | server CPU ms/chunk |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
