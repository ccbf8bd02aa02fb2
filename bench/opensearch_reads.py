"""OpenSearch read latency: what serving only published versions costs each search, side by side.

Since issue 24 every OpenSearch read keeps only hits at their document's published generation, read in
real time from the fences index (one ``mget`` per search; ``neighbors`` reads the fence before and
after). This measures ``search`` (hybrid, semantic, keyword) and ``neighbors`` latency on one index of
SciFact abstracts (random unit vectors: the legs' work, not the embedder's, is what is compared), with
every document published, written by this tree and read by this tree and by ``--compare TREE`` (another
checkout, e.g. ``git worktree add /tmp/before 7273cb4``) in alternating fresh processes, so both read the
same index on the same node under the same load.

    .venv/bin/python bench/opensearch_reads.py --opensearch-url $OPENSEARCH_URL --compare /tmp/before
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIM = 384
MODES = ("hybrid", "semantic", "keyword", "neighbors")


def _corpus(path: Path, docs: int) -> list[tuple[str, list[str]]]:
    out = []
    with path.open() as f:
        for line in f:
            row = json.loads(line)
            sentences = [s.strip() + "." for s in row["text"].split(". ") if s.strip()]
            out.append((row["_id"], sentences[:8] or [row["title"]]))
            if len(out) == docs:
                break
    return out


def write(url: str, index: str, corpus_path: Path, docs: int) -> None:
    """Index ``docs`` abstracts a sentence per chunk, each document upserted and published."""
    import numpy as np

    from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
    from ragline.config import Settings
    from ragline.domain.models import Chunk, ChunkMetadata, TenantScope

    rng = np.random.default_rng(7)
    p = OpenSearchVectorStoreProvider(build_client(Settings(opensearch_url=url)), index=index, dimension=DIM)
    store = p.scoped(TenantScope(tenant_id="bench", namespace_id="scifact"))
    for doc, sentences in _corpus(corpus_path, docs):
        vectors = rng.standard_normal((len(sentences), DIM)).astype("float32")
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        chunks = [
            Chunk(document_id=doc, sequence_number=i, text=t, metadata=ChunkMetadata(filename=doc),
                  embedding=tuple(v.tolist()))
            for i, (t, v) in enumerate(zip(sentences, vectors, strict=True))
        ]  # fmt: skip
        store.upsert(chunks, generation=1)
        store.publish(doc, generation=1)
    p.close()


def read(url: str, index: str, corpus_path: Path, queries: int, mode: str) -> list[float]:
    """Per-call latency (ms) of ``queries`` reads in ``mode``, after 20 warm-up reads."""
    import numpy as np

    from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
    from ragline.config import Settings
    from ragline.domain.models import HybridQuery, KeywordQuery, SemanticQuery, TenantScope

    rng = np.random.default_rng(11)
    p = OpenSearchVectorStoreProvider(build_client(Settings(opensearch_url=url)), index=index, dimension=DIM)
    store = p.scoped(TenantScope(tenant_id="bench", namespace_id="scifact"))
    corpus = _corpus(corpus_path, 10**9)
    times = []
    for i in range(queries + 20):
        doc, sentences = corpus[i % len(corpus)]
        text = sentences[0][:80]
        vector = rng.standard_normal(DIM)
        vector = (vector / np.linalg.norm(vector)).tolist()
        began = time.perf_counter()
        if mode == "hybrid":
            store.search(HybridQuery(text=text, vector=vector, k=10))
        elif mode == "semantic":
            store.search(SemanticQuery(text=text, vector=vector, k=10))
        elif mode == "keyword":
            store.search(KeywordQuery(text=text, k=10))
        else:
            store.neighbors(doc, 2, before=2, after=2)
        if i >= 20:
            times.append((time.perf_counter() - began) * 1000)
    p.close()
    return times


def _run(tree: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": f"{tree / 'shared'}:{ROOT}"}
    argv = [sys.executable, str(Path(__file__).resolve()), *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opensearch-url", required=True)
    ap.add_argument("--compare", type=Path, help="another checkout to read the same index with")
    ap.add_argument(
        "--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "scifact" / "corpus.jsonl"
    )
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", nargs=3, metavar=("MODE", "INDEX", "QUERIES"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        mode, index, queries = args.child
        print(json.dumps(read(args.opensearch_url, index, args.corpus, int(queries), mode)))
        return
    index = f"bench-reads-{uuid.uuid4().hex[:8]}"
    write(args.opensearch_url, index, args.corpus, args.docs)
    trees = {"this tree": ROOT, **({"--compare": args.compare} if args.compare else {})}
    results: dict[tuple[str, str], list[float]] = {}
    try:
        for _ in range(args.rounds):  # trees alternate within each round: same load for both
            for mode in MODES:
                for name, tree in trees.items():
                    out = _run(tree, "--opensearch-url", args.opensearch_url, "--corpus", str(args.corpus),
                               "--child", mode, index, str(args.queries))  # fmt: skip
                    results.setdefault((name, mode), []).extend(json.loads(out))
    finally:
        from ragline.adapters.opensearch.store import build_client
        from ragline.config import Settings

        client = build_client(Settings(opensearch_url=args.opensearch_url))
        client.indices.delete(index=f"{index},{index}-fences", ignore_unavailable=True)
    print(f"{args.docs} published documents, {args.queries} reads x {args.rounds} rounds per cell, k=10\n")
    print("| read | tree | p50 ms | p95 ms |" + (" p50 ratio |" if args.compare else ""))
    print("|---|---|---|---|" + ("---|" if args.compare else ""))
    for mode in MODES:
        for name in trees:
            t = results[(name, mode)]
            ratio = ""
            if args.compare:
                base = statistics.median(results[("--compare", mode)])
                ratio = f" {statistics.median(t) / base:.2f} |"
            print(f"| {mode} | {name} | {statistics.median(t):.2f} | {_pct(t, 95):.2f} |{ratio}")


if __name__ == "__main__":
    main()
