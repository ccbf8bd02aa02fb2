"""The learned lexical verifier: the overlap scorer's signals, weighed by a model fitted on SciFact train.

Same inputs as :mod:`~ragline.adapters.grounding.overlap` (stemmed content words, its three
contradiction cues) plus rarity-weighted and bigram overlap, a direction flip (``increases`` against
``reduced``) and the claim's own shape (:mod:`~ragline.adapters.grounding.features`). It decides in
two steps, with no hand-set threshold:

- a claim one cited sentence states word for word (all its content words, in order, no contradiction
  cue on that sentence) is ``supported`` with score 1: an extractive answer quotes its chunks, and
  SciFact's claims, which the model learned from, are almost never verbatim;
- otherwise a softmax regression over those features decides ``supported`` / ``contradicted`` /
  ``not_enough_info``; the verdict's score is the probability of ``supported``;
- a logistic regression rates the best-overlapping passage sentences as evidence; those rated at
  least :data:`EVIDENCE_MIN` are named (at most :data:`MAX_EVIDENCE`, best first), and only for a
  supported or contradicted verdict.

Both were fitted on the even-id half of SciFact train by bench/fit_grounding.py (weights in
:mod:`~ragline.adapters.grounding.verifier_weights`) and are measured on the odd-id half
(docs/benchmarks.md). Pure Python at run time (no numpy, no model file), so it runs in the AWS layer.
It still judges words, not meaning.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from ragline.adapters.grounding import verifier_weights as fitted
from ragline.adapters.grounding.features import (
    CLAIM_FEATURES,
    SENTENCE_FEATURES,
    Scored,
    score_claim,
    sentence_features,
)
from ragline.adapters.grounding.linear import Logistic, Softmax, logistic_from, softmax_from
from ragline.domain.grounding import LABELS, Checked, CitedClaim, EvidenceRef, GroundingLabel, Verdict

TOP = 5
"""Passage sentences (best overlap first) the evidence model rates, as it was fitted."""
EVIDENCE_MIN: float = fitted.EVIDENCE_MIN
MAX_EVIDENCE: int = fitted.MAX_EVIDENCE


@lru_cache(maxsize=1)
def fitted_models() -> tuple[Softmax, Logistic]:
    """The shipped weights, checked against the features this code computes."""
    label, evidence = softmax_from(fitted.LABEL_MODEL), logistic_from(fitted.EVIDENCE_MODEL)
    if (
        label.names != CLAIM_FEATURES
        or evidence.names != SENTENCE_FEATURES
        or set(label.classes) != set(LABELS)
    ):
        raise ValueError("verifier_weights.py was fitted for other features: rerun bench/fit_grounding.py")
    return label, evidence


class LexicalVerifierGroundingScorer:
    """See the module docstring; ``models`` replaces the shipped weights (tests, refits)."""

    name = "verifier"

    def __init__(self, *, models: tuple[Softmax, Logistic] | None = None) -> None:
        self._models = models

    def check(self, claims: Sequence[CitedClaim]) -> Checked:
        return Checked(verdicts=[self.verdict(c) for c in claims])

    def verdict(self, claim: CitedClaim) -> Verdict:
        label_model, evidence_model = self._models or fitted_models()
        scored = score_claim(claim)
        if scored is None:
            return Verdict("not_enough_info", 0.0)
        stated = [
            k
            for k, (share, pairs, cue) in enumerate(
                zip(scored.shares, scored.bigram_shares, scored.cues, strict=True)
            )
            if share == 1.0 and pairs == 1.0 and cue is None
        ]
        if stated:  # the cited chunk says it word for word (an extractive answer's quote)
            row = scored.rows[stated[0]]
            return Verdict("supported", 1.0, (EvidenceRef(row.chunk_id, row.index),))
        p = label_model.probabilities(scored.vector)
        label: GroundingLabel = max(LABELS, key=lambda c: p[c])
        score = round(min(max(p["supported"], 0.0), 1.0), 4)
        if label == "not_enough_info":
            return Verdict(label, score)
        return Verdict(label, score, self._evidence(scored, evidence_model))

    @staticmethod
    def _evidence(scored: Scored, model: Logistic) -> tuple[EvidenceRef, ...]:
        rated = [
            (model.probability(sentence_features(scored, rank)), rank)
            for rank in range(min(TOP, len(scored.rows)))
        ]
        chosen = sorted((r for r in rated if r[0] >= EVIDENCE_MIN), key=lambda r: (-r[0], r[1]))
        return tuple(
            EvidenceRef(scored.rows[k].chunk_id, scored.rows[k].index) for _, k in chosen[:MAX_EVIDENCE]
        )
