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


def _breakdowns(semantic: Ranked, keyword: Ranked) -> dict[str, ScoreBreakdown]:
    out: dict[str, ScoreBreakdown] = {}
    for rank, (cid, score) in enumerate(semantic, start=1):
        bd = out.setdefault(cid, ScoreBreakdown())
        bd.semantic_rank, bd.semantic_score = rank, score
    for rank, (cid, score) in enumerate(keyword, start=1):
        bd = out.setdefault(cid, ScoreBreakdown())
        bd.keyword_rank, bd.keyword_score = rank, score
    return out


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
    """The fused order (at most ``limit``), each id with its full score breakdown."""
    breakdowns = _breakdowns(semantic, keyword)
    fused: dict[str, float] = {}
    if fusion == "convex":
        sem, kw = _minmax(semantic), _minmax(keyword)
        fused = {cid: alpha * sem.get(cid, 0.0) + (1 - alpha) * kw.get(cid, 0.0) for cid in breakdowns}
    else:
        for cid, bd in breakdowns.items():
            fused[cid] = sum(1.0 / (k + r) for r in (bd.semantic_rank, bd.keyword_rank) if r is not None)
    order = sorted(fused, key=lambda cid: (-fused[cid], cid))[:limit]
    for cid in order:
        breakdowns[cid].fused_score = fused[cid]
    return [(cid, breakdowns[cid]) for cid in order]


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
