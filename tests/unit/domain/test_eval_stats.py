"""An evaluation's statistics (issue 43): histograms of ten bins of [0, 1], a metric's mean with a
bootstrap interval that contains it and narrows with more answers, and a paired B - A difference whose
interval decides significance."""

from __future__ import annotations

import numpy as np
import pytest

from ragline.domain.eval_stats import histogram, paired_difference, summarise_metric

pytestmark = pytest.mark.unit


def scores(n: int, seed: int = 7) -> list[float]:
    """``n`` scores spread over [0, 1], the same every run."""
    return [float(v) for v in np.random.default_rng(seed).random(n)]


def by_question(values: list[float | None]) -> dict[str, float | None]:
    return {f"q{i:03d}": v for i, v in enumerate(values)}


# histogram


def test_histogram_bins_a_value_by_its_tenth_and_1_in_the_last_bin() -> None:
    assert histogram([0.0]) == [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    assert histogram([0.1]) == [0, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    assert histogram([1.0]) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert histogram([0.05, 0.099, 0.95, 0.999]) == [2, 0, 0, 0, 0, 0, 0, 0, 0, 2]


def test_every_tenth_lands_in_its_own_bin() -> None:
    assert histogram([i / 10 for i in range(10)]) == [1] * 10


def test_histogram_clamps_values_outside_the_unit_interval_and_skips_missing_ones() -> None:
    assert histogram([-0.5, 1.7, None, float("nan")]) == [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert histogram([]) == [0] * 10


# summarise_metric


def test_a_summary_counts_only_present_values() -> None:
    summary = summarise_metric("faithfulness", [0.2, None, 0.4, None, 0.6])
    assert summary.metric == "faithfulness"
    assert summary.n == 3
    assert summary.mean == pytest.approx(0.4)
    assert sum(summary.histogram) == 3


def test_no_value_gives_no_mean_no_interval_and_an_empty_histogram() -> None:
    summary = summarise_metric("correctness", [None, None])
    assert summary.n == 0
    assert (summary.mean, summary.ci_low, summary.ci_high) == (None, None, None)
    assert summary.histogram == [0] * 10


def test_one_value_is_its_own_interval() -> None:
    summary = summarise_metric("correctness", [0.7])
    assert (summary.n, summary.mean, summary.ci_low, summary.ci_high) == (1, 0.7, 0.7, 0.7)


def test_the_interval_contains_the_mean_and_narrows_with_more_answers() -> None:
    widths = []
    for n in (20, 500):
        s = summarise_metric("faithfulness", list(scores(n)))
        assert s.mean is not None and s.ci_low is not None and s.ci_high is not None
        assert s.ci_low < s.mean < s.ci_high
        assert s.ci_low >= 0.0 and s.ci_high <= 1.0
        widths.append(s.ci_high - s.ci_low)
    # sqrt(500 / 20) = 5: the interval of 500 answers is far narrower
    assert widths[1] < widths[0] / 2


def test_identical_values_have_a_point_interval_that_contains_the_mean() -> None:
    summary = summarise_metric("citation_coverage", [0.1] * 30)
    assert summary.mean is not None and summary.ci_low is not None and summary.ci_high is not None
    assert summary.ci_low <= summary.mean <= summary.ci_high
    assert summary.ci_high - summary.ci_low == pytest.approx(0.0, abs=1e-12)


def test_a_summary_is_the_same_for_the_same_seed() -> None:
    values: list[float | None] = list(scores(40))
    assert summarise_metric("m", values) == summarise_metric("m", values)
    assert summarise_metric("m", values, seed=1) == summarise_metric("m", values, seed=1)
    assert summarise_metric("m", values, seed=1) != summarise_metric("m", values, seed=2)


# paired_difference


def test_identical_configurations_differ_by_exactly_zero_and_not_significantly() -> None:
    a = by_question(list(scores(50)))
    diff = paired_difference("faithfulness", a, dict(a))
    assert diff.n == 50
    assert (diff.difference, diff.ci_low, diff.ci_high) == (0.0, 0.0, 0.0)
    assert diff.a_mean == diff.b_mean
    assert not diff.significant


def test_a_consistent_shift_is_significant_and_its_interval_brackets_it() -> None:
    # Given B scoring 0.2 more than A on each of 50 questions, give or take a little noise
    a_values = [0.6 * v for v in scores(50)]
    noise = np.random.default_rng(11).normal(0.0, 0.02, 50)
    a = by_question(list(a_values))
    b = by_question([x + 0.2 + float(e) for x, e in zip(a_values, noise, strict=True)])
    # When compared
    diff = paired_difference("correctness", a, b)
    # Then the difference is about 0.2, its interval holds 0.2 and excludes 0
    assert diff.n == 50
    assert diff.difference == pytest.approx(0.2, abs=0.01)
    assert diff.ci_low is not None and diff.ci_high is not None
    assert 0.0 < diff.ci_low < 0.2 < diff.ci_high
    assert diff.significant


def test_a_negative_shift_is_significant_too() -> None:
    a_values = [0.5 + 0.4 * v for v in scores(30)]
    diff = paired_difference("m", by_question(list(a_values)), by_question([x - 0.3 for x in a_values]))
    assert diff.ci_high is not None and diff.ci_high < 0
    assert diff.significant


def test_a_noisy_zero_mean_difference_is_not_significant() -> None:
    # Given B and A differing only by symmetric noise (exactly zero mean) on 60 questions
    a_values = [0.3 + 0.4 * v for v in scores(60)]
    noise = [0.1 * (v - 0.5) for v in scores(30, seed=3)]
    shifts = [*noise, *(-e for e in noise)]
    diff = paired_difference(
        "m", by_question(list(a_values)), by_question([x + e for x, e in zip(a_values, shifts, strict=True)])
    )
    assert diff.difference == pytest.approx(0.0, abs=1e-12)
    assert diff.ci_low is not None and diff.ci_high is not None
    assert diff.ci_low < 0.0 < diff.ci_high
    assert not diff.significant


def test_questions_scored_on_one_side_only_are_left_out() -> None:
    # Given three questions both scored, one missing on each side and one absent from B
    a: dict[str, float | None] = {"q1": 0.2, "q2": 0.4, "q3": 0.6, "q4": None, "q5": 0.9, "q6": 0.0}
    b: dict[str, float | None] = {"q1": 0.3, "q2": 0.5, "q3": 0.7, "q4": 0.8, "q5": None}
    diff = paired_difference("gold_recall", a, b)
    assert diff.n == 3
    assert diff.a_mean == pytest.approx(0.4)
    assert diff.b_mean == pytest.approx(0.5)
    assert diff.difference == pytest.approx(0.1)


def test_no_question_in_common_is_no_difference() -> None:
    diff = paired_difference("m", {"q1": 0.5, "q2": None}, {"q2": 0.5, "q3": 0.1})
    assert diff.n == 0
    assert (diff.a_mean, diff.b_mean, diff.difference, diff.ci_low, diff.ci_high) == (None,) * 5
    assert not diff.significant


def test_one_paired_question_is_never_significant() -> None:
    diff = paired_difference("m", {"q1": 0.1}, {"q1": 0.9})
    assert diff.n == 1
    assert diff.difference == pytest.approx(0.8)
    assert (diff.ci_low, diff.ci_high) == (diff.difference, diff.difference)
    assert not diff.significant


def test_a_difference_is_the_same_for_the_same_seed_and_any_key_order() -> None:
    a = by_question(list(scores(40)))
    b = by_question(list(scores(40, seed=8)))
    reversed_a = dict(reversed(list(a.items())))
    assert paired_difference("m", a, b) == paired_difference("m", reversed_a, b)
    assert paired_difference("m", a, b, seed=5) != paired_difference("m", a, b, seed=6)
