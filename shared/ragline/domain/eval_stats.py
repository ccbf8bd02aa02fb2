"""The statistics of an answer evaluation: a metric's distribution and mean with a bootstrap confidence
interval, and the paired difference of two configurations on it.

Intervals are percentile bootstraps (Efron & Tibshirani 1993): the mean is recomputed on ``resamples``
resamples drawn with replacement, and the interval is their 2.5th to 97.5th percentile. The resamples
come from one seeded generator, so a report is the same every time it is built; they are drawn at once
as a ``resamples x n`` index matrix (500 questions x 2,000 resamples: a few milliseconds a metric). A
difference resamples questions, not answers: the same indices pick both configurations' scores, so a
question's difficulty cancels out of the comparison. The percentile bootstrap is optimistic on a few
questions; a difference needs two paired questions at least to be called significant.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from ragline.domain.evaluations import MetricDifference, MetricSummary

BINS = 10
"""A histogram's bins: ten equal ones of [0, 1]."""
RESAMPLES = 2000
SEED = 43
CONFIDENCE = 0.95

Floats = npt.NDArray[np.float64]


def present(values: Iterable[float | None]) -> Floats:
    """The values that are there: ``None`` and NaN dropped, order kept."""
    array = np.array([v for v in values if v is not None], dtype=np.float64)
    return array[~np.isnan(array)]


def histogram(values: Iterable[float | None]) -> list[int]:
    """Counts in ten equal bins of [0, 1]: bin ``i`` holds ``[i/10, (i+1)/10)``, the last also 1.0;
    values outside [0, 1] count in the nearest end bin, ``None`` and NaN not at all."""
    array = np.clip(present(values), 0.0, 1.0)
    bins = np.minimum((array * BINS).astype(np.int64), BINS - 1)
    return [int(c) for c in np.bincount(bins, minlength=BINS)]


def bootstrap_means(values: Floats, *, resamples: int = RESAMPLES, seed: int = SEED) -> Floats:
    """The mean of each of ``resamples`` resamples (with replacement, same size) of ``values``."""
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, len(values), size=(resamples, len(values)))
    means: Floats = values[indices].mean(axis=1)
    return means


def percentile_interval(values: Floats, estimate: float, **bootstrap: int) -> tuple[float, float]:
    """The percentile bootstrap 95 % interval of the mean of ``values``, widened (by rounding error at
    most, in practice) to contain ``estimate``; a single value's is ``(estimate, estimate)``."""
    if len(values) < 2:
        return estimate, estimate
    tail = (1 - CONFIDENCE) / 2 * 100
    low, high = np.percentile(bootstrap_means(values, **bootstrap), [tail, 100 - tail])
    return min(float(low), estimate), max(float(high), estimate)


def summarise_metric(
    metric: str, values: Iterable[float | None], *, resamples: int = RESAMPLES, seed: int = SEED
) -> MetricSummary:
    """One metric under one configuration: ``n`` the answers that have it, their mean with its
    bootstrap 95 % interval (which contains the mean), and their histogram. No value: ``n`` 0, no mean
    or interval, a histogram of zeros."""
    array = present(values)
    if len(array) == 0:
        return MetricSummary(metric=metric, n=0, histogram=[0] * BINS)
    mean = float(array.mean())
    low, high = percentile_interval(array, mean, resamples=resamples, seed=seed)
    return MetricSummary(
        metric=metric, n=len(array), mean=mean, ci_low=low, ci_high=high, histogram=histogram(array)
    )


def paired_difference(
    metric: str,
    a: Mapping[str, float | None],
    b: Mapping[str, float | None],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> MetricDifference:
    """B minus A on one metric over the questions both scored (a question missing or ``None`` on
    either side is left out of ``n`` and the means): the mean difference with its paired bootstrap
    95 % interval. ``significant``: at least two questions, and the interval excludes 0 (strictly).
    No question in common: ``n`` 0, no means, not significant."""
    pairs = [(a[q], b[q]) for q in sorted(a.keys() & b.keys())]
    kept = [(x, y) for x, y in pairs if x is not None and y is not None and not np.isnan(x - y)]
    if not kept:
        return MetricDifference(metric=metric, n=0)
    scores = np.array(kept, dtype=np.float64)
    differences = scores[:, 1] - scores[:, 0]
    difference = float(differences.mean())
    low, high = percentile_interval(differences, difference, resamples=resamples, seed=seed)
    return MetricDifference(
        metric=metric,
        n=len(kept),
        a_mean=float(scores[:, 0].mean()),
        b_mean=float(scores[:, 1].mean()),
        difference=difference,
        ci_low=low,
        ci_high=high,
        significant=len(kept) >= 2 and (low > 0 or high < 0),
    )
