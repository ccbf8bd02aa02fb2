"""Hybrid fusion of a semantic and a keyword ranking, on (chunk id, score) pairs.

``adaptive`` (the default, issue 43) is ``convex`` with two changes that follow the query. Its α moves
:data:`ALPHA_SHIFT` from the query's α toward the keyword leg when the query names an identifier (a
token mixing letters and digits, ``NW-48213``, ``LS11``, ``B12``, or a run of four digits or more) and
toward the semantic leg otherwise (0.3 / 0.5 around the default 0.4); and each leg's top ``limit // 2``
hits always make the fused ``limit`` (they take the places of the lowest-scoring others), so a chunk
only one leg finds, high in that leg, is never pushed out by the other leg's tail — a reranker of the
fused 30 sees each leg's top 15. Scores are convex scores, so the fused order is still by score.

``convex`` is ``alpha * semantic + (1 - alpha) * keyword`` over *top-anchored* scores:
each leg is scaled so that its best hit scores 1, any hit scores above 0 and a chunk the leg did not
return scores 0. The keyword leg is BM25 over its best (``score / max``); the semantic leg is the cosine
above a floor (0.2) over the best one's (``(cos - floor) / (max - floor)``), so a leg's only hit — an order
number, a postcode — gets full weight instead of min-max's 0, and its weakest hit is never mistaken for
"not found". Both depend only on raw scores and the leg's best, so candidates from several namespaces
can be fused again on one scale (:func:`fuse_across`). Reciprocal Rank Fusion (Cormack et al. 2009)
``Σ 1 / (k + rank)`` with a fixed k = 60 is the alternative. Constants chosen on SciFact train and an
exact-match set (``bench/fusion_alpha.py``; ``docs/benchmarks.md``).

The functions work on bare ``(chunk_id, score)`` pairs so a store can fuse before it builds any chunk
object, and materialise only the hits that survive; ties break on chunk id, identically everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ragline.domain.models import HybridQuery, ScoreBreakdown, SearchHit
from ragline.domain.retrieval import RetrievedHit

Ranked = Sequence[tuple[str, float]]
"""A leg's ranking, best first: (chunk id, that leg's score)."""
Normalise = Callable[[Ranked], dict[str, float]]
"""A leg's scores put on [0, 1] for ``convex`` fusion (absent ids: 0, "not found")."""

SEMANTIC_FLOOR = 0.2
"""The cosine that counts as no evidence (unrelated text scores about 0–0.2 with sentence embedders):
a hit's semantic weight is its cosine above it over the best hit's. Chosen with α on SciFact train."""
LEAST_WEIGHT = 1e-3
"""What a returned hit scores at the least: more than a chunk its leg did not return."""
ALPHA_SHIFT = 0.1
"""How far ``adaptive`` moves α from the query's: down (keyword) for an identifier, up otherwise."""
RESERVED_SHARE = 0.5
"""``adaptive``: each leg's top ``int(limit * RESERVED_SHARE)`` hits always make the fused ``limit``."""
TOKEN = re.compile(r"[\w-]+")
"""A query's tokens for :func:`names_identifier`: runs of word characters and hyphens."""


def names_identifier(text: str) -> bool:
    """Whether the query names an identifier — an order or part number, a postcode, a gene, a year: a
    token of 3+ characters (hyphens inside) mixing letters and digits, or a run of 4+ digits. One pass
    over the tokens: linear in the query, whatever it holds."""
    for token in TOKEN.findall(text):
        core = token.strip("-")
        if len(core) >= 3 and any(c.isdecimal() for c in core) and any(c.isalpha() for c in core):
            return True
        if any(len(part) >= 4 and part.isdecimal() for part in core.split("-")):
            return True
    return False


def adaptive_alpha(text: str, alpha: float, shift: float = ALPHA_SHIFT) -> float:
    """The query's semantic weight under ``adaptive`` fusion: ``alpha - shift`` when ``text`` names an
    identifier (exact matches are the keyword leg's), ``alpha + shift`` otherwise; within [0, 1]."""
    return min(1.0, max(0.0, alpha - shift if names_identifier(text) else alpha + shift))


def keep_each_legs_top(
    order: list[str], semantic: Ranked, keyword: Ranked, limit: int, share: float
) -> list[str]:
    """The first ``limit`` of ``order`` once each leg's top ``int(limit * share)`` are in: those stay, and
    the other places go to the rest in ``order``'s order (so the result is still in ``order``'s order:
    a reserved hit that ranked below the cut takes the place of the last one that did not)."""
    m = int(limit * share)
    reserved = {cid for cid, _ in semantic[:m]} | {cid for cid, _ in keyword[:m]}
    free = limit - len(reserved)
    out = []
    for cid in order:
        if cid in reserved:
            out.append(cid)
        elif free > 0:
            out.append(cid)
            free -= 1
    return out[:limit]


def top_anchored(ranked: Ranked, floor: float = 0.0) -> dict[str, float]:
    """``(s - floor) / (best - floor)``, kept within ``[LEAST_WEIGHT, 1]``; the best hit always scores 1
    (also when it is at or below ``floor``: the leg's only evidence still counts in full)."""
    if not ranked:
        return {}
    best = max(s for _, s in ranked)
    span = best - floor
    if span <= 0:
        return {cid: 1.0 if s >= best else LEAST_WEIGHT for cid, s in ranked}
    return {cid: min(1.0, max(LEAST_WEIGHT, (s - floor) / span)) for cid, s in ranked}


def semantic_weights(ranked: Ranked) -> dict[str, float]:
    return top_anchored(ranked, SEMANTIC_FLOOR)


def keyword_weights(ranked: Ranked) -> dict[str, float]:
    return top_anchored(ranked, 0.0)


def fuse_ranked(
    semantic: Ranked,
    keyword: Ranked,
    *,
    fusion: str = "rrf",
    k: int = 60,
    alpha: float = 0.5,
    limit: int = 10,
    text: str = "",
    normalise: tuple[Normalise, Normalise] = (semantic_weights, keyword_weights),
    shift: float = ALPHA_SHIFT,
    reserved: float = RESERVED_SHARE,
) -> list[tuple[str, ScoreBreakdown]]:
    """The fused order (at most ``limit``), each id with its full score breakdown. Ranks and scores
    stay in plain dicts until the order is known: a breakdown is built only for the survivors (a
    hybrid search fuses up to 2 x 100 candidates to keep 10). ``text`` is the query (``adaptive``
    reads its form). ``normalise`` (semantic, keyword), ``shift`` and ``reserved`` are for measuring
    alternatives (``bench/fusion_alpha.py``)."""
    sem = {cid: (rank, score) for rank, (cid, score) in enumerate(semantic, start=1)}
    kw = {cid: (rank, score) for rank, (cid, score) in enumerate(keyword, start=1)}
    candidates = sem.keys() | kw.keys()
    fused: dict[str, float]
    if fusion in ("convex", "adaptive"):
        a = adaptive_alpha(text, alpha, shift) if fusion == "adaptive" else alpha
        sem_w, kw_w = normalise[0](semantic), normalise[1](keyword)
        fused = {cid: a * sem_w.get(cid, 0.0) + (1 - a) * kw_w.get(cid, 0.0) for cid in candidates}
    else:
        fused = dict.fromkeys(candidates, 0.0)
        for leg in (sem, kw):
            for cid, (rank, _) in leg.items():
                fused[cid] += 1.0 / (k + rank)
    order = sorted(fused, key=lambda cid: (-fused[cid], cid))
    if fusion == "adaptive":
        order = keep_each_legs_top(order, semantic, keyword, limit, reserved)
    order = order[:limit]
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
        semantic,
        keyword,
        fusion=query.fusion,
        k=query.rrf_k,
        alpha=query.alpha,
        limit=query.k,
        text=query.text,
    )


def fuse_across(query: HybridQuery, found: Sequence[RetrievedHit]) -> list[RetrievedHit]:
    """Hybrid hits of several namespaces fused again as one ranking, best first (at most ``query.k``).

    Each namespace fused its own legs, so its fused scores are relative to its own best hits: a
    namespace holding one chunk scores it 1 whatever it says. Here the legs are rebuilt from every
    hit's raw scores (cosines from one embedder; BM25) and fused on one scale with the query's
    settings; ranks in the breakdowns become ranks among all the namespaces' candidates. A hit that
    reports neither leg's score (a store without a breakdown) cannot be placed on that scale: then
    every hit is merged by its own score, as before, rather than one being dropped.
    """
    if any(h.hit.breakdown.semantic_score is None and h.hit.breakdown.keyword_score is None for h in found):
        return sorted(found, key=lambda h: -h.hit.score)[: query.k]
    key = {id(h): f"{h.scope.namespace_id}\0{h.hit.chunk.id}" for h in found}
    by_key = {key[id(h)]: h for h in found}

    def leg(score: Callable[[ScoreBreakdown], float | None]) -> list[tuple[str, float]]:
        pairs = [(key[id(h)], s) for h in found if (s := score(h.hit.breakdown)) is not None]
        return sorted(pairs, key=lambda p: (-p[1], p[0]))

    fused = fuse_query(query, leg(lambda b: b.semantic_score), leg(lambda b: b.keyword_score))
    return [
        RetrievedHit(
            by_key[cid].scope,
            by_key[cid].hit.model_copy(update={"score": bd.fused_score or 0.0, "breakdown": bd}),
        )
        for cid, bd in fused
    ]


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
