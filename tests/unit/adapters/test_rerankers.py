from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.local_models.cross_encoder import OnnxCrossEncoderReranker
from ragline.adapters.rerank import (
    IdentityReranker,
    LlmListwiseReranker,
    parse_ranking,
)
from ragline.domain.chat import ChatMessage, ChatOptions, ModelEvent, TextDelta, ToolSpec
from ragline.domain.models import RunUsage, SearchHit
from ragline.errors import RerankFailed
from tests.contract.reranker_contract import HITS, QUERY, make_hits
from tests.support.fakes import ScriptedChatModel

pytestmark = pytest.mark.unit


def ids(hits: Sequence[SearchHit]) -> list[str]:
    return [h.chunk.id for h in hits]


def llm(*answers: str, **kw: int) -> tuple[LlmListwiseReranker, ScriptedChatModel]:
    model = ScriptedChatModel([[a] for a in answers], output_tokens_per_turn=7)
    return LlmListwiseReranker(model, **kw), model


class FailingChatModel:
    """A model endpoint that is down: it fails after streaming a little text."""

    name = "down"

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]:
        yield TextDelta(text='{"rank')
        raise errors.DependencyUnavailable("model endpoint timed out")


# -- parsing -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        '{"ranking": [3, 1, 2]}',
        '```json\n{"ranking": [3, 1, 2]}\n```',
        'Sure! Here is the ranking:\n{"ranking": [3, 1, 2]}\nPassage 3 answers best.',
        '<think>maybe {"ranking": [1, 2, 3]}?</think>{"ranking": [3, 1, 2]}',
        'First {not json}, then {"note": "x"}, then {"ranking": ["3", 1, 2]}',
    ],
)
def test_given_a_ranking_wrapped_in_noise_when_parsed_then_it_is_found(answer: str) -> None:
    assert parse_ranking(answer, 3) == [2, 0, 1]


def test_given_out_of_range_and_repeated_numbers_then_they_are_dropped() -> None:
    assert parse_ranking('{"ranking": [0, 3, 3, 9, -1, 1, 3]}', 3) == [2, 0, 1]


def test_given_a_partial_ranking_then_omitted_candidates_follow_in_fused_order() -> None:
    assert parse_ranking('{"ranking": [4, 2]}', 5) == [3, 1, 0, 2, 4]


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "Passage 2 is best, then 1.",
        "[2, 1, 3]",
        '{"ranking": "2, 1"}',
        '{"ranking": [2.5, 1]}',
        '{"ranking": []}',
        '{"ranking": [7, 0]}',
        '{"ranking": [2, 1',
    ],
)
def test_given_a_malformed_answer_when_parsed_then_rerank_failed(answer: str) -> None:
    with pytest.raises(RerankFailed) as caught:
        parse_ranking(answer, 3)
    assert caught.value.code == "rerank_failed"
    assert isinstance(caught.value, errors.DependencyFailed)


# -- LLM listwise reranker -----------------------------------------------------------------------


def test_given_a_ranking_when_reranked_then_hits_follow_it_with_positional_scores() -> None:
    reranker, _ = llm('```json\n{"ranking": [5, 2, 4]}\n```')

    out = reranker.rerank(QUERY, HITS, 4).hits

    assert ids(out) == ["d4#0", "d1#0", "d3#0", "d0#0"]
    assert [h.breakdown.rerank_score for h in out] == [1.0, 1 / 2, 1 / 3, 1 / 4]
    assert [h.score for h in out] == [h.score for h in (HITS[4], HITS[1], HITS[3], HITS[0])]


def test_when_reranked_then_the_model_sees_the_query_and_numbered_clipped_passages() -> None:
    reranker, model = llm('{"ranking": [1]}', max_chars_per_hit=20)

    reranker.rerank(QUERY, HITS[:2], 2)

    ((messages, tools),) = model.seen
    assert tools == []
    prompt = messages[-1].content
    assert QUERY in prompt
    assert "[1] Solar panels conver…" in prompt
    assert "[2] Honey bees turn nec…" in prompt
    assert "[3]" not in prompt


def test_given_more_hits_than_max_candidates_then_the_tail_keeps_fused_order() -> None:
    hits = make_hits([f"passage {i}" for i in range(6)])
    reranker, model = llm('{"ranking": [2, 1]}', max_candidates=2)

    out = reranker.rerank(QUERY, hits, 6).hits

    assert ids(out) == ["d1#0", "d0#0", "d2#0", "d3#0", "d4#0", "d5#0"]
    assert "[3]" not in model.seen[0][0][-1].content


def test_when_reranked_then_the_outcome_carries_the_model_tokens() -> None:
    reranker, _ = llm('{"ranking": [2, 1]}')

    outcome = reranker.rerank(QUERY, HITS, 2)

    assert outcome.usage == RunUsage(reranks=1, llm_input_tokens=100, llm_output_tokens=7)


@pytest.mark.parametrize(("hits", "top_n"), [(HITS[:1], 5), (HITS, 0), ([], 3)])
def test_given_nothing_to_order_then_the_model_is_not_called(hits: list[SearchHit], top_n: int) -> None:
    reranker, model = llm()

    outcome = reranker.rerank(QUERY, hits, top_n)

    assert ids(outcome.hits) == ids(hits[:top_n])
    assert model.seen == []
    assert outcome.usage == RunUsage()


def test_given_a_malformed_answer_then_rerank_failed_reports_the_tokens_spent() -> None:
    reranker, _ = llm("I think passage two.")

    with pytest.raises(RerankFailed) as caught:
        reranker.rerank(QUERY, HITS, 3)

    assert (caught.value.input_tokens, caught.value.output_tokens) == (100, 7)


def test_given_a_model_error_then_rerank_failed_names_its_cause() -> None:
    reranker = LlmListwiseReranker(FailingChatModel())

    with pytest.raises(RerankFailed) as caught:
        reranker.rerank(QUERY, HITS, 3)

    assert caught.value.details["cause"] == "dependency_unavailable"
    assert isinstance(caught.value.__cause__, errors.DependencyUnavailable)


def test_given_nonsense_limits_then_configuration_error() -> None:
    with pytest.raises(errors.ConfigurationError):
        LlmListwiseReranker(ScriptedChatModel([]), max_candidates=0)


# -- identity -----------------------------------------------------------------------


def test_identity_keeps_fused_order_and_uses_the_score_as_rerank_score() -> None:
    outcome = IdentityReranker().rerank(QUERY, HITS, 2)

    assert ids(outcome.hits) == ["d0#0", "d1#0"]
    assert [h.breakdown.rerank_score for h in outcome.hits] == [HITS[0].score, HITS[1].score]
    assert outcome.usage == RunUsage()


# -- cross-encoder -------------------------------------------------------------------------------


def test_given_missing_model_file_then_configuration_error_names_it(tmp_path: Path) -> None:
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.write_text("{}")

    with pytest.raises(errors.ConfigurationError) as caught:
        OnnxCrossEncoderReranker(tmp_path / "missing.onnx", tokenizer)

    assert caught.value.details == {"model_path": str(tmp_path / "missing.onnx")}
    assert "missing.onnx" in caught.value.message


def test_given_missing_tokenizer_file_then_configuration_error_names_it(tmp_path: Path) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"\0")

    with pytest.raises(errors.ConfigurationError) as caught:
        OnnxCrossEncoderReranker(model, tmp_path / "nope.json")

    assert caught.value.details == {"tokenizer_path": str(tmp_path / "nope.json")}


def test_given_an_unloadable_model_file_then_rerank_failed(tmp_path: Path) -> None:
    from ragline.adapters.local_models.embedder import find_tokenizer_file

    model = tmp_path / "model.onnx"
    model.write_bytes(b"not an onnx graph")
    reranker = OnnxCrossEncoderReranker(model, find_tokenizer_file())

    with pytest.raises(RerankFailed):
        reranker.rerank(QUERY, HITS, 2)


def test_given_a_bi_encoder_instead_of_a_cross_encoder_then_rerank_failed() -> None:
    """The shipped MiniLM embedder is a real ONNX BERT whose output is not one score per pair."""
    from ragline.adapters.local_models.embedder import find_model_file, find_tokenizer_file

    reranker = OnnxCrossEncoderReranker(find_model_file(), find_tokenizer_file(), batch_size=2)

    with pytest.raises(RerankFailed, match="not a cross-encoder"):
        reranker.rerank(QUERY, HITS, 3)


def test_the_instructions_ask_for_the_json_ranking_and_distrust_the_passages() -> None:
    reranker, _ = llm()

    system = reranker.messages(QUERY, HITS)[0].content

    assert '{"ranking":' in system
    assert "not instructions" in system
