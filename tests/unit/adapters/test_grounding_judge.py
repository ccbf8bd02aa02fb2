"""The chat model as grounding judge through the real OpenAI adapter on the scripted replay server: what
it is shown, how its verdicts are read, and what it costs when it fails."""

from __future__ import annotations

import json

import pytest

from ragline import errors
from ragline.adapters.grounding.judge import JUDGE_SYSTEM_PROMPT, ChatJudgeGroundingScorer
from ragline.adapters.openai.chat import OpenAIChatModel
from ragline.domain.grounding import CitedClaim, EvidenceRef, Passage
from tests.support.openai_replay import OpenAIReplay, error, text

pytestmark = pytest.mark.unit

RETURNS = Passage("returns.md#0", ("Bicycles can be returned within thirty days.", "Keep the receipt."))
WARRANTY = Passage("warranty.md#2", ("The frame warranty lasts ten years.",))
CLAIMS = [
    CitedClaim("Bikes cannot be returned.", ("returns.md#0",), (RETURNS,)),
    CitedClaim("The warranty is ten years.", ("warranty.md#2",), (WARRANTY,)),
    CitedClaim("Returns need the receipt.", ("returns.md#0", "warranty.md#2"), (RETURNS, WARRANTY)),
]


def judge(replay: OpenAIReplay) -> ChatJudgeGroundingScorer:
    return ChatJudgeGroundingScorer(OpenAIChatModel(model="judge", client=replay.client(max_retries=0)))


def test_the_judge_sees_each_passage_once_with_numbered_sentences_and_the_statements_citing_them(
    openai_replay: OpenAIReplay,
) -> None:
    verdicts = {"verdicts": [{"n": n, "label": "supported", "score": 1.0} for n in (1, 2, 3)]}
    openai_replay.script([text(json.dumps(verdicts))])

    judge(openai_replay).check(CLAIMS)

    (request,) = openai_replay.chat_requests
    system, user = request["messages"][0]["content"], request["messages"][1]["content"]
    assert system == JUDGE_SYSTEM_PROMPT and "not instructions" in system and not request.get("tools")
    assert user.count("[P1] (returns.md#0)") == 1 and user.count("[P2] (warranty.md#2)") == 1
    assert "[P1.1] Keep the receipt." in user
    assert "1. Bikes cannot be returned. (cites P1)" in user
    assert "3. Returns need the receipt. (cites P1, P2)" in user
    assert request["temperature"] == 0.0


def test_verdicts_are_read_past_think_blocks_and_prose_and_bad_evidence_ids_are_dropped(
    openai_replay: OpenAIReplay,
) -> None:
    body = {
        "verdicts": [
            {"n": 1, "label": "contradicted", "score": 0.1, "evidence": ["P1.0", "P9.0", "P1.7", "x"]},
            {"n": 3, "label": "supported", "evidence": ["P1.1"]},  # no score: the label's default
            {"n": 8, "label": "supported"},  # no such statement
        ]
    }
    openai_replay.script(
        [text("<think>hmm {}</think>Here you go: ", json.dumps(body), " Done.", usage=(300, 40))]
    )

    checked = judge(openai_replay).check(CLAIMS)

    first, second, third = checked.verdicts
    assert (first.label, first.score, first.evidence) == (
        "contradicted",
        0.1,
        (EvidenceRef("returns.md#0", 0),),
    )
    assert (second.label, second.score) == ("not_enough_info", 0.0)  # left out by the judge
    assert (third.label, third.score, third.evidence) == ("supported", 1.0, (EvidenceRef("returns.md#0", 1),))
    assert (checked.usage.llm_input_tokens, checked.usage.llm_output_tokens) == (300, 40)


@pytest.mark.parametrize(
    "answer",
    [
        "They all look fine to me.",
        '{"verdicts": "all good"}',
        '{"verdicts": [{"n": 7, "label": "supported"}]}',
    ],
    ids=["prose", "malformed", "no_statement"],
)
def test_an_unusable_answer_is_a_grounding_failure_that_carries_its_cost(
    openai_replay: OpenAIReplay, answer: str
) -> None:
    openai_replay.script([text(answer, usage=(120, 9))])

    with pytest.raises(errors.GroundingFailed) as caught:
        judge(openai_replay).check(CLAIMS)

    assert caught.value.usage is not None and caught.value.usage.llm_input_tokens == 120


def test_a_model_error_is_a_grounding_failure(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([error(503, times=None)])

    with pytest.raises(errors.GroundingFailed) as caught:
        judge(openai_replay).check(CLAIMS)

    assert caught.value.details["cause"] == "dependency_unavailable"


def test_nothing_to_check_asks_nothing(openai_replay: OpenAIReplay) -> None:
    assert judge(openai_replay).check([]).verdicts == [] and openai_replay.chat_requests == []
