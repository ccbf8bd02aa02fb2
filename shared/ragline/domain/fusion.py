"""Hybrid fusion of a semantic and a keyword ranking, on (chunk id, score) pairs.

Reciprocal Rank Fusion (Cormack et al. 2009) is the default: ``score = Σ 1 / (k + rank)`` with a fixed
k = 60 (Agentset used k = topK, which flattens the fusion as topK grows). ``convex`` is an opt-in
``alpha * semantic + (1 - alpha) * keyword`` over per-query min-max normalised scores.

The functions work on bare ``(chunk_id, score)`` pairs so a store can fuse before it builds any chunk
object, and materialise only the hits that survive; ties break on chunk id, identically everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragline.domain.models import HybridQuery, ScoreBreakdown, SearchHit

Ranked = Sequence[tuple[str, float]]
"""A leg's ranking, best first: (chunk id, that leg's score)."""


def _minmax(ranked: Ranked) -> dict[str, float]:
    if not ranked:
        return {}
    scores = [s for _, s in ranked]
    lo, hi = min(scores), max(scores)
    span = (hi - lo) or 1.0
    return {cid: (s - lo) / span for cid, s in ranked}


def fuse_ranked(
    semantic: Ranked,
    keyword: Ranked,
    *,
    fusion: str = "rrf",
    k: int = 60,
    alpha: float = 0.5,
    limit: int = 10,
) -> list[tuple[str, ScoreBreakdown]]:
    """The fused order (at most ``limit``), each id with its full score breakdown. Ranks and scores
    stay in plain dicts until the order is known: a breakdown is built only for the survivors (a
    hybrid search fuses up to 2 x 100 candidates to keep 10)."""
    sem = {cid: (rank, score) for rank, (cid, score) in enumerate(semantic, start=1)}
    kw = {cid: (rank, score) for rank, (cid, score) in enumerate(keyword, start=1)}
    candidates = sem.keys() | kw.keys()
    fused: dict[str, float]
    if fusion == "convex":
        sem_norm, kw_norm = _minmax(semantic), _minmax(keyword)
        fused = {
            cid: alpha * sem_norm.get(cid, 0.0) + (1 - alpha) * kw_norm.get(cid, 0.0) for cid in candidates
        }
    else:
        fused = dict.fromkeys(candidates, 0.0)
        for leg in (sem, kw):
            for cid, (rank, _) in leg.items():
                fused[cid] += 1.0 / (k + rank)
    order = sorted(fused, key=lambda cid: (-fused[cid], cid))[:limit]
    out = []
    for cid in order:
        s_rank, s_score = sem.get(cid, (None, None))
        k_rank, k_score = kw.get(cid, (None, None))
        breakdown = ScoreBreakdown(
            semantic_rank=s_rank,
            semantic_score=s_score,
            keyword_rank=k_rank,
            keyword_score=k_score,
            fused_score=fused[cid],
        )
        out.append((cid, breakdown))
    return out


def fuse_query(query: HybridQuery, semantic: Ranked, keyword: Ranked) -> list[tuple[str, ScoreBreakdown]]:
    """The hybrid query's own fusion settings, so every store fuses identically."""
    return fuse_ranked(
        semantic, keyword, fusion=query.fusion, k=query.rrf_k, alpha=query.alpha, limit=query.k
    )


def _fuse_hits(
    semantic: Sequence[SearchHit], keyword: Sequence[SearchHit], **kwargs: object
) -> list[SearchHit]:
    chunks = {h.chunk.id: h.chunk for h in [*semantic, *keyword]}
    sem = [(h.chunk.id, float(h.breakdown.semantic_score or 0.0)) for h in semantic]
    kw = [(h.chunk.id, float(h.breakdown.keyword_score or 0.0)) for h in keyword]
    fused = fuse_ranked(sem, kw, **kwargs)  # type: ignore[arg-type]
    return [SearchHit(chunk=chunks[cid], score=bd.fused_score or 0.0, breakdown=bd) for cid, bd in fused]


def rrf_fuse(
    semantic: Sequence[SearchHit], keyword: Sequence[SearchHit], *, k: int = 60, limit: int = 10
) -> list[SearchHit]:
    """RRF over two lists of hits (each carrying its own leg's score)."""
    return _fuse_hits(semantic, keyword, fusion="rrf", k=k, limit=limit)


def convex_fuse(
    semantic: Sequence[SearchHit], keyword: Sequence[SearchHit], *, alpha: float = 0.5, limit: int = 10
) -> list[SearchHit]:
    """Convex combination over two lists of hits."""
    return _fuse_hits(semantic, keyword, fusion="convex", alpha=alpha, limit=limit)
