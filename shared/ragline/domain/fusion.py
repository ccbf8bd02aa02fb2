"""Reciprocal Rank Fusion (Cormack et al. 2009): ``score = Σ 1 / (k + rank)``, k = 60 by default.

Agentset used ``k = topK``, which flattens the fusion as topK grows; Ragline keeps k fixed.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragline.domain.models import ScoreBreakdown, SearchHit


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
