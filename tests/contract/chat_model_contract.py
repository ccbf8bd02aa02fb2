"""The ChatModel contract: every backend subclasses :class:`ChatModelContract`.

The conversations are fixed here; each backend provides, per fixture, a model that plays that kind of
turn for that conversation (a scripted endpoint is scripted, an offline model just runs). The
assertions are the port's event grammar, ``TextDelta* ToolCallsReady? TokenUsage TurnEnd``:

- ``answering_model``: :data:`QUESTION` with no tools offered → a text answer.
- ``tool_calling_model``: :data:`QUESTION` with :data:`TOOLS` offered, no evidence yet → a tool call.
- ``evidence_answering_model``: :data:`WITH_EVIDENCE` (search already answered) → a text answer.

A backend that can fail subclasses :class:`FailingChatModelContract` too, whose ``failing_model``
plays a turn that fails: the failure surfaces as a :class:`~ragline.errors.RaglineError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pytest

from ragline.agents.tools import ExpandArgs, SearchArgs, expand_spec, search_spec
from ragline.domain.chat import (
    ChatMessage,
    ChatOptions,
    ModelEvent,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallsReady,
    ToolSpec,
    TurnEnd,
)
from ragline.errors import RaglineError
from ragline.ports import ChatModel

TOOLS = [search_spec(), expand_spec()]
"""The agent's real tools, so a backend's calls are checked against the schemas the loop offers."""
ARGUMENTS = {"search": SearchArgs, "expand": ExpandArgs}

QUESTION = [
    ChatMessage(role="system", content="Answer from the documents only, and cite them."),
    ChatMessage(role="user", content="How do honey bees make honey?"),
]

SEARCH_CALL = ToolCall(id="call_search", name="search", arguments=json.dumps({"query": "honey bees honey"}))
EVIDENCE = [
    {
        "id": "bees#0",
        "documentId": "bees",
        "sequenceNumber": 0,
        "filename": "bees.txt",
        "text": "Honey bees turn nectar into honey by fanning their wings to evaporate its water.",
    },
    {
        "id": "solar#0",
        "documentId": "solar",
        "sequenceNumber": 0,
        "filename": "solar.txt",
        "text": "Solar panels convert sunlight into electricity.",
    },
]
"""A search result as :func:`ragline.agents.tools.compact` shapes it."""

WITH_EVIDENCE = [
    *QUESTION,
    ChatMessage(role="assistant", tool_calls=(SEARCH_CALL,)),
    ChatMessage(role="tool", content=json.dumps(EVIDENCE), tool_call_id=SEARCH_CALL.id),
]

OPTIONS = ChatOptions(max_output_tokens=200)

_GRAMMAR = re.compile(r"T*C?UE")
_LETTER = {TextDelta: "T", ToolCallsReady: "C", TokenUsage: "U", TurnEnd: "E"}


@dataclass(frozen=True)
class Turn:
    """One turn's events, checked against the grammar and taken apart."""

    text: str
    calls: tuple[ToolCall, ...]
    usage: TokenUsage
    end: TurnEnd


def play(model: ChatModel, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec] = ()) -> Turn:
    """Stream one turn; assert the port's grammar; return its parts."""
    events = list(model.stream(messages, tools, OPTIONS))
    letters = "".join(_LETTER.get(type(e), "?") for e in events)
    assert _GRAMMAR.fullmatch(letters), f"events out of grammar: {letters} ({events})"
    calls = next((e.calls for e in events if isinstance(e, ToolCallsReady)), ())
    usage, end = events[-2], events[-1]
    assert isinstance(usage, TokenUsage) and isinstance(end, TurnEnd)
    assert usage.input_tokens >= 0 and usage.output_tokens >= 0
    assert isinstance(end.finish_reason, str) and end.finish_reason
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    return Turn(text=text, calls=calls, usage=usage, end=end)


def events_until_failure(
    model: ChatModel, messages: Sequence[ChatMessage] = QUESTION
) -> tuple[list[ModelEvent], RaglineError]:
    """Stream a turn that must fail; the events yielded before the error, and the error."""
    seen: list[ModelEvent] = []
    stream: Iterator[ModelEvent] = model.stream(messages, TOOLS, OPTIONS)
    with pytest.raises(RaglineError) as failure:
        for event in stream:
            seen.append(event)
    return seen, failure.value


class ChatModelContract:
    """Subclasses provide the three model fixtures (see the module docstring)."""

    @pytest.fixture
    def answering_model(self) -> ChatModel:
        raise NotImplementedError

    @pytest.fixture
    def tool_calling_model(self) -> ChatModel:
        raise NotImplementedError

    @pytest.fixture
    def evidence_answering_model(self) -> ChatModel:
        raise NotImplementedError

    def test_has_a_name(self, answering_model: ChatModel) -> None:
        assert isinstance(answering_model.name, str) and answering_model.name.strip()

    def test_given_no_tools_when_asked_then_text_then_usage_then_end(
        self, answering_model: ChatModel
    ) -> None:
        # Given a question and no tools / When the model takes its turn
        turn = play(answering_model, QUESTION)
        # Then it answers in text and asks for nothing
        assert turn.calls == ()
        assert turn.text.strip()

    def test_given_tools_and_no_evidence_when_asked_then_complete_tool_calls(
        self, tool_calling_model: ChatModel
    ) -> None:
        # Given a question, the tools, no evidence yet / When the model takes its turn
        turn = play(tool_calling_model, QUESTION, TOOLS)
        # Then it ends in calls of offered tools, each with a unique id and whole, valid arguments
        assert turn.calls, "a turn with tools and no evidence must ask for a tool call"
        assert len({c.id for c in turn.calls}) == len(turn.calls) and all(c.id for c in turn.calls)
        for call in turn.calls:
            assert call.name in ARGUMENTS
            assert isinstance(json.loads(call.arguments), dict)
            ARGUMENTS[call.name].model_validate_json(call.arguments)  # what the tool loop will parse

    def test_given_evidence_when_asked_then_it_answers_in_text(
        self, evidence_answering_model: ChatModel
    ) -> None:
        # Given the search already answered / When the model takes its next turn
        turn = play(evidence_answering_model, WITH_EVIDENCE, TOOLS)
        # Then it answers in text (the tools stay offered, but none is needed)
        assert turn.calls == ()
        assert turn.text.strip()


class FailingChatModelContract:
    """For backends that can fail: ``failing_model`` plays a turn that fails (one per fixture param)."""

    @pytest.fixture
    def failing_model(self) -> ChatModel:
        raise NotImplementedError

    def test_a_failed_turn_raises_a_ragline_error_and_never_ends(self, failing_model: ChatModel) -> None:
        # When the turn fails
        seen, error = events_until_failure(failing_model)
        # Then the failure is a Ragline error with a stable code, after text deltas at most
        assert error.code != RaglineError.code
        assert all(isinstance(e, TextDelta) for e in seen), f"a failed turn claimed more: {seen}"
