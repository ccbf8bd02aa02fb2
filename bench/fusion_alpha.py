"""Choose the default hybrid fusion: convex α swept on SciFact train, RRF beside it, one run.

SciFact train into the embedded SQLite store (one chunk of title + text per document, MiniLM vectors
cached in ``--cache``, shared with ``bench/retrieval.py``), then every query in hybrid mode with RRF
k=60 and with the convex combination (per-query min-max normalised legs, as OpenSearch's
``normalization-processor`` does) for each α on a coarse grid, α being the semantic leg's weight.
nDCG@10 and Recall@100 per setting; the query vectors are computed up front.

    .venv/bin/python bench/fusion_alpha.py
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from ragline.adapters.embedded.embedding_cache import EmbeddingCache
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.domain.metrics import dedupe_documents, ndcg_at, recall_at
from ragline.domain.models import Chunk, ChunkMetadata, HybridQuery, TenantScope
from ragline.services.evaluation import load_beir

ROOT = Path(__file__).parents[1]
SCOPE = TenantScope(tenant_id="bench", namespace_id="scifact")
ALPHAS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--split", default="train")
    ap.add_argument("--cache", type=Path, default=ROOT / ".ragline" / "bench-cache" / "embeddings.sqlite")
    args = ap.parse_args()

    data = load_beir(args.dataset, args.split)
    embedder = EmbeddingCache(LocalOnnxEmbedder(), args.cache)
    ids = list(data.corpus)
    texts = [f"{data.corpus[i][0]}\n{data.corpus[i][1]}".strip() for i in ids]
    dvecs = embedder.embed_documents(texts)
    qids = list(data.queries)
    qv = embedder.embed_documents([data.queries[q] for q in qids])
    with tempfile.TemporaryDirectory() as tmp:
        provider = SqliteVectorStoreProvider(Path(tmp) / "s.sqlite", dimension=embedder.dimension)
        store = provider.scoped(SCOPE)
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
        for i in range(0, len(chunks), 500):
            store.upsert(chunks[i : i + 500])
        settings: list[tuple[str, dict[str, object]]] = [("rrf k=60", {"fusion": "rrf"})]
        settings += [(f"convex α={a:.1f}", {"fusion": "convex", "alpha": a}) for a in ALPHAS]
        print(f"SciFact {args.split}: {len(qids)} queries, {len(chunks)} chunks, embedded store\n")
        print("| fusion | nDCG@10 | Recall@100 |\n|---|---|---|")
        for label, options in settings:
            ndcg = recall = 0.0
            for n, qid in enumerate(qids):
                query = HybridQuery(
                    text=data.queries[qid], k=100, vector=tuple(qv[n].tolist()), candidates=100, **options
                )
                ranked = dedupe_documents([h.chunk.document_id for h in store.search(query)])
                ndcg += ndcg_at(ranked, data.qrels[qid], 10)
                recall += recall_at(ranked, data.qrels[qid], 100)
            print(f"| {label} | {ndcg / len(qids):.4f} | {recall / len(qids):.4f} |", flush=True)
        provider.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
