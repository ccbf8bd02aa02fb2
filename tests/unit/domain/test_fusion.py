"""Convex fusion keeps exact matches (issue 24): a leg's only or best hit counts in full, its weakest
hit counts more than a chunk it never found, and candidates of several namespaces fuse on one scale."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.domain.fusion import SEMANTIC_FLOOR, fuse_across, fuse_ranked
from ragline.domain.models import Chunk, HybridQuery, ScoreBreakdown, SearchHit, TenantScope
from ragline.domain.retrieval import RetrievedHit

pytestmark = pytest.mark.unit


def cos_weight(cos: float, best: float) -> float:
    """A semantic hit's weight: its cosine above the floor over the best hit's."""
    return (cos - SEMANTIC_FLOOR) / (best - SEMANTIC_FLOOR)


def test_a_keyword_legs_only_hit_outranks_the_best_semantic_only_hit() -> None:
    # Given the postcode's only keyword hit, second in the semantic leg ("LS11 5PS" on the demo)
    semantic = [("prices#0", 0.31), ("stores#0", 0.28), ("manual#1", 0.25)]
    keyword = [("stores#0", 7.2)]
    # When fused with the default convex settings
    fused = fuse_ranked(semantic, keyword, fusion="convex", alpha=0.5)
    # Then the exact match is first, its keyword evidence at full weight
    assert fused[0][0] == "stores#0"
    assert fused[0][1].fused_score == pytest.approx(0.5 * cos_weight(0.28, 0.31) + 0.5)


def test_a_namespaces_only_chunk_scores_full_weight_not_zero() -> None:
    # Given a namespace holding one chunk, first in both legs (the paid-leave answer)
    fused = fuse_ranked([("holidays#0", 0.62)], [("holidays#0", 3.1)], fusion="convex", alpha=0.5)
    assert fused == [(fused[0][0], fused[0][1])] and fused[0][1].fused_score == pytest.approx(1.0)


def test_a_legs_lowest_hit_counts_more_than_a_chunk_the_leg_never_found() -> None:
    semantic = [("a#0", 0.9), ("b#0", 0.8)]
    keyword = [("c#0", 9.0), ("b#0", 1.0)]
    fused = dict(fuse_ranked(semantic, keyword, fusion="convex", alpha=0.5))
    # b is the keyword leg's lowest hit; a was never found by it: b's keyword evidence still counts
    assert fused["b#0"].fused_score == pytest.approx(0.5 * cos_weight(0.8, 0.9) + 0.5 * 1 / 9)
    assert fused["b#0"].fused_score > 0.5 * cos_weight(0.8, 0.9)


@given(
    st.lists(st.tuples(st.sampled_from("abcdefgh"), st.floats(-1, 1)), unique_by=lambda t: t[0], min_size=1),
    st.lists(st.tuples(st.sampled_from("abcdefgh"), st.floats(0.01, 50)), unique_by=lambda t: t[0]),
    st.floats(0, 1),
)
def test_convex_scores_are_bounded_and_the_top_of_each_leg_has_full_weight(
    sem: list[tuple[str, float]], kw: list[tuple[str, float]], alpha: float
) -> None:
    sem = sorted(sem, key=lambda t: -t[1])
    kw = sorted(kw, key=lambda t: -t[1])
    fused = {
        cid: b.fused_score or 0.0 for cid, b in fuse_ranked(sem, kw, fusion="convex", alpha=alpha, limit=100)
    }
    assert all(-1e-9 <= s <= 1 + 1e-9 for s in fused.values())
    assert fused[sem[0][0]] >= alpha - 1e-9  # the best semantic hit: full semantic weight
    if kw:
        assert fused[kw[0][0]] >= 1 - alpha - 1e-9  # the best keyword hit: full keyword weight
    if 0.01 <= alpha <= 0.99:
        assert all(s > 0 for s in fused.values())  # every hit found counts more than "not found"


def hit(ns: str, cid: str, sem: float | None, kw: float | None, fused: float) -> RetrievedHit:
    doc, seq = cid.split("#")
    return RetrievedHit(
        TenantScope(tenant_id="t", namespace_id=ns),
        SearchHit(
            chunk=Chunk(document_id=doc, sequence_number=int(seq), text=f"{ns} {cid}"),
            score=fused,
            breakdown=ScoreBreakdown(semantic_score=sem, keyword_score=kw, fused_score=fused),
        ),
    )


@pytest.mark.parametrize(("fusion", "alpha"), [("convex", 0.4), ("adaptive", 0.5)])  # a question: α + 0.1
def test_hits_of_several_namespaces_fuse_on_one_scale(fusion: str, alpha: float) -> None:
    # Given each namespace's own fused hits: "hr" holds one chunk, so its own best scores 1.0;
    # "docs" has a weak best (it only shares the word "days") that also scores 1.0 there
    found = [
        hit("docs", "returns#0", 0.21, 2.0, 1.0),
        hit("docs", "tyres#0", 0.05, None, 0.1),
        hit("hr", "holidays#0", 0.74, 6.0, 1.0),
    ]
    query = HybridQuery(text="paid leave days", vector=(1.0,), k=10, fusion=fusion)  # type: ignore[arg-type]
    # When fused again across the namespaces
    out = fuse_across(query, found)
    # Then the answer leads on the shared scale, with ranks among all candidates
    assert [(h.scope.namespace_id, h.hit.chunk.id) for h in out] == [
        ("hr", "holidays#0"),
        ("docs", "returns#0"),
        ("docs", "tyres#0"),
    ]
    best = out[0].hit
    assert (
        best.score == pytest.approx(1.0) and best.breakdown.semantic_rank == best.breakdown.keyword_rank == 1
    )
    a = alpha
    assert out[1].hit.score == pytest.approx(a * cos_weight(0.21, 0.74) + (1 - a) * 2.0 / 6.0)


def test_hits_without_leg_scores_are_merged_by_score_not_dropped() -> None:
    found = [hit("docs", "a#0", None, None, 0.2), hit("hr", "b#0", 0.5, 1.0, 0.9)]
    out = fuse_across(HybridQuery(text="q", vector=(1.0,), k=10), found)
    assert [h.hit.chunk.id for h in out] == ["b#0", "a#0"]
