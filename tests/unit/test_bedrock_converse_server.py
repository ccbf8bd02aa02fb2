"""The local Bedrock server's Converse / ConverseStream: scripted turns parsed by botocore's own parsers
(real HTTP, SigV4 headers, event-stream frames), Bedrock's failures as botocore surfaces them, and the
request checks that make a wrong request from the adapter fail here as it would in AWS."""

from __future__ import annotations

import copy
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError, EventStreamError
from urllib3.exceptions import ProtocolError

from tests.support.bedrock_converse import cut, fail, say, stream_exception, use_tool
from tests.support.bedrock_server import BedrockServer

pytestmark = pytest.mark.unit

MODEL = "us.anthropic.claude-3-5-haiku-20241022-v1:0"
HELLO = [{"role": "user", "content": [{"text": "hello"}]}]
TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "search",
                "description": "Search.",
                "inputSchema": {"json": {"type": "object"}},
            }
        },
        {"cachePoint": {"type": "default"}},
    ],
    "toolChoice": {"auto": {}},
}
FULL: dict[str, Any] = {
    "system": [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}],
    "messages": [
        {"role": "user", "content": [{"text": "find cats"}, {"cachePoint": {"type": "default"}}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "search", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": {"n": 1}}]}}]},
    ],
    "toolConfig": TOOLS,
    "inferenceConfig": {"maxTokens": 100, "temperature": 0.2},
}


@pytest.fixture
def runtime(bedrock_server: BedrockServer) -> Any:
    """A bedrock-runtime client that never retries (``max_attempts`` counts retries)."""
    return bedrock_server.client("bedrock-runtime", max_attempts=0)


def stream(runtime: Any, messages: list[dict[str, Any]] = HELLO, **request: Any) -> list[dict[str, Any]]:
    return list(runtime.converse_stream(modelId=MODEL, messages=messages, **request)["stream"])


def test_a_streamed_text_turn_is_parsed_by_botocore_into_bedrocks_events(
    bedrock_server: BedrockServer, runtime: Any
) -> None:
    bedrock_server.script_converse([say("Hel", "lo", stop="max_tokens", input_tokens=7, output_tokens=2)])

    events = stream(runtime)

    assert events == [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hel"}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "lo"}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "max_tokens"}},
        {
            "metadata": {
                "usage": {"inputTokens": 7, "outputTokens": 2, "totalTokens": 9},
                "metrics": {"latencyMs": 30},
            }
        },
    ]
    assert bedrock_server.converse_remaining == []


def test_tool_calls_stream_as_blocks_whose_input_fragments_join_into_the_json(
    bedrock_server: BedrockServer, runtime: Any
) -> None:
    first, second = {"query": "cats", "k": 3}, {"url": "https://x"}
    bedrock_server.script_converse(
        [use_tool("search", first, text_before=("Looking",), more=(("fetch", second, "tooluse_2"),))]
    )

    events = stream(runtime)

    starts = [e["contentBlockStart"] for e in events if "contentBlockStart" in e]
    assert starts == [
        {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "search"}}},
        {"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_2", "name": "fetch"}}},
    ]
    for index, expected in ((1, first), (2, second)):
        pieces = [
            e["contentBlockDelta"]["delta"]["toolUse"]["input"]
            for e in events
            if e.get("contentBlockDelta", {}).get("contentBlockIndex") == index
        ]
        assert len(pieces) >= 2 and json.loads("".join(pieces)) == expected
    assert {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Looking"}}} in events
    assert events[-2] == {"messageStop": {"stopReason": "tool_use"}}
    assert set(events[-1]["metadata"]["usage"]) == {"inputTokens", "outputTokens", "totalTokens"}


def test_converse_answers_the_same_turns_as_one_json_message(
    bedrock_server: BedrockServer, runtime: Any
) -> None:
    bedrock_server.script_converse([use_tool("search", {"query": "cats"}, text_before=("Look", "ing"))])

    answer = runtime.converse(modelId=MODEL, messages=HELLO)

    assert answer["output"]["message"] == {
        "role": "assistant",
        "content": [
            {"text": "Looking"},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "search", "input": {"query": "cats"}}},
        ],
    }
    assert answer["stopReason"] == "tool_use"
    assert answer["usage"]["totalTokens"] == answer["usage"]["inputTokens"] + answer["usage"]["outputTokens"]


@pytest.mark.parametrize(
    "stop",
    ["end_turn", "max_tokens", "stop_sequence", "tool_use", "guardrail_intervened", "content_filtered"],
)
def test_every_stop_reason_reaches_the_client(bedrock_server: BedrockServer, runtime: Any, stop: str) -> None:
    bedrock_server.script_converse([say("x", stop=stop), say("y", stop=stop)])

    assert runtime.converse(modelId=MODEL, messages=HELLO)["stopReason"] == stop
    assert {"messageStop": {"stopReason": stop}} in stream(runtime)


def test_cached_tokens_are_reported_and_usage_can_be_left_out(
    bedrock_server: BedrockServer, runtime: Any
) -> None:
    bedrock_server.script_converse(
        [say("a", input_tokens=5, output_tokens=1, cache_read=40, cache_write=8), say("b", usage=False)]
    )

    usage = stream(runtime)[-1]["metadata"]["usage"]
    assert usage == {
        "inputTokens": 5,
        "outputTokens": 1,
        "totalTokens": 54,
        "cacheReadInputTokens": 40,
        "cacheWriteInputTokens": 8,
    }
    assert stream(runtime)[-1] == {"messageStop": {"stopReason": "end_turn"}}


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("ThrottlingException", 429),
        ("AccessDeniedException", 403),
        ("ValidationException", 400),
        ("ModelErrorException", 424),
        ("ServiceUnavailableException", 503),
    ],
)
@pytest.mark.parametrize("streamed", [False, True], ids=["converse", "converse_stream"])
def test_scripted_http_errors_surface_as_that_client_error(
    bedrock_server: BedrockServer, runtime: Any, code: str, status: int, streamed: bool
) -> None:
    bedrock_server.script_converse([fail(code, message="Input is too long for requested model.")])
    call = runtime.converse_stream if streamed else runtime.converse

    with pytest.raises(ClientError) as raised:
        call(modelId=MODEL, messages=HELLO)  # converse_stream raises here, before any event

    assert raised.value.response["Error"] == {
        "Code": code,
        "Message": "Input is too long for requested model.",
    }
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == status


def test_a_failure_answers_times_requests_and_none_means_forever(bedrock_server: BedrockServer) -> None:
    runtime = bedrock_server.client("bedrock-runtime", max_attempts=2)  # three attempts
    bedrock_server.script_converse([fail("ThrottlingException", times=2), say("ok")])

    assert stream(runtime)[1] == {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "ok"}}}
    assert len(bedrock_server.converse_requests) == 3

    bedrock_server.script_converse([fail("ThrottlingException", times=None)])
    for _ in range(2):
        with pytest.raises(ClientError, match="ThrottlingException"):
            runtime.converse(modelId=MODEL, messages=HELLO)
    assert len(bedrock_server.converse_requests) == 9 and len(bedrock_server.converse_remaining) == 1


@pytest.mark.parametrize(
    "code",
    [
        "throttlingException",
        "modelStreamErrorException",
        "internalServerException",
        "serviceUnavailableException",
        "validationException",
    ],
)
def test_a_stream_exception_raises_botocores_event_stream_error_after_the_sent_events(
    bedrock_server: BedrockServer, runtime: Any, code: str
) -> None:
    bedrock_server.script_converse([stream_exception(code, "par", "tial")])
    seen: list[dict[str, Any]] = []

    with pytest.raises(EventStreamError) as raised:
        seen.extend(runtime.converse_stream(modelId=MODEL, messages=HELLO)["stream"])

    assert raised.value.response["Error"]["Code"] == code
    assert [next(iter(e)) for e in seen] == ["messageStart", "contentBlockDelta", "contentBlockDelta"]


def test_a_dropped_connection_raises_urllib3s_protocol_error_while_iterating(
    bedrock_server: BedrockServer, runtime: Any
) -> None:
    bedrock_server.script_converse([cut("par", "tial")])
    seen: list[dict[str, Any]] = []

    with pytest.raises(ProtocolError):
        seen.extend(runtime.converse_stream(modelId=MODEL, messages=HELLO)["stream"])

    assert [next(iter(e)) for e in seen] == ["messageStart", "contentBlockDelta", "contentBlockDelta"]


def test_a_cleanly_ended_stream_without_message_stop_raises_nothing(
    bedrock_server: BedrockServer, runtime: Any
) -> None:
    bedrock_server.script_converse([cut("par", "tial", clean=True)])

    events = stream(runtime)

    assert [next(iter(e)) for e in events] == ["messageStart", "contentBlockDelta", "contentBlockDelta"]


def test_a_cut_converse_body_leaves_botocore_a_response_without_output(
    bedrock_server: BedrockServer, runtime: Any
) -> None:
    bedrock_server.script_converse([cut("par", "tial")])

    answer = runtime.converse(modelId=MODEL, messages=HELLO)

    assert "output" not in answer and "stopReason" not in answer


def test_requests_are_recorded_with_their_decoded_model_and_kind(
    bedrock_server: BedrockServer, runtime: Any
) -> None:
    bedrock_server.script_converse([say("a"), say("b")])

    runtime.converse(modelId="anthropic.claude-3-haiku-20240307-v1:0", messages=HELLO, **_tools_free(FULL))
    stream(runtime, inferenceConfig={"maxTokens": 5})

    assert bedrock_server.converse_requests == [
        {
            **_tools_free(FULL),
            "messages": HELLO,
            "modelId": "anthropic.claude-3-haiku-20240307-v1:0",
            "stream": False,
        },
        {"messages": HELLO, "inferenceConfig": {"maxTokens": 5}, "modelId": MODEL, "stream": True},
    ]
    assert [r.operation for r in bedrock_server.requests] == ["Converse", "ConverseStream"]


def test_with_nothing_scripted_the_server_answers_500_unless_a_default_turn_is_set(
    bedrock_server: BedrockServer, runtime: Any
) -> None:
    with pytest.raises(ClientError) as raised:
        runtime.converse(modelId=MODEL, messages=HELLO)
    assert raised.value.response["Error"] == {
        "Code": "InternalServerException",
        "Message": "no scripted converse turn",
    }

    bedrock_server.converse_default = say("always")
    assert stream(runtime)[1]["contentBlockDelta"]["delta"] == {"text": "always"}
    assert stream(runtime)[1]["contentBlockDelta"]["delta"] == {"text": "always"}

    bedrock_server.script_converse([say("x")])
    bedrock_server.reset()
    assert bedrock_server.converse_default is None
    assert bedrock_server.converse_remaining == [] and bedrock_server.converse_requests == []


def test_unsigned_requests_are_refused(bedrock_server: BedrockServer) -> None:
    bedrock_server.script_converse([say("x")])
    unsigned = bedrock_server.client("bedrock-runtime", signed=False, max_attempts=0)

    with pytest.raises(ClientError, match="AccessDeniedException"):
        unsigned.converse_stream(modelId=MODEL, messages=HELLO)
    assert len(bedrock_server.converse_remaining) == 1
    assert bedrock_server.converse_requests == [{"messages": HELLO, "modelId": MODEL, "stream": True}]


def _tools_free(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if k not in ("toolConfig", "messages")}


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(request: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = request
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        elif value is _DELETE:
            del target[last]
        else:
            target[last] = value

    return mutate


_DELETE = object()
_TOOL_USE = {"toolUse": {"toolUseId": "t1", "name": "search", "input": {}}}
_RESULT = {"toolResult": {"toolUseId": "t1", "content": [{"text": "ok"}]}}
BAD_REQUESTS = {
    "no messages": _set("messages", []),
    "first message from the assistant": _set("messages.0.role", "assistant"),
    "roles not alternating": _set("messages.1.role", "user"),
    "blank text": _set("messages.0.content.0", {"text": " "}),
    "two kinds in one block": _set("messages.0.content.0", {"text": "a", "cachePoint": {"type": "default"}}),
    "unsupported block": _set("messages.0.content.0", {"image": {"format": "png"}}),
    "tool input not an object": _set("messages.1.content.0.toolUse.input", ["a"]),
    "toolUse in a user message": _set("messages.0.content.0", _TOOL_USE),
    "toolResult in an assistant message": _set("messages.1.content.0", _RESULT),
    "toolResult for an unknown id": _set("messages.2.content.0.toolResult.toolUseId", "t9"),
    "toolUse left unanswered": _set("messages.2.content.0", {"text": "never mind"}),
    "toolResult content of another kind": _set("messages.2.content.0.toolResult.content", [{"image": {}}]),
    "toolResult status unknown": _set("messages.2.content.0.toolResult.status", "maybe"),
    "cache point of another type": _set("messages.0.content.1", {"cachePoint": {"type": "forever"}}),
    "system block of two kinds": _set("system.0", {"text": "a", "cachePoint": {"type": "default"}}),
    "tool blocks without toolConfig": _set("toolConfig", _DELETE),
    "tool name off pattern": _set("toolConfig.tools.0.toolSpec.name", "web search"),
    "tool schema not an object": _set("toolConfig.tools.0.toolSpec.inputSchema", {"json": ["object"]}),
    "tool choice of two kinds": _set("toolConfig.toolChoice", {"auto": {}, "any": {}}),
    "tool choice naming no tool": _set("toolConfig.toolChoice", {"tool": {"name": "fetch"}}),
    "maxTokens below 1": _set("inferenceConfig.maxTokens", 0),
    "temperature above 1": _set("inferenceConfig.temperature", 1.5),
}


def test_a_well_formed_request_with_tools_cache_points_and_results_is_accepted(
    bedrock_server: BedrockServer,
) -> None:
    bedrock_server.script_converse([say("fine")])
    lax = bedrock_server.client("bedrock-runtime", max_attempts=0, parameter_validation=False)

    assert lax.converse(modelId=MODEL, **FULL)["output"]["message"]["content"] == [{"text": "fine"}]


@pytest.mark.parametrize("mutate", BAD_REQUESTS.values(), ids=BAD_REQUESTS.keys())
def test_each_request_bedrock_refuses_is_a_validation_exception_that_consumes_no_turn(
    bedrock_server: BedrockServer, mutate: Callable[[dict[str, Any]], None]
) -> None:
    bedrock_server.script_converse([say("never")])
    lax = bedrock_server.client("bedrock-runtime", max_attempts=0, parameter_validation=False)
    request = copy.deepcopy(FULL)
    mutate(request)

    with pytest.raises(ClientError) as raised:
        lax.converse_stream(modelId=MODEL, **request)

    assert raised.value.response["Error"]["Code"] == "ValidationException"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert len(bedrock_server.converse_remaining) == 1 and len(bedrock_server.converse_requests) == 1


def test_an_unknown_top_level_key_is_refused(bedrock_server: BedrockServer) -> None:
    """botocore drops unknown keys itself, so this request is sent by hand (the signature is not checked)."""
    bedrock_server.script_converse([say("never")])
    request = urllib.request.Request(
        f"{bedrock_server.url}/model/{MODEL}/converse",
        data=json.dumps({"messages": HELLO, "modelId": MODEL}).encode(),
        headers={
            "Content-Type": "application/json",
            "X-Amz-Date": "20261201T000000Z",
            "Authorization": "AWS4-HMAC-SHA256 Credential=test/20261201/us-east-1/bedrock/aws4_request, "
            f"SignedHeaders=host;x-amz-date, Signature={'0' * 64}",
        },
    )

    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=5)

    assert raised.value.code == 400
    assert raised.value.headers["x-amzn-ErrorType"].startswith("ValidationException:")
    assert "modelId" in json.loads(raised.value.read())["message"]
