"""The learned lexical verifier: its fitted weights decide, including contradictions the overlap scorer's
rules miss (examples from the even-id half of SciFact train, the half it was fitted on)."""

from __future__ import annotations

import pytest

from ragline.adapters.grounding import verifier_weights
from ragline.adapters.grounding.features import CLAIM_FEATURES, SENTENCE_FEATURES
from ragline.adapters.grounding.linear import Logistic, Softmax
from ragline.adapters.grounding.overlap import OverlapGroundingScorer
from ragline.adapters.grounding.verifier import LexicalVerifierGroundingScorer, fitted_models
from ragline.domain.grounding import CitedClaim, EvidenceRef, Passage
from tests.support.grounding import SOURCE

pytestmark = pytest.mark.unit

# SciFact train claim 542 (CONTRADICT) and the three sentences of its abstract that overlap it most.
STING = Passage(
    "19688024",
    (
        "IFI16 is also required for the cGAMP-induced activation of STING, and interacts with STING to"
        " promote STING phosphorylation and translocation.",
        "Here we show that interferon-γ inducible protein 16 (IFI16) cooperates with cGAS during DNA sensing"
        " in human keratinocytes, as both cGAS and IFI16 are required for the full activation of an innate"
        " immune response to exogenous DNA and DNA viruses.",
        "We propose that the two DNA sensors IFI16 and cGAS cooperate to prevent the spurious activation of"
        " the type I interferon response.",
    ),
)
IMPEDES = CitedClaim(
    "IFI16 impedes STING phosphorylation and translocation, resulting in reduced activation of STING.",
    ("19688024",),
    (STING,),
)


def claim(sentence: str) -> CitedClaim:
    return CitedClaim(sentence, ("policy#0",), (SOURCE,))


def test_a_contradiction_only_the_learned_decision_finds() -> None:
    """Given a train claim whose source says the opposite in other words ("impedes" / "promote"),
    when the verifier checks it, then it is contradicted by the sentence that says so — where the
    overlap scorer's hand-set rules see a supported sentence."""
    verdict = LexicalVerifierGroundingScorer().check([IMPEDES]).verdicts[0]

    assert verdict.label == "contradicted" and verdict.score < 0.5
    assert verdict.evidence[0] == EvidenceRef("19688024", 0)
    assert OverlapGroundingScorer().check([IMPEDES]).verdicts[0].label == "supported"


def test_a_sentence_the_passage_states_is_supported_with_its_evidence_sentence() -> None:
    verdict = LexicalVerifierGroundingScorer().check([claim("Used bicycles can be returned when undamaged.")])

    assert verdict.verdicts[0].label == "supported" and verdict.verdicts[0].score >= 0.6
    assert verdict.verdicts[0].evidence[0] == EvidenceRef("policy#0", 1)


@pytest.mark.parametrize(
    ("sentence", "evidence"),
    [
        ("Used bicycles cannot be returned.", 1),
        ("Aspirin decreases the risk of bleeding.", 2),
        ("Returns are accepted within ninety days of purchase.", 0),
    ],
)
def test_a_sentence_that_says_the_opposite_is_contradicted(sentence: str, evidence: int) -> None:
    verdict = LexicalVerifierGroundingScorer().check([claim(sentence)]).verdicts[0]

    assert verdict.label == "contradicted" and verdict.score < 0.5
    assert verdict.evidence[0] == EvidenceRef("policy#0", evidence)


def test_a_sentence_about_something_else_is_not_enough_info_without_evidence() -> None:
    verdict = (
        LexicalVerifierGroundingScorer().check([claim("The shop opens at nine on Sundays.")]).verdicts[0]
    )

    assert verdict.label == "not_enough_info" and verdict.score < 0.2 and verdict.evidence == ()


def test_the_weights_decide() -> None:
    """Given weights that know only a bias towards not-enough-info, every claim gets that label."""
    n, m = len(CLAIM_FEATURES), len(SENTENCE_FEATURES)
    label = Softmax(
        names=CLAIM_FEATURES, mean=(0.0,) * n, scale=(1.0,) * n,
        classes=("supported", "contradicted", "not_enough_info"),
        bias=(0.0, 0.0, 5.0), weights=((0.0,) * n,) * 3,
    )  # fmt: skip
    evidence = Logistic(names=SENTENCE_FEATURES, mean=(0.0,) * m, scale=(1.0,) * m, weights=(0.0,) * m)
    scorer = LexicalVerifierGroundingScorer(models=(label, evidence))

    verdicts = scorer.check([IMPEDES, claim("Aspirin decreases the risk of bleeding.")]).verdicts

    assert [v.label for v in verdicts] == ["not_enough_info"] * 2


def test_the_shipped_weights_match_the_features(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fitted_models()[0].names == CLAIM_FEATURES
    stale = {**verifier_weights.LABEL_MODEL, "names": [*CLAIM_FEATURES[:-1], "retired"]}
    monkeypatch.setattr(verifier_weights, "LABEL_MODEL", stale)
    fitted_models.cache_clear()
    try:
        with pytest.raises(ValueError, match="fit_grounding"):
            fitted_models()
    finally:
        monkeypatch.undo()
        fitted_models.cache_clear()


def test_a_sentence_its_chunk_states_word_for_word_is_supported() -> None:
    """Given an extractive answer's quote whose chunk also says the opposite of part of it elsewhere
    ("can be returned" / "cannot be returned"), the quote itself is supported, by its own sentence."""
    chunk = Passage(
        "returns-policy.md#0",
        (
            "New bicycles can be returned within 30 days of delivery for a full refund, provided they have"
            " been ridden less than 50 kilometres and are returned with all accessories.",
            "Used or demo bicycles are sold as final sale and cannot be returned, but they carry the same"
            " 12-month frame warranty as new bicycles.",
        ),
    )
    quote = CitedClaim(chunk.sentences[1], (chunk.chunk_id,), (chunk,))

    verdict = LexicalVerifierGroundingScorer().check([quote]).verdicts[0]

    assert verdict.label == "supported" and verdict.score == 1.0
    assert verdict.evidence == (EvidenceRef("returns-policy.md#0", 1),)
