"""Pure domain algorithms: RRF, citations, IR metrics, ids."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.domain.citations import verify_citations
from ragline.domain.fusion import LEAST_WEIGHT, SEMANTIC_FLOOR, convex_fuse, rrf_fuse
from ragline.domain.metrics import mrr_at, ndcg_at, recall_at
from ragline.domain.models import Chunk, ScoreBreakdown, SearchHit, TenantScope

pytestmark = pytest.mark.unit


def hit(cid: str, leg: str, score: float) -> SearchHit:
    doc, seq = cid.split("#")
    return SearchHit(
        chunk=Chunk(document_id=doc, sequence_number=int(seq), text=cid),
        score=score,
        breakdown=ScoreBreakdown(**{f"{leg}_score": score}),
    )


def test_rrf_uses_fixed_k_and_sums_both_legs() -> None:
    sem = [hit("a#0", "semantic", 0.9), hit("b#0", "semantic", 0.8)]
    kw = [hit("b#0", "keyword", 7.0), hit("c#0", "keyword", 3.0)]
    fused = rrf_fuse(sem, kw, k=60, limit=10)
    assert [h.chunk.id for h in fused] == ["b#0", "a#0", "c#0"]
    b = fused[0].breakdown
    assert (b.semantic_rank, b.keyword_rank, b.semantic_score, b.keyword_score) == (2, 1, 0.8, 7.0)
    assert b.fused_score == pytest.approx(1 / 62 + 1 / 61)


@given(
    st.lists(st.integers(0, 30), unique=True), st.lists(st.integers(0, 30), unique=True), st.integers(1, 10)
)
def test_rrf_is_deterministic_deduplicated_and_bounded(a: list[int], b: list[int], limit: int) -> None:
    sem = [hit(f"d{i}#0", "semantic", 1.0) for i in a]
    kw = [hit(f"d{i}#0", "keyword", 1.0) for i in b]
    out = rrf_fuse(sem, kw, limit=limit)
    ids = [h.chunk.id for h in out]
    assert len(ids) == len(set(ids)) == min(limit, len(set(a) | set(b)))
    assert ids == [h.chunk.id for h in rrf_fuse(sem, kw, limit=limit)]
    assert all(x.score >= y.score for x, y in itertools.pairwise(out))


def test_convex_fusion_weighs_top_anchored_scores() -> None:
    floor = SEMANTIC_FLOOR
    sem = [
        hit("a#0", "semantic", 0.9),
        hit("b#0", "semantic", (0.9 + floor) / 2),
        hit("c#0", "semantic", floor),
    ]
    kw = [hit("c#0", "keyword", 10.0), hit("b#0", "keyword", 5.0)]
    out = convex_fuse(sem, kw, alpha=0.5, limit=3)
    # semantic weights (cosine above the floor over the best's) 1, .5 and the least; BM25 / best .5 and 1
    # a: .5*1 + 0 = .5 ; b: .5*.5 + .5*.5 = .5 ; c: .5*least + .5*1 -> a/b tie broken by id
    assert [h.chunk.id for h in out] == ["c#0", "a#0", "b#0"]
    assert [h.breakdown.fused_score for h in out] == pytest.approx([0.5 + 0.5 * LEAST_WEIGHT, 0.5, 0.5])
    assert [h.chunk.id for h in convex_fuse(sem, kw, alpha=1.0, limit=3)] == ["a#0", "b#0", "c#0"]


def test_citations_keep_known_ids_and_report_invented_ones() -> None:
    v = verify_citations('A <citation ids="d#1, zz#4"/>. B <citation ids="q#2"></citation>.', {"d#1"})
    assert v.text == 'A <citation ids="d#1"/>. B.'
    assert v.cited == ["d#1"] and v.invented == ["zz#4", "q#2"]


def test_citations_with_other_whitespace_are_read_as_the_cli_renders_them() -> None:
    # A model's marker with a newline or two spaces before ids, or a spaced closing tag, is a citation:
    # checked here as the CLI renders it, never left in the answer unverified
    v = verify_citations('A <citation\nids="d#1"/>. B <citation  ids="zz#4"></citation >.', {"d#1"})
    assert v.text == 'A <citation ids="d#1"/>. B.'
    assert v.cited == ["d#1"] and v.invented == ["zz#4"]


def test_answer_without_citations_is_unchanged() -> None:
    assert verify_citations("plain text", {"a#0"}).text == "plain text"


def test_metrics_match_hand_computed_values() -> None:
    qrels = {"d1": 1, "d3": 1}
    ranked = ["d2", "d1", "d3"]
    assert ndcg_at(ranked, qrels, 10) == pytest.approx((1 / 1.5849625 + 1 / 2) / (1 + 1 / 1.5849625))
    assert recall_at(ranked, qrels, 2) == 0.5
    assert mrr_at(ranked, qrels, 10) == 0.5
    assert ndcg_at([], qrels) == 0.0


def test_scope_ids_are_validated() -> None:
    with pytest.raises(ValueError, match="tenant_id"):
        TenantScope(tenant_id="../etc", namespace_id="docs")
    assert Chunk(document_id="guide.md", sequence_number=3, text="x").id == "guide.md#3"
