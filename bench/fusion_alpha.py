"""Choose the hybrid fusion: leg normalisations × α on SciFact train and on the exact-match set, one run.

Each dataset goes into the embedded SQLite store (one chunk of title + text per document, MiniLM vectors
cached in ``--cache``, shared with ``bench/retrieval.py``). Each query's two legs (top 100 of each, as
a hybrid search fetches them) are computed once; every setting then fuses the same legs with
:func:`ragline.domain.fusion.fuse_ranked` — exactly what ``store.search(HybridQuery)`` does — so the
rows differ only by fusion. Settings: RRF k=60; convex with per-query min-max legs (the fusion before
issue 24, OpenSearch's ``normalization-processor``); min-max with a floor (top 1, lowest ``f``, not
found 0); and top-anchored legs (BM25 / max; cosine above a floor over the best's), α being the
semantic leg's weight. SciFact: nDCG@10 and Recall@100; exact-match set (``bench/exact_match.py``, one
relevant chunk per query): MRR@10 and the share of queries whose answer ranks first.

    .venv/bin/python bench/fusion_alpha.py --dataset ../shared/data/scifact
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from exact_match import build as build_exact_match
from ragline.adapters.embedded.embedding_cache import EmbeddingCache
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.domain.fusion import Normalise, Ranked, fuse_ranked, keyword_weights, top_anchored
from ragline.domain.metrics import dedupe_documents, mrr_at, ndcg_at, recall_at
from ragline.domain.models import Chunk, ChunkMetadata, KeywordQuery, SemanticQuery, TenantScope
from ragline.ports import Embedder
from ragline.services.evaluation import BeirDataset, load_beir

ROOT = Path(__file__).parents[1]
SCOPE = TenantScope(tenant_id="bench", namespace_id="fusion")
ALPHAS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7)
Legs = tuple[list[tuple[str, float]], list[tuple[str, float]]]


def minmax(ranked: Ranked) -> dict[str, float]:
    """The normalisation before issue 24: a leg's only hit and its lowest hit score 0."""
    if not ranked:
        return {}
    lo, hi = min(s for _, s in ranked), max(s for _, s in ranked)
    return {cid: (s - lo) / ((hi - lo) or 1.0) for cid, s in ranked}


def minmax_floor(f: float) -> Normalise:
    def norm(ranked: Ranked) -> dict[str, float]:
        if not ranked:
            return {}
        lo, hi = min(s for _, s in ranked), max(s for _, s in ranked)
        if hi == lo:
            return {cid: 1.0 for cid, _ in ranked}
        return {cid: f + (1 - f) * (s - lo) / (hi - lo) for cid, s in ranked}

    return norm


def cosine_floor(c: float) -> Normalise:
    return lambda ranked: top_anchored(ranked, c)


NORMALISATIONS: list[tuple[str, tuple[Normalise, Normalise]]] = [
    ("min-max (before)", (minmax, minmax)),
    ("min-max, floor 0.1", (minmax_floor(0.1), minmax_floor(0.1))),
    ("min-max, floor 0.3", (minmax_floor(0.3), minmax_floor(0.3))),
    *[(f"top-anchored, cos floor {c:.1f}", (cosine_floor(c), keyword_weights)) for c in (0.0, 0.1, 0.2, 0.3)],
]


def legs_of(data: BeirDataset, embedder: Embedder, tmp: Path) -> tuple[list[str], list[Legs]]:
    """Every query's two legs (top 100 each) over the dataset in a fresh embedded store."""
    ids = list(data.corpus)
    texts = [f"{data.corpus[i][0]}\n{data.corpus[i][1]}".strip() for i in ids]
    dvecs = embedder.embed_documents(texts)
    qids = list(data.queries)
    qv = embedder.embed_documents([data.queries[q] for q in qids])
    provider = SqliteVectorStoreProvider(tmp / "s.sqlite", dimension=embedder.dimension)
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
    legs: list[Legs] = []
    for n, qid in enumerate(qids):
        sem = store.search(SemanticQuery(text=data.queries[qid], k=100, vector=tuple(qv[n].tolist())))
        kw = store.search(KeywordQuery(text=data.queries[qid], k=100))
        legs.append(
            (
                [(h.chunk.id, float(h.breakdown.semantic_score or 0.0)) for h in sem],
                [(h.chunk.id, float(h.breakdown.keyword_score or 0.0)) for h in kw],
            )
        )
    provider.close()
    return qids, legs


def ranked_docs(legs: Legs, options: dict[str, object]) -> list[str]:
    if "leg" in options:  # one leg alone, for reference
        ids = [cid for cid, _ in legs[int(options["leg"] == "keyword")]]  # type: ignore[index]
    else:
        ids = [cid for cid, _ in fuse_ranked(legs[0], legs[1], limit=100, **options)]  # type: ignore[arg-type]
    return dedupe_documents([cid.rpartition("#")[0] for cid in ids])


Metric = Callable[[list[str], dict[str, int]], float]


def score(data: BeirDataset, qids: list[str], legs: list[Legs], options: dict[str, object]) -> list[float]:
    """nDCG@10, Recall@100, MRR@10 and P@1 averaged over the queries."""
    metrics: list[Metric] = [
        lambda r, q: ndcg_at(r, q, 10),
        lambda r, q: recall_at(r, q, 100),
        lambda r, q: mrr_at(r, q, 10),
        lambda r, q: float(bool(r) and r[0] in q),
    ]
    totals = [0.0] * len(metrics)
    for qid, leg in zip(qids, legs, strict=True):
        ranked = ranked_docs(leg, options)
        for i, m in enumerate(metrics):
            totals[i] += m(ranked, data.qrels[qid])
    return [t / len(qids) for t in totals]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--split", default="train")
    ap.add_argument("--cache", type=Path, default=ROOT / ".ragline" / "bench-cache" / "embeddings.sqlite")
    args = ap.parse_args()

    embedder = EmbeddingCache(LocalOnnxEmbedder(), args.cache)
    scifact = load_beir(args.dataset, args.split)
    exact = build_exact_match()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "a").mkdir()
        (Path(tmp) / "b").mkdir()
        s_qids, s_legs = legs_of(scifact, embedder, Path(tmp) / "a")
        e_qids, e_legs = legs_of(exact, embedder, Path(tmp) / "b")
    settings: list[tuple[str, dict[str, object]]] = [
        ("keyword (BM25) alone", {"leg": "keyword"}),
        ("semantic alone", {"leg": "semantic"}),
        ("rrf k=60", {"fusion": "rrf"}),
    ]
    for label, normalise in NORMALISATIONS:
        settings += [
            (f"{label}, α={a:.2f}", {"fusion": "convex", "alpha": a, "normalise": normalise}) for a in ALPHAS
        ]
    print(
        f"SciFact {args.split}: {len(s_qids)} queries, {len(scifact.corpus)} chunks; exact-match set:"
        f" {len(e_qids)} queries, {len(exact.corpus)} chunks; embedded store, MiniLM\n"
    )
    print(
        "| fusion | SciFact nDCG@10 | SciFact Recall@100 | exact MRR@10 | exact P@1 |\n|---|---|---|---|---|"
    )
    for label, options in settings:
        ndcg, recall, _, _ = score(scifact, s_qids, s_legs, options)
        _, _, mrr, p1 = score(exact, e_qids, e_legs, options)
        print(f"| {label} | {ndcg:.4f} | {recall:.4f} | {mrr:.4f} | {p1:.4f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
