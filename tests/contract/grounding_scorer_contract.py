"""The GroundingScorer contract: every scorer subclasses :class:`GroundingScorerContract` with one
fixture, a scorer ready to check :data:`CLAIMS` (a scripted one answers for exactly those)."""

from __future__ import annotations

import pytest

from ragline.domain.grounding import LABELS, CitedClaim, Passage
from ragline.domain.models import RunUsage
from ragline.ports import GroundingScorer

RETURNS = Passage("returns.md#0", ("Bicycles can be returned within thirty days.", "Keep the receipt."))
WARRANTY = Passage("warranty.md#2", ("The frame warranty lasts ten years.",))
CLAIMS = [
    CitedClaim("Bicycles can be returned within thirty days.", ("returns.md#0",), (RETURNS,)),
    CitedClaim("The frame warranty lasts two years.", ("warranty.md#2",), (WARRANTY,)),
    CitedClaim("Helmets ship free overnight.", ("returns.md#0", "warranty.md#2"), (RETURNS, WARRANTY)),
]


class GroundingScorerContract:
    """Subclasses provide the ``scorer`` fixture."""

    @pytest.fixture
    def scorer(self) -> GroundingScorer:
        raise NotImplementedError

    def test_has_a_name(self, scorer: GroundingScorer) -> None:
        assert isinstance(scorer.name, str) and scorer.name

    def test_one_verdict_per_claim_in_order_with_a_label_and_a_score_in_range(
        self, scorer: GroundingScorer
    ) -> None:
        checked = scorer.check(CLAIMS)
        assert len(checked.verdicts) == len(CLAIMS)
        assert all(v.label in LABELS and 0.0 <= v.score <= 1.0 for v in checked.verdicts)

    def test_evidence_names_sentences_of_the_claims_own_passages(self, scorer: GroundingScorer) -> None:
        for claim, verdict in zip(CLAIMS, scorer.check(CLAIMS).verdicts, strict=True):
            sentences = {p.chunk_id: p.sentences for p in claim.passages}
            for ref in verdict.evidence:
                assert ref.chunk_id in sentences and 0 <= ref.sentence < len(sentences[ref.chunk_id])

    def test_nothing_to_check_gives_nothing_and_spends_nothing(self, scorer: GroundingScorer) -> None:
        checked = scorer.check([])
        assert checked.verdicts == [] and checked.usage == RunUsage()
