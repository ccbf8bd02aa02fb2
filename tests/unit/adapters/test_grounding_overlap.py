"""The offline overlap scorer: support from shared content words, contradiction from its three cues."""

from __future__ import annotations

import pytest

from ragline.adapters.grounding.overlap import OverlapGroundingScorer, contradiction_cue, terms
from ragline.domain.grounding import CitedClaim, EvidenceRef
from tests.support.grounding import SOURCE

pytestmark = pytest.mark.unit


def judge(sentence: str) -> tuple[str, float, tuple[EvidenceRef, ...]]:
    verdict = OverlapGroundingScorer().check([CitedClaim(sentence, ("policy#0",), (SOURCE,))]).verdicts[0]
    return verdict.label, verdict.score, verdict.evidence


def test_a_sentence_the_passage_states_is_supported_with_its_evidence_sentence() -> None:
    label, score, evidence = judge("Used bicycles can be returned when undamaged.")

    assert label == "supported" and score >= 0.8
    assert evidence[0] == EvidenceRef("policy#0", 1)


@pytest.mark.parametrize(
    ("sentence", "cue"),
    [
        ("Used bicycles cannot be returned.", "negation"),
        ("Aspirin decreases the risk of bleeding.", "antonym"),
        ("Returns are accepted within ninety days of purchase.", "number"),
    ],
)
def test_a_sentence_that_says_the_opposite_is_contradicted(sentence: str, cue: str) -> None:
    label, score, evidence = judge(sentence)

    assert label == "contradicted" and score < 0.3 and len(evidence) == 1
    best = SOURCE.sentences[evidence[0].sentence]
    assert contradiction_cue(sentence, best, set(terms(" ".join(SOURCE.sentences)))) == cue


def test_a_sentence_about_something_else_is_not_enough_info() -> None:
    label, score, evidence = judge("The shop opens at nine on Sundays.")

    assert label == "not_enough_info" and score < 0.5 and evidence == ()


def test_a_negation_outside_the_shared_words_is_no_contradiction() -> None:
    """The extractive model's preamble says "no LLM": that negation governs none of the passage's words."""
    label, _, _ = judge("From the documents (no LLM): used bicycles can be returned if undamaged.")

    assert label == "supported"


def test_number_words_and_digits_match() -> None:
    assert "30" in terms("thirty days") and "30" in terms("30 days")
