"""Choose the hybrid fusion: leg normalisations × α on SciFact train and on the exact-match set, one run.

Each dataset goes into the embedded SQLite store (one chunk of title + text per document, MiniLM vectors
cached in ``--cache``, shared with ``bench/retrieval.py``). Each query's two legs (top 100 of each, as
a hybrid search fetches them) are computed once; every setting then fuses the same legs with
:func:`ragline.domain.fusion.fuse_ranked` — exactly what ``store.search(HybridQuery)`` does — so the
rows differ only by fusion. Settings: RRF k=60; convex with per-query min-max legs (the fusion before
issue 24, OpenSearch's ``normalization-processor``); min-max with a floor (top 1, lowest ``f``, not
found 0); and top-anchored legs (BM25 / max; cosine above a floor over the best's), α being the
semantic leg's weight. SciFact: nDCG@10, Recall@30 and Recall@100; exact-match set
(``bench/exact_match.py``, one relevant chunk per query): MRR@10 and the share of queries whose answer
ranks first. Each metric reads the list a search of that size returns: nDCG@10, MRR@10 and P@1 a
fused 10, Recall@30 a fused 30 (what a reranker of 30 candidates sees), Recall@100 a fused 100 — the
same prefixes for RRF and convex, not for ``adaptive``, which keeps each leg's top ``limit // 2``.

A second table (issue 43) puts ``adaptive`` (the default) beside today's convex and RRF, with each
of its two choices switched off or moved, and splits SciFact by query id (even / odd), a check
that the constants do not just fit the train split's noise.

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


def ranked_docs(legs: Legs, text: str, options: dict[str, object], limit: int) -> list[str]:
    """The documents of a fused list of ``limit`` (what a search of that size returns)."""
    if "leg" in options:  # one leg alone, for reference
        ids = [cid for cid, _ in legs[int(options["leg"] == "keyword")]][:limit]  # type: ignore[index]
    else:
        fused = fuse_ranked(legs[0], legs[1], limit=limit, text=text, **options)  # type: ignore[arg-type]
        ids = [cid for cid, _ in fused]
    return dedupe_documents([cid.rpartition("#")[0] for cid in ids])


Metric = Callable[[list[str], dict[str, int]], float]
METRICS: list[tuple[int, Metric]] = [  # (the fused list's length, the metric)
    (10, lambda r, q: ndcg_at(r, q, 10)),
    (30, lambda r, q: recall_at(r, q, 30)),
    (100, lambda r, q: recall_at(r, q, 100)),
    (10, lambda r, q: mrr_at(r, q, 10)),
    (10, lambda r, q: float(bool(r) and r[0] in q)),
]


def score(
    data: BeirDataset,
    qids: list[str],
    legs: list[Legs],
    options: dict[str, object],
    parity: int | None = None,
) -> list[float]:
    """nDCG@10, Recall@30, Recall@100, MRR@10 and P@1 averaged over the queries (``parity``: only the
    queries whose numeric id is even, 0, or odd, 1)."""
    totals = [0.0] * len(METRICS)
    n = 0
    for qid, leg in zip(qids, legs, strict=True):
        if parity is not None and int(qid) % 2 != parity:
            continue
        n += 1
        lists = {size: ranked_docs(leg, data.queries[qid], options, size) for size in {s for s, _ in METRICS}}
        for i, (size, m) in enumerate(METRICS):
            totals[i] += m(lists[size], data.qrels[qid])
    return [t / max(n, 1) for t in totals]


ADAPTIVE: list[tuple[str, dict[str, object]]] = [
    ("rrf k=60", {"fusion": "rrf"}),
    ("convex α=0.40 (the default before issue 43)", {"fusion": "convex", "alpha": 0.4}),
    ("**adaptive** (α 0.4 ± 0.1, each leg's top limit/2 kept)", {"fusion": "adaptive", "alpha": 0.4}),
    ("adaptive, no α shift (top limit/2 kept only)", {"fusion": "adaptive", "alpha": 0.4, "shift": 0.0}),
    ("adaptive, nothing kept (α shift only)", {"fusion": "adaptive", "alpha": 0.4, "reserved": 0.0}),
    ("adaptive, shift 0.05", {"fusion": "adaptive", "alpha": 0.4, "shift": 0.05}),
    ("adaptive, shift 0.2", {"fusion": "adaptive", "alpha": 0.4, "shift": 0.2}),
    ("adaptive, top limit/3 kept", {"fusion": "adaptive", "alpha": 0.4, "reserved": 1 / 3}),
    ("adaptive, top limit/4 kept", {"fusion": "adaptive", "alpha": 0.4, "reserved": 0.25}),
]


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
        "| fusion | SciFact nDCG@10 | SciFact R@30 | SciFact R@100 | exact MRR@10 | exact P@1 |\n"
        "|---|---|---|---|---|---|"
    )
    for label, options in settings:
        ndcg, r30, r100, _, _ = score(scifact, s_qids, s_legs, options)
        _, _, _, mrr, p1 = score(exact, e_qids, e_legs, options)
        print(f"| {label} | {ndcg:.4f} | {r30:.4f} | {r100:.4f} | {mrr:.4f} | {p1:.4f} |", flush=True)
    print(
        "\nFusion that adapts to the query (issue 43); SciFact even / odd query ids: nDCG@10 / R@30 / R@100\n"
    )
    print(
        "| fusion | SciFact nDCG@10 | R@30 | R@100 | even ids | odd ids | exact MRR@10 | exact P@1 |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    for label, options in ADAPTIVE:
        ndcg, r30, r100, _, _ = score(scifact, s_qids, s_legs, options)
        halves = [score(scifact, s_qids, s_legs, options, parity)[:3] for parity in (0, 1)]
        even, odd = (" / ".join(f"{x:.4f}" for x in h) for h in halves)
        _, _, _, mrr, p1 = score(exact, e_qids, e_legs, options)
        print(
            f"| {label} | {ndcg:.4f} | {r30:.4f} | {r100:.4f} | {even} | {odd} | {mrr:.4f} | {p1:.4f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
