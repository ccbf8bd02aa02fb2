"""OpenSearch bulk ingest at scale: chunks/s until searchable, server CPU per chunk, and what each index
setting does to segments, kNN recall and search latency afterwards (issue 28).

``--chunks`` chunks (100k by default) in ``--doc-chunks``-chunk documents, all in one tenant's scope:
SciFact train abstracts with their cached MiniLM vectors (embedding excluded), then generated filler —
each filler vector a SciFact vector plus Gaussian noise (cosine ~0.8 to it, so the graph holds real
neighbourhoods, not uniform noise), its text 150 words drawn from SciFact's vocabulary. They are written
as ingestion writes them: each document ``upsert`` at generation 1, and every ``--batch-docs`` documents
(an SQS batch) published together with ``publish_many`` — or, for the ``per-document`` setting, each
document published on its own (the path before issue 28).

Every setting writes the same chunks into its own fresh index; settings run one after another in each
round, rounds interleaved (``--rounds``), so a noisy machine shifts them alike. Columns: chunks/s from the
first upsert until the last publish returned (everything searchable), client and server (JVM, from /proc;
merges running when the load ends are waited for, 120 s at most) CPU per chunk, Lucene segments after the
load, recall@10 of kNN (k=10, the store's 100 candidates) against exact cosine over all the scope's
vectors for ``--queries`` SciFact queries, and p50/p95 of kNN and hybrid searches (k=10).

    infra/opensearch-local/run start 44619
    .venv/bin/python bench/opensearch_bulk.py --opensearch-url http://127.0.0.1:44619 \\
        --node-pid $(cat infra/opensearch-local/target/node.pid)
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from bench.opensearch_write import Meter

from ragline.adapters.embedded.embedding_cache import EmbeddingCache
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.models import Chunk, ChunkMetadata, HybridQuery, SemanticQuery, TenantScope
from ragline.services.evaluation import load_beir

ROOT = Path(__file__).parents[1]
SCOPE = TenantScope(tenant_id="bench", namespace_id="docs")

FAISS_THRESHOLD = rq.FAISS_THRESHOLD_SETTING
SETTINGS: dict[str, dict[str, Any]] = {
    "per-document": {"publish": "single"},
    "batched": {},
    "refresh -1": {"index": {"refresh_interval": "-1"}},
    "refresh 30s": {"index": {"refresh_interval": "30s"}},
    "merge 5/tier": {"index": {"merge.policy.segments_per_tier": 5}},
    "merge 30/tier": {"index": {"merge.policy.segments_per_tier": 30, "merge.policy.max_merge_at_once": 30}},
    "hnsw 16:64": {"hnsw": (16, 64)},
    "hnsw 8:64": {"hnsw": (8, 64)},
    "hnsw 16:256": {"hnsw": (16, 256)},
    "sq": {"encoder": {"name": "sq"}},
    "sq dynamic": {"encoder": {"name": "sq", "parameters": {"confidence_interval": 0}}},
    "no graph": {"index": {"knn": False}, "graph": False},
    "in source": {"index": {rq.DERIVED_SOURCE: False}},
    "in source no graph": {"index": {"knn": False, rq.DERIVED_SOURCE: False}, "graph": False},
    "bulk 1": {"bulk": 1},
    "bulk 2": {"bulk": 2},
    "bulk 4": {"bulk": 4},
    "workers 2": {"workers": 2},
    "workers 4": {"workers": 4},
    "before": {"index": {rq.DERIVED_SOURCE: False}, "bulk": 1},
    "faiss": {"engine": "faiss"},
    "faiss fp32": {"engine": "faiss", "encoder": None},
    "faiss fp32 every segment": {"engine": "faiss", "encoder": None, "index": {FAISS_THRESHOLD: 0}},
}
"""Each setting against today's ``index_body`` with ``publish_many`` per batch (``batched``). ``no graph``
stores the vectors without an HNSW graph (no kNN search: what the graph costs a write, by difference);
``in source`` keeps the vector in the stored ``_source`` too (the index before issue 39); ``bulk N``
sends each upsert as N concurrent ``_bulk`` requests (the provider's ``bulk_writers``; the default
follows ``BULK_WRITERS_PER_SHARD``); ``workers N`` writes N documents at once (N ingest workers, each
upserting and publishing its own); ``before`` is the index and write path before issue 39 (vector in
``_source``, one ``_bulk`` at a time); ``faiss`` is the index a domain gets (the template's
``RAGLINE_OPENSEARCH_ENGINE``: a graph per segment of ``FAISS_GRAPH_THRESHOLD`` chunks or more, 16-bit
graph vectors), ``faiss fp32`` without the 16-bit encoder, ``… every segment`` with a graph on every
flush too. faiss needs k-NN's native library on the node, which the Maven zip does not carry."""
NODE_STATS = "store,indexing,refresh,merge,flush"


class Corpus:
    """The chunks' texts and vectors (numpy, not per-chunk tuples: 100k tuples of floats is 1 GB)."""

    def __init__(self, n: int, queries: int, dataset: Path, cache: Path, seed: int = 7) -> None:
        data = load_beir(dataset, "train")
        embedder = EmbeddingCache(LocalOnnxEmbedder(), cache)
        texts = [f"{t}\n{b}".strip() for t, b in data.corpus.values()]
        base = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
        rng = np.random.default_rng(seed)
        extra = max(0, n - len(texts))
        noise = rng.standard_normal((extra, base.shape[1])).astype(np.float32) * 0.04
        filler = base[np.arange(extra) % len(base)] + noise
        self.vectors = np.vstack([base, filler])[:n]
        self.vectors /= np.linalg.norm(self.vectors, axis=1, keepdims=True)
        vocab = sorted({w for t in texts[:500] for w in t.lower().split() if w.isalpha()})
        words = random.Random(seed)
        self.texts = (texts + [" ".join(words.choices(vocab, k=150)) for _ in range(extra)])[:n]
        self.query_texts = list(data.queries.values())[:queries]
        self.queries = [np.asarray(embedder.embed_query(q), dtype=np.float32) for q in self.query_texts]

    def documents(self, per_doc: int) -> Iterator[list[Chunk]]:
        for start in range(0, len(self.texts), per_doc):
            d = start // per_doc
            yield [
                Chunk(
                    document_id=f"doc{d}",
                    sequence_number=i - start,
                    text=self.texts[i],
                    metadata=ChunkMetadata(filename=f"doc{d}.txt", page=1),
                    embedding=tuple(self.vectors[i].tolist()),
                )
                for i in range(start, min(start + per_doc, len(self.texts)))
            ]


def create_index(client: Any, index: str, setting: dict[str, Any]) -> None:
    body = rq.index_body(384, hnsw=setting.get("hnsw", rq.HNSW), engine=setting.get("engine", "lucene"))
    body["settings"]["index"].update(setting.get("index", {}))
    if setting.get("graph") is False:
        del body["mappings"]["properties"][rq.VECTOR_FIELD]["method"]
    if "encoder" in setting:  # None: the engine's float32 graph
        parameters = body["mappings"]["properties"][rq.VECTOR_FIELD]["method"]["parameters"]
        parameters.pop("encoder", None)
        if setting["encoder"] is not None:
            parameters["encoder"] = copy.deepcopy(setting["encoder"])
    client.indices.create(index=index, body=body)


def load(
    provider: OpenSearchVectorStoreProvider,
    corpus: Corpus,
    args: argparse.Namespace,
    single: bool,
    writers: int = 1,
) -> None:
    """The corpus written by ``writers`` threads (ingest workers), each taking the next document."""
    docs = corpus.documents(args.doc_chunks)
    lock = threading.Lock()

    def writer() -> None:
        store = provider.scoped(SCOPE)
        pending: dict[str, int] = {}
        while True:
            with lock:
                doc = next(docs, None)
            if doc is None:
                break
            store.upsert(doc, generation=1)
            if single:
                store.publish(doc[0].document_id, generation=1)
                continue
            pending[doc[0].document_id] = 1
            if len(pending) == args.batch_docs:
                store.publish_many(pending)
                pending = {}
        if pending:
            store.publish_many(pending)

    with ThreadPoolExecutor(writers) as pool:
        for f in [pool.submit(writer) for _ in range(writers)]:
            f.result()


def node_stats(client: Any, index: str) -> list[float]:
    """The index's own totals (primaries): store bytes, and milliseconds spent indexing (parsing,
    analysis, the graph's insertions), refreshing, merging and flushing."""
    p = client.indices.stats(index=index, metric=NODE_STATS)["_all"]["primaries"]
    return [
        p["store"]["size_in_bytes"],
        p["indexing"]["index_time_in_millis"],
        p["refresh"]["total_time_in_millis"],
        p["merges"]["total_time_in_millis"],
        p["flush"]["total_time_in_millis"],
    ]


def searches(
    provider: OpenSearchVectorStoreProvider, corpus: Corpus, queries: int, per_doc: int
) -> tuple[float, list[float], list[float]]:
    """recall@10 of kNN vs exact cosine; kNN and hybrid latencies (ms), k=10."""
    store = provider.scoped(SCOPE)
    found, knn_ms, hybrid_ms = 0, [], []
    for q, text in list(zip(corpus.queries, corpus.query_texts, strict=True))[:queries]:
        exact = {f"doc{i // per_doc}#{i % per_doc}" for i in np.argsort(-(corpus.vectors @ q))[:10]}
        vector = tuple(float(x) for x in q)
        t0 = time.perf_counter()
        hits = store.search(SemanticQuery(text=text, vector=vector, k=10))
        knn_ms.append((time.perf_counter() - t0) * 1000)
        found += len(exact & {h.chunk.id for h in hits})
        t0 = time.perf_counter()
        store.search(HybridQuery(text=text, vector=vector, k=10))
        hybrid_ms.append((time.perf_counter() - t0) * 1000)
    return found / (10 * queries), knn_ms, hybrid_ms


def measure(client: Any, corpus: Corpus, args: argparse.Namespace, name: str) -> list[float]:
    """One setting written into a fresh index, then searched: its row's values."""
    setting = SETTINGS[name]
    index = f"bench-bulk-{uuid.uuid4().hex[:8]}"
    create_index(client, index, setting)
    provider = OpenSearchVectorStoreProvider(
        client, index=index, dimension=384, bulk_writers=setting.get("bulk")
    )
    with Meter(provider, args.node_pid, settle=120) as m:
        load(provider, corpus, args, setting.get("publish") == "single", setting.get("workers", 1))
    assert provider.scoped(SCOPE).count() == args.chunks
    stats = [v / args.chunks for v in node_stats(client, index)]
    segments = len(client.cat.segments(index=index, format="json"))
    if setting.get("graph") is False:
        recall, knn_ms, hybrid_ms = float("nan"), [float("nan")], [float("nan")]
    else:
        recall, knn_ms, hybrid_ms = searches(provider, corpus, args.queries, args.doc_chunks)
    if args.force_merge:  # disk per chunk without the merge state's noise (one segment)
        client.indices.forcemerge(index=index, max_num_segments=1, request_timeout=600)
        stats[0] = node_stats(client, index)[0] / args.chunks
        files = client.indices.stats(index=index, metric="segments", include_segment_file_sizes=True)
        sizes = files["_all"]["primaries"]["segments"]["file_sizes"]
        print(f"{name}: bytes/chunk by file " + ", ".join(
            f"{ext} {v['size_in_bytes'] / args.chunks:,.0f}" for ext, v in sorted(sizes.items())
            if v["size_in_bytes"] > args.chunks), file=sys.stderr)  # fmt: skip
    jvm = 1000 * m.jvm / args.chunks if m.jvm is not None else float("nan")
    latency = [pct(knn_ms, 0.5), pct(knn_ms, 0.95), pct(hybrid_ms, 0.5), pct(hybrid_ms, 0.95)]
    provider.drop()
    return [args.chunks / m.wall, 1000 * m.cpu / args.chunks, jvm, segments, recall, *latency, *stats]


def pct(ms: list[float], p: float) -> float:
    s = sorted(ms)
    return s[min(len(s) - 1, int(p * len(s)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opensearch-url", required=True)
    ap.add_argument("--node-pid", type=int, default=None, help="OpenSearch JVM pid, for server CPU")
    ap.add_argument("--dataset", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--cache", type=Path, default=ROOT / ".ragline" / "bench-cache" / "embeddings.sqlite")
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--doc-chunks", type=int, default=50, help="chunks per document")
    ap.add_argument("--batch-docs", type=int, default=5, help="documents per publish_many (an SQS batch)")
    ap.add_argument("--settings", default="per-document,batched,refresh -1,merge 30/tier,hnsw 16:64,sq")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--warmup", default="", help="a setting written once first, not reported (the JIT)")
    ap.add_argument("--force-merge", action="store_true", help="store bytes/chunk merged to one segment")
    ap.add_argument("--queries", type=int, default=300)
    args = ap.parse_args()
    names = [s.strip() for s in args.settings.split(",")]
    corpus = Corpus(args.chunks, args.queries, args.dataset, args.cache)
    client = build_client(Settings(opensearch_url=args.opensearch_url))
    rows: dict[str, list[list[float]]] = {n: [] for n in [*names, args.warmup]}
    plan = [(-1, args.warmup)] if args.warmup else []  # round -1: written, not reported
    for r, name in plan + [(r, name) for r in range(args.rounds) for name in names]:
        rows[name].append(measure(client, corpus, args, name))
        print(f"round {r + 1} {name}: {rows[name][-1]}", file=sys.stderr, flush=True)
        if r < 0:
            rows[name].pop()
    print(f"{args.chunks:,} chunks in {args.doc_chunks}-chunk documents, publish per {args.batch_docs}"
          f" documents; {args.rounds} round(s), medians")  # fmt: skip
    print("| setting | chunks/s until searchable | client CPU ms/chunk | server CPU ms/chunk | segments after"
          " load | kNN recall@10 vs exact | kNN p50 / p95 ms | hybrid p50 / p95 ms | store bytes/chunk |"
          " node ms/chunk: indexing / refresh / merge / flush |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in names:
        med = [statistics.median(col) for col in zip(*rows[name], strict=True)]
        print(f"| {name} | {med[0]:,.0f} | {med[1]:.2f} | {med[2]:.2f} | {med[3]:.0f} | {med[4]:.4f} |"
              f" {med[5]:.1f} / {med[6]:.1f} | {med[7]:.1f} / {med[8]:.1f} | {med[9]:,.0f} |"
              f" {med[10]:.2f} / {med[11]:.2f} / {med[12]:.2f} / {med[13]:.2f} |")  # fmt: skip
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
