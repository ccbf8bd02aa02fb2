"""Packing by bisection over running token totals gives the ranges of the plain greedy fill."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragline.documents.packing import Segment, Window, pack

pytestmark = pytest.mark.unit


def greedy(tokens: list[int], budget: int, overlap: int, context: int) -> Iterator[tuple[int, int, int, int]]:
    """The specification: fill one unit at a time, then back up one unit at a time."""
    start, n = 0, len(tokens)
    while start < n:
        end, total = start + 1, tokens[start]
        while end < n and total + tokens[end] <= budget:
            total += tokens[end]
            end += 1
        yield max(0, start - context), start, end, min(end + context, n)
        if end >= n:
            return
        room = min(overlap, budget - tokens[end])
        back, carried = end, 0
        while back - 1 > start and carried + tokens[back - 1] <= room:
            back -= 1
            carried += tokens[back]
        start = back


def segments(tokens: list[int], cuts: list[int]) -> Iterator[Segment]:
    """``tokens`` as one run's segments, cut at ``cuts``."""
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(tokens)}), len(tokens)]
    for lo, hi in pairwise(bounds):
        texts = [f"u{i}" for i in range(lo, hi)]
        yield 0, texts, [" "] * len(texts), tokens[lo:hi]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=80),
    st.lists(st.integers(min_value=0, max_value=80), max_size=6),
    st.integers(min_value=1, max_value=30),
    st.integers(min_value=0, max_value=30),
    st.integers(min_value=0, max_value=3),
)
def test_property_pack_matches_the_unit_by_unit_greedy_fill(
    tokens: list[int], cuts: list[int], budget: int, overlap: int, context: int
) -> None:
    # Given units that fit the budget (fit() guarantees it), arriving in arbitrary segments
    tokens = [min(t, budget) for t in tokens]
    window = Window(segments(tokens, cuts))
    # When packed
    ranges = []
    for lo, start, end, hi in pack(window, budget, overlap, context):
        ranges.append((lo, start, end, hi))
        # Then every chunk's text is its units joined by their breaks
        assert window.join(start, end) == " ".join(f"u{i}" for i in range(start, end))
        assert window.join(lo, hi) == " ".join(f"u{i}" for i in range(lo, hi))
    # And the ranges are the plain greedy fill's
    assert ranges == list(greedy(tokens, budget, overlap, context))


def test_given_a_long_run_when_packed_then_the_window_drops_units_no_chunk_can_reach() -> None:
    tokens = [5] * 20_000
    window = Window(segments(tokens, list(range(0, 20_000, 700))))

    chunks = list(pack(window, 50, 10, 2))

    assert len(chunks) > 2_000
    assert len(window.tokens) < 3_000  # not the whole run
    assert len(window.totals) == len(window.tokens) + 1
