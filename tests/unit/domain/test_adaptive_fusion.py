"""Fusion that adapts to the query (issue 43): α moves toward the keyword leg for a query naming an
identifier and toward the semantic leg otherwise, and each leg's top ``limit // 2`` always make the
fused list, whose order stays the order of its scores (ties: chunk id)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.config import Settings
from ragline.domain.fusion import (
    ALPHA_SHIFT,
    RESERVED_SHARE,
    adaptive_alpha,
    fuse_query,
    fuse_ranked,
    names_identifier,
)
from ragline.domain.models import HybridQuery

pytestmark = pytest.mark.unit

# The order's chunk: the keyword leg's best, a weak semantic hit (weight (0.3 - 0.2) / (0.6 - 0.2) = 0.25);
# a near-miss: the semantic leg's best, BM25 0.55 of the best (a shared word, another number's family).
# order wins iff α < 0.45 / (0.45 + 0.75) = 0.375: at 0.3 (identifier) yes, at 0.4 (convex) and 0.5 no.
SEMANTIC = [("near-miss#0", 0.60), ("order#0", 0.30)]
KEYWORD = [("order#0", 8.0), ("near-miss#0", 4.4)]


def first(fused: list[tuple[str, object]]) -> str:
    return fused[0][0]


def test_a_query_naming_an_identifier_puts_the_keyword_match_first() -> None:
    fused = fuse_ranked(SEMANTIC, KEYWORD, fusion="adaptive", alpha=0.4, text="Where is order NW-48213?")
    assert first(fused) == "order#0"
    assert fused[0][1].fused_score == pytest.approx(0.3 * 0.25 + 0.7 * 1.0)
    # the fixed α of convex (0.4) puts the near-miss first: the shift is what does it
    assert first(fuse_ranked(SEMANTIC, KEYWORD, fusion="convex", alpha=0.4)) == "near-miss#0"


def test_a_natural_question_leans_on_the_semantic_leg() -> None:
    fused = fuse_ranked(SEMANTIC, KEYWORD, fusion="adaptive", alpha=0.4, text="where is my parcel")
    assert first(fused) == "near-miss#0"
    assert fused[0][1].fused_score == pytest.approx(0.5 * 1.0 + 0.5 * 0.55)


def test_fuse_query_reads_the_querys_own_text_and_alpha() -> None:
    bare = HybridQuery(text="NW-48213", vector=(1.0,), k=10)
    asked = HybridQuery(text="where is my parcel", vector=(1.0,), k=10)
    assert first(fuse_query(bare, SEMANTIC, KEYWORD)) == "order#0"
    assert first(fuse_query(asked, SEMANTIC, KEYWORD)) == "near-miss#0"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("NW-48213", True),
        ("Which store is at LS11 5PS?", True),
        ("Who owns frame SN 7731-0042?", True),
        ("What does error E-2043 mean?", True),
        ("A deficiency of vitamin B12 decreases blood levels of homocysteine.", True),
        ("methadone treatment in 2001", True),
        ("How often should I lubricate the chain?", False),
        ("paid leave days", False),
        ("10% of sudden infant death syndrome (SIDS) deaths", False),  # a percentage, an acronym
        ("E2", False),  # too short to tell
    ],
)
def test_what_counts_as_an_identifier(text: str, expected: bool) -> None:
    assert names_identifier(text) is expected


def test_the_shifted_alpha_stays_within_zero_and_one() -> None:
    assert adaptive_alpha("NW-48213", 0.05) == 0.0
    assert adaptive_alpha("a question", 0.95) == 1.0
    assert adaptive_alpha("NW-48213", 0.4) == pytest.approx(0.3)
    assert adaptive_alpha("a question", 0.4) == pytest.approx(0.5)


def flat_keyword_tail(n: int) -> list[tuple[str, float]]:
    """A long BM25 list whose scores barely fall (a claim sharing common words with many documents)."""
    return [(f"kw{i:03d}#0", 10.0 - 0.01 * i) for i in range(n)]


def test_a_semantic_only_hit_in_the_legs_top_half_survives_into_the_fused_list() -> None:
    # Given the answer third in the semantic leg, its cosine near the floor, the keyword leg silent on it
    semantic = [("sem-a#0", 0.62), ("sem-b#0", 0.55), ("answer#0", 0.25)] + [
        (f"kw{i:03d}#0", 0.24 - 0.001 * i) for i in range(97)
    ]
    keyword = flat_keyword_tail(100)
    # When fused to 10 (each leg's top 5 kept) and to 100 (top 50)
    for limit in (10, 100):
        fused = fuse_ranked(semantic, keyword, fusion="adaptive", alpha=0.4, text="a question", limit=limit)
        ids = [cid for cid, _ in fused]
        # Then the answer and each leg's whole top half are there, and the list is still by score
        assert "answer#0" in ids and len(ids) == limit
        m = int(limit * RESERVED_SHARE)
        assert {c for c, _ in semantic[:m]} | {c for c, _ in keyword[:m]} <= set(ids)
        scores = [bd.fused_score or 0.0 for _, bd in fused]
        assert scores == sorted(scores, reverse=True)
    # while convex with any fixed α the issue measured pushes it out
    for alpha in (0.4, 0.5):
        convex = fuse_ranked(semantic, keyword, fusion="convex", alpha=alpha, limit=10)
        assert "answer#0" not in [cid for cid, _ in convex]


def test_equal_scores_break_on_chunk_id_also_among_the_kept() -> None:
    # b and a tie at 0.5 (each one leg's best, α 0.4 + 0.1), whichever leg comes first
    semantic = [("b#0", 0.9), ("d#0", 0.5)]
    keyword = [("a#0", 9.0), ("c#0", 3.0)]
    for sem, kw in ((semantic, keyword), (keyword, semantic)):
        fused = fuse_ranked(sem, kw, fusion="adaptive", alpha=0.4, text="q", limit=2)
        assert [cid for cid, _ in fused] == ["a#0", "b#0"]
        assert fused[0][1].fused_score == fused[1][1].fused_score == pytest.approx(0.5)


def test_the_defaults_are_the_documented_ones() -> None:
    q = HybridQuery(text="t", vector=(1.0,))
    assert (q.fusion, q.alpha, q.rrf_k) == ("adaptive", 0.4, 60)
    s = Settings()
    assert (s.hybrid_fusion, s.hybrid_alpha) == ("adaptive", 0.4)
    assert (ALPHA_SHIFT, RESERVED_SHARE) == (0.1, 0.5)


def test_on_the_node_adaptive_runs_as_convex_with_the_querys_alpha() -> None:
    from ragline.adapters.opensearch import hybrid as hq

    adaptive = HybridQuery(text="NW-48213", vector=(0.1,), fusion="adaptive", alpha=0.3)
    convex = adaptive.model_copy(update={"fusion": "convex"})
    assert hq.pipeline(adaptive) == hq.pipeline(convex)


legs = st.lists(
    st.tuples(st.sampled_from("abcdefghijkl"), st.floats(0.01, 50)), unique_by=lambda t: t[0], max_size=12
)


@given(legs, legs, st.floats(0, 1), st.integers(1, 12), st.sampled_from(["NW-48213", "chain wear"]))
def test_adaptive_keeps_each_legs_top_half_and_otherwise_the_best_scores(
    sem: list[tuple[str, float]], kw: list[tuple[str, float]], alpha: float, limit: int, text: str
) -> None:
    sem = sorted(sem, key=lambda t: -t[1])
    kw = sorted(kw, key=lambda t: -t[1])
    fused = fuse_ranked(sem, kw, fusion="adaptive", alpha=alpha, limit=limit, text=text)
    everything = fuse_ranked(sem, kw, fusion="convex", alpha=adaptive_alpha(text, alpha), limit=100)
    score = {cid: bd.fused_score for cid, bd in everything}
    ids = [cid for cid, _ in fused]
    assert len(ids) == len(set(ids)) == min(limit, len(score))
    assert all(bd.fused_score == score[cid] for cid, bd in fused)  # the convex score at the shifted α
    assert ids == sorted(ids, key=lambda c: (-(score[c] or 0.0), c))  # by score, ties on chunk id
    kept = {c for c, _ in sem[: limit // 2]} | {c for c, _ in kw[: limit // 2]}
    assert kept <= set(ids)
    rest = [c for c in ids if c not in kept]
    left_out = [c for c in score if c not in ids]
    assert all((score[c] or 0.0) >= (score[o] or 0.0) for c in rest for o in left_out)


def test_the_identifier_rule_reads_a_hostile_query_in_one_pass() -> None:
    """A 4,000-character query of hyphenated letters (the old lookahead regex was quadratic on it)."""
    from ragline.domain.fusion import names_identifier

    assert not names_identifier("a-" * 2000) and not names_identifier("-a" * 2000)
    assert names_identifier("a-" * 1999 + "b7") and names_identifier("x " * 1998 + "2001")


def test_every_surface_takes_the_same_fusion_names() -> None:
    """The setting, the search route, an evaluation's configuration and the store's query agree."""
    from typing import get_args

    from ragline.config import Settings
    from ragline.domain.api import SearchRequest
    from ragline.domain.evaluations import EvalConfig
    from ragline.domain.models import FusionName, HybridQuery

    names = set(get_args(FusionName))
    assert names == {"rrf", "convex", "adaptive"}
    assert set(get_args(Settings.model_fields["hybrid_fusion"].annotation)) == names
    assert set(get_args(HybridQuery.model_fields["fusion"].annotation)) == names
    for model in (SearchRequest, EvalConfig):
        (optional,) = [a for a in get_args(model.model_fields["fusion"].annotation) if a is not type(None)]
        assert set(get_args(optional)) == names, model
