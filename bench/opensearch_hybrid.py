"""OpenSearch hybrid search: the node's own ``hybrid`` query vs today's ``_msearch`` fusion, one run.

SciFact (MiniLM vectors from the benches' embedding cache) in one OpenSearch index, optionally beside
``--filler N`` generated chunks under other tenants (as bench/retrieval.py and bench/peers.py do); then
every query runs through each variant in turn, the order rotating per query (interleaved: same node,
same load), at k=100 (nDCG@10, Recall@100, latency) and k=10 (latency), for both fusions:

- ``msearch``: the store's default — both legs ids-only in one ``_msearch``, fused in Python;
- ``query``: the store's ``hybrid="query"`` — the node's ``hybrid`` query through a temporary search
  pipeline (min_max legs), the legs beside it for ranks and fences, all in one ``_msearch``;
- ``query-l2``: the same with 2.19's ``l2`` normalisation (convex only: RRF does not normalise);
- ``node-only``: the bare ``hybrid`` query as Amazon OpenSearch Service users send it — no legs, no
  fences, no sources, no breakdown: the floor of what the node's fusion costs (its ranking is
  ``query``'s, so its quality is not measured again);
- ``node-only-stored``: the same through a stored pipeline (``?search_pipeline=name``), to price the
  temporary pipeline in the body;
- ``node-only-explain``: node-only with ``explain=true`` and the ``hybrid_score_explanation`` response
  processor (each hit's raw leg scores, no ranks), to price the explanation.

    .venv/bin/python bench/opensearch_hybrid.py --opensearch-url $OPENSEARCH_URL [--filler 95000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from bench.retrieval import SCOPE, filler_chunks, index

from ragline.adapters.embedded.embedding_cache import EmbeddingCache
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.adapters.opensearch import hybrid as node_fusion
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.metrics import dedupe_documents, ndcg_at, recall_at
from ragline.domain.models import Chunk, ChunkMetadata, HybridQuery
from ragline.services.evaluation import load_beir

ROOT = Path(__file__).parents[1]
Search = Callable[[HybridQuery], list[str]]  # the query's ranked document ids


def variants(url: str, index_name: str, dim: int) -> dict[str, Search]:
    client = build_client(Settings(opensearch_url=url))

    def store(**kw: object) -> Search:
        p = OpenSearchVectorStoreProvider(client, index=index_name, dimension=dim, refresh="false", **kw)  # type: ignore[arg-type]
        s = p.scoped(SCOPE)
        return lambda q: [h.chunk.document_id for h in s.search(q)]

    scoped = OpenSearchVectorStoreProvider(client, index=index_name, dimension=dim).scoped(SCOPE)

    def node_only(q: HybridQuery) -> list[str]:
        knn = rq.knn_search(SCOPE, q.vector, q.candidates, q.filters, candidates=rq.KNN_CANDIDATES)
        bm25 = scoped.keyword_body(q.text, q.candidates, q)  # the scope's BM25 statistics
        body = node_fusion.hybrid_search(knn, bm25, q)
        resp = client.search(index=index_name, body=body, routing=SCOPE.tenant_id)
        return [h.document_id for h in node_fusion.fused_hits(resp)]

    def node_explained(q: HybridQuery) -> list[str]:
        """The bare query with 2.19's per-hit explanation (raw leg scores; no ranks)."""
        knn = rq.knn_search(SCOPE, q.vector, q.candidates, q.filters, candidates=rq.KNN_CANDIDATES)
        bm25 = scoped.keyword_body(q.text, q.candidates, q)  # the scope's BM25 statistics
        body = node_fusion.hybrid_search(knn, bm25, q)
        body["search_pipeline"] = {
            **body["search_pipeline"],
            "response_processors": [{"hybrid_score_explanation": {}}],
        }
        resp = client.search(index=index_name, body=body, routing=SCOPE.tenant_id, params={"explain": "true"})
        return [h.document_id for h in node_fusion.fused_hits(resp)]

    def node_named(q: HybridQuery) -> list[str]:
        """The bare query through a stored pipeline (one per fusion setting), not a temporary one."""
        name = f"ragline-bench-{q.fusion}-{q.alpha}-{q.rrf_k}"
        if name not in stored:
            client.transport.perform_request("PUT", f"/_search/pipeline/{name}", body=node_fusion.pipeline(q))
            stored.add(name)
        knn = rq.knn_search(SCOPE, q.vector, q.candidates, q.filters, candidates=rq.KNN_CANDIDATES)
        bm25 = scoped.keyword_body(q.text, q.candidates, q)  # the scope's BM25 statistics
        body = {k: v for k, v in node_fusion.hybrid_search(knn, bm25, q).items() if k != "search_pipeline"}
        resp = client.search(
            index=index_name, body=body, routing=SCOPE.tenant_id, params={"search_pipeline": name}
        )
        return [h.document_id for h in node_fusion.fused_hits(resp)]

    stored: set[str] = set()
    return {
        "msearch": store(hybrid="msearch"),
        "query": store(hybrid="query"),
        "query-l2": store(hybrid="query", hybrid_normalization="l2"),
        "node-only": node_only,
        "node-only-stored": node_named,
        "node-only-explain": node_explained,
    }


def main() -> int:  # noqa: PLR0915 - one linear script: load, index, measure, print
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--split", default="train")
    ap.add_argument("--opensearch-url", required=True)
    ap.add_argument("--filler", type=int, default=0, help="extra chunks under other tenants")
    ap.add_argument("--queries", type=int, default=0, help="only the first N queries (0: all)")
    ap.add_argument("--latency-queries", type=int, default=300, help="queries timed (0: all)")
    ap.add_argument("--warmup", type=int, default=30, help="queries run through every variant first")
    ap.add_argument("--no-quality", dest="quality", action="store_false", help="latency only")
    ap.add_argument("--cache", type=Path, default=ROOT / ".ragline" / "bench-cache" / "embeddings.sqlite")
    args = ap.parse_args()

    data = load_beir(args.dataset, args.split)
    embedder = EmbeddingCache(LocalOnnxEmbedder(), args.cache)
    ids = list(data.corpus)
    texts = [f"{data.corpus[i][0]}\n{data.corpus[i][1]}".strip() for i in ids]
    dvecs = embedder.embed_documents(texts)
    qids = list(data.queries)[: args.queries or None]
    qv = embedder.embed_documents([data.queries[q] for q in qids])
    chunks = [
        Chunk(document_id=d, sequence_number=0, text=t, metadata=ChunkMetadata(filename=d),
              embedding=tuple(dvecs[i].tolist()))
        for i, (d, t) in enumerate(zip(ids, texts, strict=True))
    ]  # fmt: skip
    vocab = sorted({w for t in texts[:500] for w in t.lower().split() if w.isalpha()})
    filler = filler_chunks(args.filler, embedder.dimension, vocab) if args.filler else []

    name = f"bench-hybrid-{uuid.uuid4().hex[:8]}"
    writer = OpenSearchVectorStoreProvider(
        build_client(Settings(opensearch_url=args.opensearch_url)),
        index=name, dimension=embedder.dimension, refresh="false",
    )  # fmt: skip
    t0 = time.perf_counter()
    writer.ensure_index()  # no scheduled refresh while loading: fewer, larger segments to merge
    writer.client.indices.put_settings(index=name, body={"index": {"refresh_interval": "-1"}})
    index(writer, chunks, filler)
    writer.client.indices.put_settings(index=name, body={"index": {"refresh_interval": None}})
    writer.client.indices.refresh(index=name)
    print(f"indexed {len(chunks) + len(filler)} chunks in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    try:
        runs = variants(args.opensearch_url, name, embedder.dimension)
        vecs = {qid: tuple(qv[n].tolist()) for n, qid in enumerate(qids)}
        for qid in qids[: args.warmup]:  # the JIT's first compilations, not timed
            for run in runs.values():
                run(HybridQuery(text=data.queries[qid], vector=vecs[qid], k=10))
        fusions: tuple[Literal["convex", "rrf"], ...] = ("convex", "rrf")
        cells = [(v, f) for v in runs for f in fusions if not (v == "query-l2" and f == "rrf")]
        quality: dict[tuple[str, Literal["convex", "rrf"]], list[tuple[float, float]]] = {
            c: []
            for c in cells
            if not c[0].startswith("node-only")  # node-only ranks as query does
        }
        if args.quality:  # every query at k=100: nDCG@10, Recall@100 (not timed)
            for qid in qids:
                for (v, f), scores in quality.items():
                    q = HybridQuery(text=data.queries[qid], vector=vecs[qid], k=100, fusion=f)
                    ranked = dedupe_documents(runs[v](q))
                    scores.append(
                        (ndcg_at(ranked, data.qrels[qid], 10), recall_at(ranked, data.qrels[qid], 100))
                    )
        timed = [c for c in cells if c[0] != "query-l2"]
        lat: dict[tuple[str, str, int], list[float]] = {(v, f, k): [] for v, f in timed for k in (10, 100)}
        for n, qid in enumerate(qids[: args.latency_queries or None]):
            order = timed[n % len(timed) :] + timed[: n % len(timed)]  # interleaved, rotating
            for v, f in order:
                for k in (10, 100):
                    q = HybridQuery(text=data.queries[qid], vector=vecs[qid], k=k, fusion=f)
                    t = time.perf_counter()
                    runs[v](q)
                    lat[(v, f, k)].append((time.perf_counter() - t) * 1000)
    finally:
        writer.drop()
        writer.client.transport.perform_request("DELETE", "/_search/pipeline/ragline-bench-*")

    def pct(xs: list[float], p: float) -> float:
        xs = sorted(xs)
        return xs[int(p * (len(xs) - 1))]

    n_lat = len(next(iter(lat.values())))
    quality_of = f"quality over {len(qids)} queries (k=100), " if args.quality else ""
    print(f"\nSciFact {args.split}: {len(chunks)} docs + {len(filler)} filler chunks; {quality_of}latency")
    print(f"over {n_lat} queries (interleaved, after {args.warmup} warm-up)\n")
    columns = ["variant", "fusion", "nDCG@10", "Recall@100"]
    columns += [f"{p} ms k={k}" for k in (10, 100) for p in ("p50", "p95")]
    print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    for v, f in cells:
        scores = quality.get((v, f)) or quality.get(("query", f)) or []
        row = [v, f]
        row += [f"{statistics.fmean(s[i] for s in scores):.4f}" if scores else "–" for i in (0, 1)]
        for k in (10, 100):
            xs = lat.get((v, f, k))
            row += [f"{statistics.median(xs):.1f}", f"{pct(xs, 0.95):.1f}"] if xs else ["–", "–"]
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
