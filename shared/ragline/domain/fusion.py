"""Reciprocal Rank Fusion (Cormack et al. 2009): ``score = Σ 1 / (k + rank)``, k = 60 by default.

Agentset used ``k = topK``, which flattens the fusion as topK grows; Ragline keeps k fixed.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragline.domain.models import HybridQuery, ScoreBreakdown, SearchHit


def rrf_fuse(
    semantic: Sequence[SearchHit], keyword: Sequence[SearchHit], *, k: int = 60, limit: int = 10
) -> list[SearchHit]:
    """Fuse two ranked lists of hits (each already carrying its own leg's breakdown)."""
    by_id: dict[str, SearchHit] = {}
    fused: dict[str, float] = {}
    breakdowns: dict[str, ScoreBreakdown] = {}
    for hits, leg in ((semantic, "semantic"), (keyword, "keyword")):
        for rank, hit in enumerate(hits, start=1):
            cid = hit.chunk.id
            by_id.setdefault(cid, hit)
            fused[cid] = fused.get(cid, 0.0) + 1.0 / (k + rank)
            bd = breakdowns.setdefault(cid, ScoreBreakdown())
            setattr(bd, f"{leg}_rank", rank)
            setattr(bd, f"{leg}_score", getattr(hit.breakdown, f"{leg}_score"))
    # Ties break on chunk id so the order is deterministic across backends.
    order = sorted(fused, key=lambda cid: (-fused[cid], cid))[:limit]
    out: list[SearchHit] = []
    for cid in order:
        bd = breakdowns[cid]
        bd.fused_score = fused[cid]
        out.append(SearchHit(chunk=by_id[cid].chunk, score=fused[cid], breakdown=bd))
    return out


def convex_fuse(
    semantic: Sequence[SearchHit], keyword: Sequence[SearchHit], *, alpha: float = 0.5, limit: int = 10
) -> list[SearchHit]:
    """``alpha * semantic + (1 - alpha) * keyword`` over per-query min-max normalised scores.

    Uses the scores, not just the ranks, so a confident leg can outvote a flat one; a hit missing
    from a leg gets 0 for it. Opt-in (``fusion="convex"``); RRF stays the default.
    """
    legs = {"semantic": _minmax(semantic, "semantic"), "keyword": _minmax(keyword, "keyword")}
    by_id: dict[str, SearchHit] = {}
    breakdowns: dict[str, ScoreBreakdown] = {}
    for hits, leg in ((semantic, "semantic"), (keyword, "keyword")):
        for rank, hit in enumerate(hits, start=1):
            cid = hit.chunk.id
            by_id.setdefault(cid, hit)
            bd = breakdowns.setdefault(cid, ScoreBreakdown())
            setattr(bd, f"{leg}_rank", rank)
            setattr(bd, f"{leg}_score", getattr(hit.breakdown, f"{leg}_score"))
    fused = {
        cid: alpha * legs["semantic"].get(cid, 0.0) + (1 - alpha) * legs["keyword"].get(cid, 0.0)
        for cid in by_id
    }
    out: list[SearchHit] = []
    for cid in sorted(fused, key=lambda c: (-fused[c], c))[:limit]:
        bd = breakdowns[cid]
        bd.fused_score = fused[cid]
        out.append(SearchHit(chunk=by_id[cid].chunk, score=fused[cid], breakdown=bd))
    return out


def _minmax(hits: Sequence[SearchHit], leg: str) -> dict[str, float]:
    scores = [float(getattr(h.breakdown, f"{leg}_score") or 0.0) for h in hits]
    if not scores:
        return {}
    lo, hi = min(scores), max(scores)
    span = (hi - lo) or 1.0
    return {h.chunk.id: (s - lo) / span for h, s in zip(hits, scores, strict=True)}


def fuse(query: HybridQuery, semantic: Sequence[SearchHit], keyword: Sequence[SearchHit]) -> list[SearchHit]:
    """The hybrid query's own fusion, so every store fuses identically."""
    if query.fusion == "convex":
        return convex_fuse(semantic, keyword, alpha=query.alpha, limit=query.k)
    return rrf_fuse(semantic, keyword, k=query.rrf_k, limit=query.k)
