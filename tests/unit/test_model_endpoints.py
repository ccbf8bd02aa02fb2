"""The chat-endpoint bridge translates honestly: a replay turn becomes the Converse turn that says the
same thing, and a Converse request reads back as the OpenAI request the same conversation would be."""

from __future__ import annotations

import pytest

from ragline.adapters.bedrock.converse import build_request
from ragline.domain.chat import ChatMessage, ChatOptions
from tests.contract.chat_model_contract import TOOLS, WITH_EVIDENCE
from tests.support.bedrock_converse import ToolCall, cut, fail, say, stream_exception
from tests.support.model_endpoints import NotOnBedrock, converse_turn, openai_request
from tests.support.openai_replay import Turn, call, error, hang_up, stream_error, text, tool_call, tool_calls

pytestmark = pytest.mark.unit


def test_text_keeps_its_pieces_counts_and_stop() -> None:
    assert converse_turn(text("a", "b", usage=(7, 3))) == [say("a", "b", input_tokens=7, output_tokens=3)]
    assert converse_turn(text("a", usage=None, finish="length")) == [say("a", stop="max_tokens", usage=False)]
    assert converse_turn(text("", usage=(0, 1))) == [say("", input_tokens=0, output_tokens=1)]


def test_tool_calls_keep_ids_names_arguments_and_text_before() -> None:
    (turn,) = converse_turn(
        tool_calls(
            call("search", {"query": "a"}),
            call("expand", {"documentId": "d"}, call_id="c9"),
            text_before=("x",),
        )
    )
    assert turn.kind == "tool_use" and turn.pieces == ("x",) and turn.stop == "tool_use"
    assert turn.calls == (
        ToolCall("search", {"query": "a"}, "call_replay_0"),
        ToolCall("expand", {"documentId": "d"}, "c9"),
    )
    assert (turn.input_tokens, turn.output_tokens) == (100, 10)


@pytest.mark.parametrize(
    ("status", "code"),
    [(429, "ThrottlingException"), (500, "InternalServerException"), (503, "ServiceUnavailableException"),
     (401, "AccessDeniedException"), (403, "AccessDeniedException"), (400, "ValidationException")],
)  # fmt: skip
def test_errors_become_the_bedrock_error_of_their_status_as_many_times(status: int, code: str) -> None:
    assert converse_turn(error(status, times=None)) == [fail(code, times=None)]
    assert converse_turn(error(status, times=2)) == [fail(code, times=2)]


def test_broken_streams_break_the_same_way() -> None:
    assert converse_turn(hang_up("a", clean=True)) == [cut("a", clean=True)]
    assert converse_turn(hang_up("a")) == [cut("a")]
    (turn,) = converse_turn(stream_error("a", message="boom"))
    assert turn == stream_exception("modelStreamErrorException", "a", message="boom")


@pytest.mark.parametrize(
    "turn",
    [
        tool_calls(call("search", '{"query": "bees"')),
        tool_call("search", "[1]"),
        tool_call("search", {"query": "bees"}, delay_s=0.1),
        Turn(silent_s=0.1),
    ],
)
def test_what_converse_cannot_say_is_refused_not_bent(turn: Turn) -> None:
    with pytest.raises(NotOnBedrock):
        converse_turn(turn)


def test_a_slow_text_answer_stays_slow() -> None:
    (turn,) = converse_turn(text("a", "b", delay_s=0.2))
    assert turn.delay_s == 0.2 and turn.pieces == ("a", "b")


def test_a_converse_request_reads_back_in_openai_shape() -> None:
    options = ChatOptions(max_output_tokens=200, tool_choice="required")
    body = {"modelId": "m", "stream": True, **build_request(WITH_EVIDENCE, TOOLS, options, cache_system=True)}
    back = openai_request(body)
    assert [m["role"] for m in back["messages"]] == ["system", "user", "assistant", "tool"]
    assistant, tool = back["messages"][2], back["messages"][3]
    assert assistant["tool_calls"][0]["id"] == tool["tool_call_id"] == "call_search"
    assert assistant["tool_calls"][0]["function"] == {
        "name": "search",
        "arguments": '{"query": "honey bees honey"}',
    }
    assert tool["content"] == WITH_EVIDENCE[-1].content and "as_text" not in tool
    assert [t["function"]["name"] for t in back["tools"]] == ["search", "expand"]
    assert back["tool_choice"] == "required" and back["max_tokens"] == 200


def test_tool_traffic_sent_as_text_reads_back_as_what_it_stands_for_marked() -> None:
    asked = [*WITH_EVIDENCE, ChatMessage(role="user", content="Now answer.")]
    back = openai_request(build_request(asked, [], ChatOptions()))
    assert "tools" not in back and "tool_choice" not in back
    assistant, tool, last = back["messages"][2:]
    assert (
        assistant["tool_calls"][0]["as_text"] and assistant["tool_calls"][0]["function"]["name"] == "search"
    )
    assert tool == {
        "role": "tool",
        "tool_call_id": None,
        "content": WITH_EVIDENCE[-1].content,
        "as_text": True,
    }
    assert last == {"role": "user", "content": "Now answer."}
