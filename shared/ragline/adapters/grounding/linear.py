"""Small linear models over named features, evaluated in pure Python (no numpy at run time).

:class:`Softmax` decides a claim's label from :data:`~ragline.adapters.grounding.features.CLAIM_FEATURES`;
:class:`Logistic` rates a passage sentence as evidence from ``SENTENCE_FEATURES``. Both standardise
their inputs with the means and scales they were fitted with (bench/fit_grounding.py writes them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Standardised:
    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]

    def __post_init__(self) -> None:
        if not len(self.names) == len(self.mean) == len(self.scale):
            raise ValueError("a model needs one mean and one scale per feature")

    def inputs(self, x: Sequence[float]) -> list[float]:
        if len(x) != len(self.names):
            raise ValueError(f"expected {len(self.names)} features, got {len(x)}")
        return [(v - m) / s for v, m, s in zip(x, self.mean, self.scale, strict=True)]


@dataclass(frozen=True)
class Softmax(Standardised):
    """Per class: a bias and one weight per feature; :meth:`probabilities` are the softmax."""

    classes: tuple[str, ...] = ()
    bias: tuple[float, ...] = ()
    weights: tuple[tuple[float, ...], ...] = ()

    def probabilities(self, x: Sequence[float]) -> dict[str, float]:
        z = self.inputs(x)
        logits = [
            b + sum(w * v for w, v in zip(ws, z, strict=True))
            for b, ws in zip(self.bias, self.weights, strict=True)
        ]
        top = max(logits)
        exp = [math.exp(v - top) for v in logits]
        return {c: e / sum(exp) for c, e in zip(self.classes, exp, strict=True)}


@dataclass(frozen=True)
class Logistic(Standardised):
    """A bias and one weight per feature; :meth:`probability` is the sigmoid."""

    bias: float = 0.0
    weights: tuple[float, ...] = ()

    def probability(self, x: Sequence[float]) -> float:
        z = self.bias + sum(w * v for w, v in zip(self.weights, self.inputs(x), strict=True))
        return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


def softmax_from(spec: Mapping[str, object]) -> Softmax:
    return Softmax(**{k: _tuples(v) for k, v in spec.items()})  # type: ignore[arg-type]


def logistic_from(spec: Mapping[str, object]) -> Logistic:
    return Logistic(**{k: _tuples(v) for k, v in spec.items()})  # type: ignore[arg-type]


def _tuples(value: object) -> object:
    if isinstance(value, list | tuple):
        return tuple(_tuples(v) for v in value)
    return value
