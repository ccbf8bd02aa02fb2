"""The OpenAI adapters driven through the real ``openai`` SDK against the local replay server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import openai
import pytest

from ragline import errors
from ragline.adapters.openai.chat import OpenAIChatModel, build_request, openai_client
from ragline.adapters.openai.embedder import OpenAIEmbedder
from ragline.config import Settings
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
from tests.support.openai_replay import (
    OpenAIReplay,
    call,
    embedding_vector,
    error,
    hang_up,
    silent,
    split_arguments,
    stream_error,
    text,
    tool_call,
    tool_calls,
)

pytestmark = pytest.mark.unit

SEARCH = ToolSpec(
    name="search",
    description="Search the namespace.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
QUESTION = [ChatMessage(role="system", content="Cite."), ChatMessage(role="user", content="What is RRF?")]


def model(replay: OpenAIReplay, **settings: object) -> OpenAIChatModel:
    return OpenAIChatModel.from_settings(replay.settings(chat_model="gpt-test", **settings))


def run(chat: OpenAIChatModel, options: ChatOptions | None = None) -> list[ModelEvent]:
    return list(chat.stream(QUESTION, [SEARCH], options or ChatOptions()))


# --- the pure request builder ---------------------------------------------------------------------


def test_build_request_is_the_chat_completions_body() -> None:
    # Given a conversation with a tool round trip
    call_ = ToolCall(id="call_1", name="search", arguments='{"query": "rrf"}')
    messages = [
        *QUESTION,
        ChatMessage(role="assistant", tool_calls=(call_,)),
        ChatMessage(role="tool", content="[1] RRF fuses ranks.", tool_call_id="call_1"),
    ]
    # When the request is built
    body = build_request("gpt-test", messages, [SEARCH], ChatOptions(max_output_tokens=321, temperature=0.2))
    # Then it is exactly the streaming Chat Completions body
    assert body == {
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "Cite."},
            {"role": "user", "content": "What is RRF?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"query": "rrf"}'},
                    }
                ],
            },
            {"role": "tool", "content": "[1] RRF fuses ranks.", "tool_call_id": "call_1"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 321,
        "temperature": 0.2,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "search",
                    "description": "Search the namespace.",
                    "parameters": SEARCH.parameters,
                },
            }
        ],
    }


def test_build_request_without_tools_sends_no_tools_key() -> None:
    assert "tools" not in build_request("m", QUESTION, [], ChatOptions())


def test_importing_the_adapter_does_not_import_openai() -> None:
    # The chat Lambda's cold start: the SDK is imported on the first call only.
    code = "import sys, ragline.adapters.openai.chat; assert 'openai' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# --- streaming ------------------------------------------------------------------------------------


def test_text_streams_in_order_then_usage_then_end(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([text("Reciprocal", " rank", " fusion.", usage=(42, 7))])

    events = run(model(openai_replay))

    assert events == [
        TextDelta(text="Reciprocal"),
        TextDelta(text=" rank"),
        TextDelta(text=" fusion."),
        TokenUsage(input_tokens=42, output_tokens=7),
        TurnEnd(finish_reason="stop"),
    ]


def test_one_tool_call_split_across_chunks_is_assembled(openai_replay: OpenAIReplay) -> None:
    args = {"query": "reciprocal rank fusion", "top_k": 5}
    assert len(split_arguments(json.dumps(args))) >= 2  # the server really splits them
    openai_replay.script([tool_call("search", args, call_id="call_abc", text_before=["Looking."])])

    events = run(model(openai_replay))

    assert events[0] == TextDelta(text="Looking.")
    assert events[1] == ToolCallsReady(
        calls=(ToolCall(id="call_abc", name="search", arguments=json.dumps(args)),)
    )
    assert events[-1] == TurnEnd(finish_reason="tool_calls")


def test_two_interleaved_tool_calls_are_assembled_by_index(openai_replay: OpenAIReplay) -> None:
    first, second = {"query": "hybrid search in opensearch"}, {"document_id": "doc-7", "sequence": 12}
    openai_replay.script([tool_calls(call("search", first), call("expand", second))])

    events = run(model(openai_replay))

    ready = [e for e in events if isinstance(e, ToolCallsReady)]
    assert ready == [
        ToolCallsReady(
            calls=(
                ToolCall(id="call_replay_0", name="search", arguments=json.dumps(first)),
                ToolCall(id="call_replay_1", name="expand", arguments=json.dumps(second)),
            )
        )
    ]
    assert [json.loads(c.arguments) for c in ready[0].calls] == [first, second]


def test_the_request_sent_is_what_build_request_made(openai_replay: OpenAIReplay) -> None:
    # Given a second turn that carries a tool result
    openai_replay.script([text("ok")])
    messages = [
        *QUESTION,
        ChatMessage(role="assistant", tool_calls=(ToolCall(id="call_9", name="search", arguments="{}"),)),
        ChatMessage(role="tool", content="[1] a passage", tool_call_id="call_9"),
    ]
    # When it is streamed
    list(model(openai_replay).stream(messages, [SEARCH], ChatOptions(max_output_tokens=77)))
    # Then the server received the model, the messages, the tools schema and the limits
    (sent,) = openai_replay.chat_requests
    assert sent["model"] == "gpt-test"
    assert sent["messages"][-1] == {"role": "tool", "content": "[1] a passage", "tool_call_id": "call_9"}
    assert sent["messages"][-2]["tool_calls"][0]["id"] == "call_9"
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "search",
                "description": SEARCH.description,
                "parameters": SEARCH.parameters,
            },
        }
    ]
    assert sent["max_tokens"] == 77
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}


def test_a_slow_stream_within_the_timeout_completes(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([text("slow", " but", " fine", delay_s=0.05)])

    events = run(model(openai_replay, llm_timeout_s=2.0))

    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "slow but fine"


def test_a_stalled_stream_times_out_as_unavailable(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([text("never", delay_s=0.6)])

    with pytest.raises(errors.DependencyUnavailable):
        run(model(openai_replay, llm_timeout_s=0.2))
    assert len(openai_replay.chat_requests) == 1  # mid-stream: not retried


def test_a_hang_up_mid_stream_is_unavailable_after_the_partial_text(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([hang_up("Partial", " answer")])
    seen: list[ModelEvent] = []

    with pytest.raises(errors.DependencyUnavailable) as caught:
        seen.extend(model(openai_replay).stream(QUESTION, [SEARCH], ChatOptions()))

    assert seen == [TextDelta(text="Partial"), TextDelta(text=" answer")]
    assert isinstance(caught.value.__cause__, openai.APIConnectionError)  # translated, not leaked


def test_an_error_event_mid_stream_is_unavailable(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([stream_error("Partial")])

    with pytest.raises(errors.DependencyUnavailable) as caught:
        run(model(openai_replay))

    assert type(caught.value.__cause__) is openai.APIError


def test_a_cleanly_ended_but_unfinished_stream_is_unavailable(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([hang_up("Partial", clean=True)])

    with pytest.raises(errors.DependencyUnavailable):
        run(model(openai_replay))


# --- errors and retries ---------------------------------------------------------------------------


def test_a_429_is_retried_by_the_sdk_then_succeeds(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([error(429), text("after the wait")])

    events = run(model(openai_replay))

    assert events[0] == TextDelta(text="after the wait")
    assert len(openai_replay.chat_requests) == 2
    assert [r.headers.get("x-stainless-retry-count") for r in openai_replay.requests] == ["0", "1"]


@pytest.mark.parametrize("retries", [0, 1, 3])
def test_429_forever_is_throttled_after_the_configured_retries(
    openai_replay: OpenAIReplay, retries: int
) -> None:
    openai_replay.script([error(429, times=None)])

    with pytest.raises(errors.ModelThrottled) as caught:
        run(model(openai_replay, llm_max_retries=retries))

    assert len(openai_replay.chat_requests) == retries + 1
    assert caught.value.details == {"status": 429} and caught.value.code == "model_throttled"


def test_a_context_length_error_is_context_too_long_and_other_400s_are_not(
    openai_replay: OpenAIReplay,
) -> None:
    openai_replay.script([error(400, code="context_length_exceeded"), error(400, code="invalid_value")])

    with pytest.raises(errors.ContextTooLong):
        run(model(openai_replay))
    with pytest.raises(errors.DependencyFailed) as caught:
        run(model(openai_replay))
    assert not isinstance(caught.value, errors.ContextTooLong)


def test_a_500_that_persists_is_unavailable(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([error(500, times=None)])

    with pytest.raises(errors.DependencyUnavailable) as caught:
        run(model(openai_replay, llm_max_retries=2))

    assert caught.value.details == {"status": 500}
    assert len(openai_replay.chat_requests) == 3


def test_a_503_once_is_retried(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([error(503), text("back")])

    assert run(model(openai_replay))[0] == TextDelta(text="back")


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_a_refused_request_fails_without_retries(openai_replay: OpenAIReplay, status: int) -> None:
    openai_replay.script([error(status, times=None)])

    with pytest.raises(errors.DependencyFailed) as caught:
        run(model(openai_replay))

    assert caught.value.details == {"status": status}
    assert len(openai_replay.chat_requests) == 1


def test_an_unreachable_endpoint_is_unavailable(openai_replay: OpenAIReplay) -> None:
    chat = OpenAIChatModel.from_settings(
        openai_replay.settings(openai_base_url="http://127.0.0.1:9/v1", llm_max_retries=0)
    )

    with pytest.raises(errors.DependencyUnavailable):
        run(chat)


def test_the_exhausted_script_fails_loudly(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([])

    with pytest.raises(errors.DependencyFailed):
        run(model(openai_replay))
    assert len(openai_replay.chat_requests) == 1


# --- the replay server itself (other suites rely on it) --------------------------------------------


def test_the_replay_answers_non_streaming_requests(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([text("Hello", " world", usage=(3, 2)), tool_call("search", {"query": "x"})])
    client = openai_replay.client()

    first = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    second = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])

    assert first.choices[0].message.content == "Hello world"
    assert first.usage is not None and first.usage.prompt_tokens == 3
    tool = second.choices[0].message.tool_calls
    assert tool is not None and tool[0].function.name == "search"  # type: ignore[union-attr]
    assert second.choices[0].finish_reason == "tool_calls"
    assert openai_replay.remaining == []


def test_the_replay_sends_no_usage_chunk_unless_asked(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([text("a")])

    chunks = list(
        openai_replay.client().chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
    )

    assert all(c.usage is None for c in chunks)


# --- embeddings -----------------------------------------------------------------------------------


@pytest.fixture
def embedder(openai_replay: OpenAIReplay) -> Iterator[OpenAIEmbedder]:
    openai_replay.embeddings(dimension=6, reversed_order=True)
    yield OpenAIEmbedder(
        model="text-embedding-test", client=openai_replay.client(), dimension=6, batch_size=2
    )


def test_embeddings_are_unit_length_in_input_order_across_batches(
    openai_replay: OpenAIReplay, embedder: OpenAIEmbedder
) -> None:
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]

    vectors = embedder.embed_documents(texts)

    assert vectors.shape == (5, 6) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    expected = np.asarray([embedding_vector(t, 6) for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-5)  # data came last-first; placed by index
    assert [r["input"] for r in openai_replay.embedding_requests] == [
        ["alpha", "beta"],
        ["gamma", "delta"],
        ["epsilon"],
    ]


def test_embed_query_is_one_vector(embedder: OpenAIEmbedder) -> None:
    vector = embedder.embed_query("alpha")

    assert vector.shape == (6,)
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, rel=1e-5)


def test_embeddings_of_another_dimension_are_refused(openai_replay: OpenAIReplay) -> None:
    openai_replay.embeddings(dimension=4)
    embedder = OpenAIEmbedder(model="text-embedding-test", client=openai_replay.client(), dimension=6)

    with pytest.raises(errors.EmbeddingMismatch):
        embedder.embed_query("alpha")


def test_a_server_silent_past_the_read_timeout_is_asked_again(openai_replay: OpenAIReplay) -> None:
    """Nothing reached the client yet, so the timed-out request is sent again (a local server still
    reading a long prompt); the answer of the retry is the turn's."""
    openai_replay.script([silent(0.6, text("too late")), text("second try")])

    events = run(model(openai_replay, llm_timeout_s=0.2, llm_max_retries=1))

    assert events[0] == TextDelta(text="second try")
    assert len(openai_replay.chat_requests) == 2


def test_a_server_silent_through_every_retry_is_unavailable(openai_replay: OpenAIReplay) -> None:
    openai_replay.script([silent(0.5, text("too late"), times=None)])

    with pytest.raises(errors.DependencyUnavailable):
        run(model(openai_replay, llm_timeout_s=0.15, llm_max_retries=1))
    assert len(openai_replay.chat_requests) == 2


@pytest.mark.parametrize(
    ("settings", "read"),
    [
        ({}, 60.0),
        ({"openai_base_url": "http://127.0.0.1:8080/v1"}, 300.0),
        ({"openai_base_url": "http://127.0.0.1:8080/v1", "llm_timeout_s": 42.0}, 42.0),
        ({"llm_timeout_s": 7.5}, 7.5),
    ],
)
def test_the_read_timeout_defaults_to_the_kind_of_endpoint(settings: dict[str, object], read: float) -> None:
    """OpenAI answers within a minute; a self-hosted server may be silent for minutes on a CPU."""
    client = openai_client(Settings.model_validate({"openai_api_key": "k", **settings}))

    assert client.timeout.read == read
    assert client.timeout.connect == min(read, 5.0)
