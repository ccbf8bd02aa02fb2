"""The ChatModel contract on Amazon Bedrock: the Converse adapter against the local Bedrock server
(real boto3, SigV4, HTTP and ``application/vnd.amazon.eventstream`` frames parsed by botocore),
plus each Bedrock failure's one outcome and the request the adapter sends."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.bedrock.chat import BedrockChatModel
from ragline.agents.fitting import ContextFitting
from ragline.agents.tools import SearchArgs
from ragline.domain.chat import ChatMessage, ChatOptions, TextDelta, ToolCall
from ragline.domain.pruning import ELIDED
from tests.contract.chat_model_contract import (
    QUESTION,
    TOOLS,
    WITH_EVIDENCE,
    ChatModelContract,
    FailingChatModelContract,
    events_until_failure,
    play,
)
from tests.support.bedrock_converse import ConverseTurn, cut, fail, say, stream_exception, use_tool
from tests.support.bedrock_server import BedrockServer

pytestmark = pytest.mark.contract

NOVA = "amazon.nova-pro-v1:0"
SEARCH = {"query": "how honey bees make honey", "mode": "semantic", "label": "Searching: bees"}
TOO_LONG = "Input is too long for requested model."


def bedrock_model(
    server: BedrockServer, *turns: ConverseTurn, model: str = NOVA, retries: int = 0, **kwargs: Any
) -> BedrockChatModel:
    server.script_converse(turns)
    client = server.client("bedrock-runtime", max_attempts=retries)
    return BedrockChatModel(model=model, client=client, region="us-east-1", sleep=lambda _: None, **kwargs)


FAILURES: dict[str, tuple[ConverseTurn, ...]] = {
    "throttled_after_retries": (fail("ThrottlingException", times=None),),
    "access_not_enabled": (fail("AccessDeniedException"),),
    "unknown_model": (fail("ResourceNotFoundException"),),
    "service_down": (fail("ServiceUnavailableException", times=None),),
    "exception_event_mid_stream": (stream_exception("modelStreamErrorException", "Honey bees"),),
    "throttling_event_every_try": tuple(stream_exception("throttlingException") for _ in range(3)),
    "connection_dropped_mid_stream": (cut("Honey bees", " make"),),
    "body_ended_before_message_stop": (cut("Honey bees", clean=True),),
}


class TestBedrockChatModel(ChatModelContract, FailingChatModelContract):
    @pytest.fixture
    def answering_model(self, bedrock_server: BedrockServer) -> BedrockChatModel:
        return bedrock_model(bedrock_server, say("Bees ", "turn nectar ", "into honey."))

    @pytest.fixture
    def tool_calling_model(self, bedrock_server: BedrockServer) -> BedrockChatModel:
        turn = use_tool("search", SEARCH, tool_use_id="tooluse_a", text_before=("Let me search.",))
        return bedrock_model(bedrock_server, turn)

    @pytest.fixture
    def evidence_answering_model(self, bedrock_server: BedrockServer) -> BedrockChatModel:
        return bedrock_model(bedrock_server, say("Bees fan nectar ", 'into honey <citation ids="bees#0"/>.'))

    @pytest.fixture(params=sorted(FAILURES))
    def failing_model(
        self, bedrock_server: BedrockServer, request: pytest.FixtureRequest
    ) -> BedrockChatModel:
        return bedrock_model(bedrock_server, *FAILURES[request.param])


def test_tool_calls_are_assembled_from_input_fragments_and_finish_as_tool_calls(
    bedrock_server: BedrockServer,
) -> None:
    second = {"documentId": "bees", "sequenceNumber": 0}
    model = bedrock_model(bedrock_server, use_tool("search", SEARCH, more=(("expand", second, "tooluse_b"),)))

    turn = play(model, QUESTION, TOOLS)

    assert [(c.id, c.name, json.loads(c.arguments)) for c in turn.calls] == [
        ("tooluse_1", "search", SEARCH),
        ("tooluse_b", "expand", second),
    ]
    SearchArgs.model_validate_json(turn.calls[0].arguments)
    assert turn.end.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    ("stop", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("guardrail_intervened", "content_filter"),
        ("content_filtered", "content_filter"),
    ],
)
def test_stop_reasons_become_the_loops_finish_reasons(
    bedrock_server: BedrockServer, stop: str, finish: str
) -> None:
    model = bedrock_model(bedrock_server, say("Bees.", stop=stop))
    assert play(model, QUESTION).end.finish_reason == finish


def test_usage_comes_from_the_metadata_event_with_cache_reads_and_writes_counted_as_input(
    bedrock_server: BedrockServer,
) -> None:
    turn = say("Bees.", input_tokens=40, output_tokens=7, cache_read=1000, cache_write=24)
    usage = play(bedrock_model(bedrock_server, turn), QUESTION).usage
    assert (usage.input_tokens, usage.output_tokens, usage.cached_input_tokens) == (1064, 7, 1000)
    assert usage.reported


def test_a_stream_without_metadata_reports_no_usage_so_the_loop_estimates(
    bedrock_server: BedrockServer,
) -> None:
    usage = play(bedrock_model(bedrock_server, say("Bees.", usage=False)), QUESTION).usage
    assert not usage.reported and usage.input_tokens == 0


def test_the_request_is_converse_shaped_with_tools_and_the_whole_conversation(
    bedrock_server: BedrockServer,
) -> None:
    model = bedrock_model(bedrock_server, say("Bees fan nectar."))

    play(model, WITH_EVIDENCE, TOOLS)

    (sent,) = bedrock_server.converse_requests
    assert sent["modelId"] == NOVA and sent["stream"] is True
    assert sent["system"][0] == {"text": QUESTION[0].content}
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "user"]
    use = sent["messages"][1]["content"][0]["toolUse"]
    result = sent["messages"][2]["content"][0]["toolResult"]
    assert use["toolUseId"] == result["toolUseId"] == "call_search"
    assert use["input"] == {"query": "honey bees honey"}
    assert [t["toolSpec"]["name"] for t in sent["toolConfig"]["tools"] if "toolSpec" in t] == [
        "search",
        "expand",
    ]
    assert sent["inferenceConfig"]["maxTokens"] == 200


def test_tool_traffic_without_tools_offered_is_sent_as_text(bedrock_server: BedrockServer) -> None:
    # Given a history with a search call and its result, and no tools offered (the routers, hosting
    # search and the planned agents' answer step ask this way)
    model = bedrock_model(bedrock_server, say("Bees fan nectar."))

    # When the turn is asked (Bedrock refuses toolUse/toolResult blocks without a toolConfig)
    turn = play(model, WITH_EVIDENCE)

    # Then it answers, and the call and its evidence reached the model as text in alternating turns
    assert turn.text == "Bees fan nectar."
    (sent,) = bedrock_server.converse_requests
    assert "toolConfig" not in sent
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "user"]
    blocks = [b for m in sent["messages"] for b in m["content"]]
    assert all(set(b) == {"text"} for b in blocks)
    assert blocks[1]["text"] == '[called search with {"query": "honey bees honey"}]'
    assert blocks[2]["text"].startswith("[tool result]\n") and "bees#0" in blocks[2]["text"]


@pytest.mark.parametrize(
    ("model", "system_cached", "tools_cached"),
    [
        ("amazon.nova-pro-v1:0", True, False),
        ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", True, True),
        ("meta.llama3-1-70b-instruct-v1:0", False, False),
    ],
)
def test_a_cache_point_follows_the_static_prefix_where_the_model_supports_it(
    bedrock_server: BedrockServer, model: str, system_cached: bool, tools_cached: bool
) -> None:
    bedrock_model(bedrock_server, say("Bees."), model=model).stream(QUESTION, TOOLS, ChatOptions()).__next__()

    (sent,) = bedrock_server.converse_requests
    assert ({"cachePoint": {"type": "default"}} in sent["system"]) is system_cached
    assert ({"cachePoint": {"type": "default"}} in sent["toolConfig"]["tools"]) is tools_cached


def test_a_model_without_streamed_tool_use_is_asked_through_converse(bedrock_server: BedrockServer) -> None:
    llama = "us.meta.llama3-1-70b-instruct-v1:0"
    model = bedrock_model(
        bedrock_server, use_tool("search", SEARCH, text_before=("Searching.",)), model=llama
    )

    turn = play(model, QUESTION, TOOLS)

    assert bedrock_server.converse_requests[0]["stream"] is False
    assert turn.text == "Searching." and [c.name for c in turn.calls] == ["search"]


def test_a_torn_converse_answer_is_unavailable_not_an_empty_turn(bedrock_server: BedrockServer) -> None:
    model = bedrock_model(bedrock_server, cut("Searching."), model="meta.llama3-1-70b-instruct-v1:0")
    _, error = events_until_failure(model)
    assert isinstance(error, errors.DependencyUnavailable)


def test_throttling_is_retried_with_backoff_then_model_throttled(bedrock_server: BedrockServer) -> None:
    model = bedrock_model(bedrock_server, fail("ThrottlingException", times=None), retries=2)

    _, error = events_until_failure(model)

    assert isinstance(error, errors.ModelThrottled) and error.code == "model_throttled"
    assert isinstance(error, errors.RETRYABLE)
    assert len(bedrock_server.converse_requests) == 3  # the first try and two retries, then no more


def test_a_throttled_try_that_then_succeeds_answers(bedrock_server: BedrockServer) -> None:
    model = bedrock_model(bedrock_server, fail("ThrottlingException", times=2), say("Bees."), retries=2)
    assert play(model, QUESTION).text == "Bees."


def test_an_exception_event_before_any_text_is_tried_again(bedrock_server: BedrockServer) -> None:
    model = bedrock_model(bedrock_server, stream_exception("throttlingException"), say("Bees."))
    assert play(model, QUESTION).text == "Bees."


def test_an_exception_event_after_text_is_never_tried_again(bedrock_server: BedrockServer) -> None:
    model = bedrock_model(bedrock_server, stream_exception("throttlingException", "Bees"), say("Bees."))

    seen, error = events_until_failure(model)

    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["Bees"]  # nothing said twice
    assert isinstance(error, errors.ModelThrottled)
    assert len(bedrock_server.converse_requests) == 1


def test_access_not_enabled_names_the_model_and_how_to_enable_it(bedrock_server: BedrockServer) -> None:
    _, error = events_until_failure(bedrock_model(bedrock_server, fail("AccessDeniedException")))

    assert isinstance(error, errors.ModelAccessDenied) and error.code == "model_access_denied"
    assert NOVA in error.message and "Model access" in error.message and "us-east-1" in error.message
    assert "bedrock:InvokeModelWithResponseStream" in error.message


def test_a_conversation_too_long_is_pruned_and_asked_once_more(bedrock_server: BedrockServer) -> None:
    """Given a history whose tool results overflow the window, the turn is asked again with the
    earlier results elided (calls still paired with their results), and answers."""
    model = ContextFitting(
        bedrock_model(bedrock_server, fail("ValidationException", message=TOO_LONG), say("Bees."))
    )
    second = ToolCall(id="call_2", name="search", arguments='{"query": "nectar"}')
    history = [
        *WITH_EVIDENCE,
        ChatMessage(role="assistant", tool_calls=(second,)),
        ChatMessage(role="tool", content="nectar " * 400, tool_call_id="call_2"),
    ]

    turn = play(model, history, TOOLS)

    assert turn.text == "Bees."
    first, retried = bedrock_server.converse_requests
    results = [b["toolResult"] for m in retried["messages"] for b in m["content"] if "toolResult" in b]
    texts = [r["content"][0]["text"] for r in results]
    assert texts == [ELIDED, ("nectar " * 400)[: len("nectar " * 400) // 2]]
    assert len(json.dumps(retried)) < len(json.dumps(first))


def test_a_conversation_still_too_long_after_pruning_is_a_clear_error(bedrock_server: BedrockServer) -> None:
    model = ContextFitting(
        bedrock_model(bedrock_server, *[fail("ValidationException", message=TOO_LONG)] * 3)
    )

    _, error = events_until_failure(model, WITH_EVIDENCE)

    assert isinstance(error, errors.ContextTooLong) and error.code == "context_too_long"
    assert NOVA in error.message and "even with" in error.message
    assert len(bedrock_server.converse_requests) == 2  # pruned and asked once more, never a third time


def test_a_conversation_with_nothing_to_prune_is_not_asked_again(bedrock_server: BedrockServer) -> None:
    model = ContextFitting(
        bedrock_model(bedrock_server, *[fail("ValidationException", message=TOO_LONG)] * 2)
    )

    _, error = events_until_failure(model)

    assert isinstance(error, errors.ContextTooLong) and NOVA in error.message
    assert len(bedrock_server.converse_requests) == 1


def test_a_validation_error_that_is_not_about_length_is_not_retried(bedrock_server: BedrockServer) -> None:
    model = ContextFitting(
        bedrock_model(bedrock_server, fail("ValidationException", message="bad tool schema"))
    )

    _, error = events_until_failure(model)

    assert type(error) is errors.DependencyFailed
    assert len(bedrock_server.converse_requests) == 1
