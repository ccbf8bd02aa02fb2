"""GroundingService: which sentences are checked against which chunks, the caps on that work, the
warnings, and a failing scorer degrading to "unavailable" without costing the answer."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ragline import errors
from ragline.domain.grounding import Checked, CitedClaim, EvidenceRef, GroundingLimits, Verdict
from ragline.domain.models import RunUsage
from ragline.services.grounding import GroundingService, answer_sentences, cited_claims

pytestmark = pytest.mark.unit

CHUNKS = {
    "a#0": "The frame warranty lasts ten years. It covers cracks. It excludes crashes.",
    "b#0": "Bicycles can be returned within thirty days.",
    "c#0": "Tyres run at five to seven bar.",
}


class Recording:
    """A scorer that answers a fixed label and keeps what it was asked."""

    name = "recording"

    def __init__(self, label: str = "supported", usage: RunUsage | None = None) -> None:
        self.label, self.usage = label, usage or RunUsage()
        self.asked: list[CitedClaim] = []

    def check(self, claims: Sequence[CitedClaim]) -> Checked:
        self.asked += claims
        verdicts = [
            Verdict(
                self.label,
                0.9 if self.label == "supported" else 0.1,
                (EvidenceRef(c.passages[0].chunk_id, 0),),
            )  # type: ignore[arg-type]
            for c in claims
        ]
        return Checked(verdicts=verdicts, usage=self.usage)


class Failing:
    name = "failing"

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def check(self, claims: Sequence[CitedClaim]) -> Checked:
        raise self.exc


def test_a_marker_after_the_period_belongs_to_the_sentence_before_it() -> None:
    answer = 'One fact. <citation ids="a#0"/> Two facts <citation ids="b#0,a#0"/>. Three.'

    assert answer_sentences(answer) == [
        ("One fact.", ["a#0"]),
        ("Two facts.", ["b#0", "a#0"]),
        ("Three.", []),
    ]


def test_only_cited_sentences_are_checked_and_uncited_ones_are_counted() -> None:
    scorer = Recording()
    answer = 'Intro without a source. The warranty lasts ten years <citation ids="a#0"/>.'

    result = GroundingService(scorer).assess(answer, CHUNKS, RunUsage())

    assert [c.text for c in scorer.asked] == ["The warranty lasts ten years."]
    assert result.grounding.status == "scored" and result.grounding.uncited == 1
    assert result.grounding.sentences[0].evidence[0].text == "The frame warranty lasts ten years."


def test_the_sentence_cap_checks_the_first_sentences_and_counts_the_rest() -> None:
    answer = " ".join(f'Fact number {n} <citation ids="b#0"/>.' for n in range(5))
    scorer = Recording()

    result = GroundingService(scorer, GroundingLimits(max_sentences=3)).assess(answer, CHUNKS, RunUsage())

    assert [c.text for c in scorer.asked] == ["Fact number 0.", "Fact number 1.", "Fact number 2."]
    assert result.grounding.unchecked == 2 and len(result.grounding.sentences) == 3


def test_the_passage_cap_shows_only_the_first_cited_chunks() -> None:
    found = cited_claims('All of it <citation ids="a#0,b#0,c#0"/>.', CHUNKS, GroundingLimits(max_passages=2))

    assert [p.chunk_id for p in found.claims[0].passages] == ["a#0", "b#0"]
    assert found.claims[0].citations == ("a#0", "b#0", "c#0")


def test_the_character_cap_keeps_whole_sentences_and_cuts_only_a_first_long_one() -> None:
    limits = GroundingLimits(max_passage_chars=50)
    chunks = {**CHUNKS, "long#0": "x" * 80 + ". Short."}

    found = cited_claims('Warranty <citation ids="a#0"/>. Long one <citation ids="long#0"/>.', chunks, limits)

    warranty, long = (c.passages[0] for c in found.claims)
    assert warranty.sentences == ("The frame warranty lasts ten years.",)  # the next would pass 50
    assert long.sentences == ("x" * 50,)
    assert all(len(p.text) <= 50 for c in found.claims for p in c.passages)


def test_a_cited_sentence_over_the_cap_is_checked_cut_to_it() -> None:
    limits = GroundingLimits(max_sentence_chars=40)
    found = cited_claims(
        "The frame warranty " + "and more " * 5000 + '<citation ids="a#0"/>.', CHUNKS, limits
    )
    [claim] = found.claims
    assert claim.text == ("The frame warranty " + "and more " * 5000)[:40]


def test_an_id_not_among_the_chunks_gives_no_passage_and_a_sentence_citing_only_it_is_uncited() -> None:
    found = cited_claims(
        'Made up <citation ids="zz#9"/>. Real <citation ids="b#0,zz#9"/>.', CHUNKS, GroundingLimits()
    )

    assert [c.text for c in found.claims] == ["Real."] and found.uncited == 1
    assert [p.chunk_id for p in found.claims[0].passages] == ["b#0"]


def test_a_contradicted_sentence_raises_the_contradicted_citation_warning() -> None:
    result = GroundingService(Recording("contradicted")).assess(
        'No refunds <citation ids="b#0"/>.', CHUNKS, RunUsage()
    )

    assert [w.code for w in result.warnings] == ["contradicted_citation"]
    assert result.warnings[0].details == {"sentences": [0], "citations": ["b#0"]}
    assert result.grounding.score == 0.1


def test_the_answer_score_is_the_mean_support_and_the_scorers_spend_joins_the_run() -> None:
    usage = RunUsage(retrievals=1)
    scorer = Recording(usage=RunUsage(llm_input_tokens=300, llm_output_tokens=20))

    result = GroundingService(scorer).assess(
        'A <citation ids="a#0"/>. B <citation ids="b#0"/>.', CHUNKS, usage
    )

    assert result.grounding.score == 0.9 and result.warnings == []
    assert (usage.retrievals, usage.llm_input_tokens, usage.llm_output_tokens) == (1, 300, 20)


@pytest.mark.parametrize(
    "exc",
    [
        errors.GroundingFailed("bad verdicts", usage=RunUsage(llm_input_tokens=50)),
        errors.Throttled("slow down"),
        RuntimeError("a bug"),
    ],
    ids=["grounding_failed", "throttled", "bug"],
)
def test_a_failing_scorer_degrades_to_unavailable_with_a_warning(exc: Exception) -> None:
    usage = RunUsage()

    result = GroundingService(Failing(exc)).assess('A <citation ids="a#0"/>.', CHUNKS, usage)

    assert result.grounding.status == "unavailable" and result.grounding.score is None
    assert [w.code for w in result.warnings] == ["grounding_unavailable"]
    assert usage.llm_input_tokens == (50 if isinstance(exc, errors.GroundingFailed) else 0)
    assert "a bug" not in result.warnings[0].message  # a bug's text is not shown


def test_a_scorer_that_answers_the_wrong_number_of_verdicts_is_unavailable() -> None:
    class Short(Recording):
        def check(self, claims: Sequence[CitedClaim]) -> Checked:
            return Checked(verdicts=super().check(claims).verdicts[:-1])

    result = GroundingService(Short()).assess(
        'A <citation ids="a#0"/>. B <citation ids="b#0"/>.', CHUNKS, RunUsage()
    )

    assert result.grounding.status == "unavailable"


def test_no_cited_sentence_or_no_scorer_asks_nothing() -> None:
    scorer = Recording()

    nothing = GroundingService(scorer).assess("No sources at all.", CHUNKS, RunUsage())
    off = GroundingService(None).assess('A <citation ids="a#0"/>.', CHUNKS, RunUsage())

    assert nothing.grounding.status == "no_citations" and nothing.grounding.uncited == 1 and not scorer.asked
    assert off.grounding.status == "off" and off.grounding.scorer == "none"


def test_a_recorded_final_too_large_for_a_replay_drops_its_grounding_with_its_answer() -> None:
    from datetime import UTC, datetime

    from ragline.agents.events import Grounding, GroundingEvidence, RunFinished, SentenceGrounding
    from ragline.domain.api import Usage
    from ragline.domain.billing import MAX_RESULT_BYTES
    from ragline.domain.retrieval import EvidenceTable
    from ragline.services.chat_replays import recorded

    quote = "x" * 2000
    sentence = SentenceGrounding(
        text=quote, citations=["a#0"], label="supported", score=1.0,
        evidence=[GroundingEvidence(chunk_id="a#0", sentence=0, text=quote)] * 2,
    )  # fmt: skip
    grounding = Grounding(status="scored", scorer="overlap", score=1.0, sentences=[sentence] * 12)
    final = RunFinished(
        run_id="r", exit_reason="answered", answer="short", usage=Usage(), grounding=grounding
    )

    text = recorded(final, EvidenceTable(), datetime.now(UTC))

    assert len(text.encode()) <= MAX_RESULT_BYTES and quote not in text
