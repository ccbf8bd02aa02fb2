"""The offline OCR's word spaces, put back from the blank columns between letters."""

from __future__ import annotations

import numpy as np
import pytest

from ragline.adapters.local_models.ocr import SPACE_GAPS, _blank_runs, _spaced, _word_gap

pytestmark = pytest.mark.unit


def test_a_blank_run_between_two_character_centres_becomes_one_space() -> None:
    assert _spaced("abcd", [5, 15, 35, 45], [25.0]) == "ab cd"
    assert _spaced("ab cd", [5, 15, 20, 35, 45], [25.0]) == "ab cd"  # the recogniser's own space stays
    assert _spaced("abcd", [5, 15, 35, 45], []) == "abcd"


def test_the_cut_is_the_widest_jump_in_the_range_and_the_upper_bound_without_one() -> None:
    height = 50  # the range is 9..20 pixels
    assert _word_gap([1, 2, 3, 2, 12, 14, 13], height) == 12
    assert _word_gap([1, 2, 3, 4, 5], height) == SPACE_GAPS[1] * height  # one word: no space
    assert _word_gap([2, 3, 30], height) == 30  # the jump from 3 to 30 starts inside the range


def test_blank_runs_are_found_in_the_lines_own_pixels() -> None:
    grey = np.full((40, 200), 255.0)
    grey[10:30, 10:20] = 0  # letters 2 pixels apart, then a word 20 pixels on
    grey[10:30, 22:32] = 0
    grey[10:30, 52:62] = 0
    box = np.array([[0, 5], [199, 5], [199, 35], [0, 35]], dtype=float)
    assert _blank_runs(grey, box) == [pytest.approx((31 + 52) / 2)]
