"""The ChatModel contract, run against the offline extractive model and an OpenAI-compatible endpoint
(the local replay server: real SDK, real HTTP and SSE, tool-call arguments split across chunks)."""

from __future__ import annotations

import json

import pytest

from ragline.adapters.local_models.extractive_chat import ExtractiveChatModel
from ragline.adapters.openai.chat import OpenAIChatModel
from ragline.agents.tools import ExpandArgs
from ragline.domain.chat import ChatMessage, ToolCall
from tests.contract.chat_model_contract import (
    EVIDENCE,
    QUESTION,
    TOOLS,
    ChatModelContract,
    FailingChatModelContract,
    play,
)
from tests.support.openai_replay import (
    OpenAIReplay,
    Turn,
    error,
    hang_up,
    split_arguments,
    stream_error,
    text,
    tool_call,
)

pytestmark = pytest.mark.contract


# -- the offline extractive model: it needs no script, the conversation decides its turn ----------
class TestExtractiveChatModel(ChatModelContract):
    @pytest.fixture
    def answering_model(self) -> ExtractiveChatModel:
        return ExtractiveChatModel()  # no tools: it answers from no evidence ("could not find")

    @pytest.fixture
    def tool_calling_model(self) -> ExtractiveChatModel:
        return ExtractiveChatModel()  # search offered and not called yet: it searches

    @pytest.fixture
    def evidence_answering_model(self) -> ExtractiveChatModel:
        return ExtractiveChatModel()  # search answered with whole sentences: it quotes them


def test_extractive_expands_a_chunk_cut_mid_sentence_with_valid_arguments() -> None:
    """Given evidence whose best chunk stops mid-sentence, its ``expand`` call is one the tool accepts."""
    cut = [{**EVIDENCE[0], "sequenceNumber": 3, "text": "Honey bees turn nectar into honey by fanning"}]
    search = ToolCall(id="call_search", name="search", arguments='{"query": "honey"}')
    messages = [
        *QUESTION,
        ChatMessage(role="assistant", tool_calls=(search,)),
        ChatMessage(role="tool", content=json.dumps(cut), tool_call_id=search.id),
    ]

    turn = play(ExtractiveChatModel(), messages, TOOLS)

    assert [c.name for c in turn.calls] == ["expand"]
    assert ExpandArgs.model_validate_json(turn.calls[0].arguments) == ExpandArgs(
        documentId="bees", sequenceNumber=3
    )


# -- an OpenAI-compatible endpoint: each fixture scripts the replay server for its kind of turn ----
SEARCH_ARGUMENTS = {"query": "how honey bees make honey", "mode": "semantic", "label": "Searching: bees"}

FAILURES: dict[str, Turn] = {
    "server_error_after_retries": error(500, times=None),
    "rate_limited_after_retries": error(429, times=None),
    "refused_request": error(401),
    "error_event_mid_stream": stream_error("Honey bees", " make"),
    "connection_dropped_mid_stream": hang_up("Honey bees"),
    "body_ended_before_finish": hang_up("Honey bees", clean=True),
}


def replay_model(replay: OpenAIReplay, *turns: Turn) -> OpenAIChatModel:
    replay.script(turns)
    return OpenAIChatModel(model="gpt-test", client=replay.client(max_retries=1))


class TestOpenAIChatModel(ChatModelContract, FailingChatModelContract):
    @pytest.fixture
    def answering_model(self, openai_replay: OpenAIReplay) -> OpenAIChatModel:
        return replay_model(openai_replay, text("Bees ", "turn nectar ", "into honey."))

    @pytest.fixture
    def tool_calling_model(self, openai_replay: OpenAIReplay) -> OpenAIChatModel:
        call = tool_call("search", SEARCH_ARGUMENTS, call_id="call_1", text_before=["Let me search."])
        return replay_model(openai_replay, call)

    @pytest.fixture
    def evidence_answering_model(self, openai_replay: OpenAIReplay) -> OpenAIChatModel:
        return replay_model(openai_replay, text("Bees fan nectar ", 'into honey <citation ids="bees#0"/>.'))

    @pytest.fixture(params=sorted(FAILURES))
    def failing_model(self, openai_replay: OpenAIReplay, request: pytest.FixtureRequest) -> OpenAIChatModel:
        return replay_model(openai_replay, FAILURES[request.param])


def test_replay_splits_the_contract_tool_call_across_chunks() -> None:
    """The contract's tool-call turn really exercises assembly: its arguments arrive in pieces."""
    assert len(split_arguments(json.dumps(SEARCH_ARGUMENTS))) >= 2


def test_replay_contract_turns_send_the_offered_tools(openai_replay: OpenAIReplay) -> None:
    model = replay_model(openai_replay, tool_call("search", SEARCH_ARGUMENTS), text("Done."))

    play(model, QUESTION, TOOLS)
    play(model, QUESTION)

    first, second = openai_replay.chat_requests
    assert [t["function"]["name"] for t in first["tools"]] == ["search", "expand"]
    assert "tools" not in second
    assert openai_replay.remaining == []
