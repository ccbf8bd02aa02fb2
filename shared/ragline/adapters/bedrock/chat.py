""":class:`~ragline.ports.ChatModel` over Amazon Bedrock's Converse API, through the function's IAM role.

ConverseStream streams text deltas and tool-use input fragments (assembled here into whole calls);
the stop reason becomes the loop's finish reason and the stream's ``metadata`` event the turn's
tokens (prompt-cache reads and writes included in the input, reads reported apart). Models whose tool
use Bedrock does not stream are asked through Converse when tools are offered.

Failures, each with one outcome (by AWS error code, never message text — except the one case below):

- throttling: botocore's ``standard`` retries (exponential backoff with full jitter, bounded by
  ``max_attempts``) on the HTTP answer, and the same bound here for an exception event that arrives
  before the turn said anything; then :class:`~ragline.errors.ModelThrottled`;
- model access not enabled, a model the Region does not offer, a role without the permission:
  :class:`~ragline.errors.ModelAccessDenied`, naming the model and how to enable it;
- a conversation longer than the context window: :class:`~ragline.errors.ContextTooLong` (the loop
  prunes and retries once: :mod:`ragline.agents.fitting`). Bedrock says so only with a
  ``ValidationException`` whose *message* is the one signal, so :data:`CONTEXT_TOO_LONG` reads it;
- a stream cut mid-turn (an exception event, a dropped connection, a body ending before
  ``messageStop``): :class:`~ragline.errors.DependencyUnavailable`, as with the OpenAI adapter.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from ragline import errors
from ragline.adapters.bedrock.client import THROTTLING_CODES, UNAVAILABLE_CODES, bedrock_client
from ragline.adapters.bedrock.converse import build_request, caches, finish_reason, streams_tool_use
from ragline.adapters.boto import error_code, http_status
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

DENIED_CODES = frozenset(
    {"AccessDeniedException", "ResourceNotFoundException", "UnrecognizedClientException"}
)
CONTEXT_TOO_LONG = re.compile(
    r"too long|too many (?:input )?tokens|tokens? exceeds?|exceeds? the (?:maximum|context)"
    r"|maximum context length|context (?:window|length)",
    re.IGNORECASE,
)
"""What Bedrock's ``ValidationException`` says when the input does not fit (it has no code of its own)."""
STREAM_ATTEMPTS = 3
"""Tries of a turn whose stream failed retryably before saying anything (throttled, model error)."""


class BedrockChatModel:
    """``client``: a ``bedrock-runtime`` client (tests inject one); ``None`` builds one on first use
    with ``retries`` retries of a throttled or failed HTTP answer and ``read_timeout_s`` of silence."""

    def __init__(
        self,
        *,
        model: str,
        client: Any = None,
        region: str | None = None,
        cache_points: Literal["auto", "on", "off"] = "auto",
        retries: int = 3,
        read_timeout_s: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = model
        self._region = region
        self._client = bedrock_client(
            "bedrock-runtime",
            client=client,
            region=region,
            max_attempts=retries,  # botocore's max_attempts counts retries after the first try
            read_timeout_s=read_timeout_s,
        )
        self._cache_system, self._cache_tools = caches(model, cache_points)
        self._sleep = sleep

    def request(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> dict[str, Any]:
        body = build_request(
            messages, tools, options, cache_system=self._cache_system, cache_tools=self._cache_tools
        )
        return {"modelId": self.name, **body}

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]:
        request = self.request(messages, tools, options)
        whole = bool(tools) and not streams_tool_use(self.name)
        for attempt in range(1, STREAM_ATTEMPTS + 1):
            said = False
            try:
                for event in self._whole(request) if whole else self._streamed(request):
                    said = True
                    yield event
                return
            except Exception as exc:
                error = self._translate(exc)
                if error is None:  # not Bedrock's failure: a bug, raised as it is
                    raise
                retry = not said and attempt < STREAM_ATTEMPTS and isinstance(error, errors.RETRYABLE)
                if not retry or _from_http(exc):  # botocore already retried an HTTP answer
                    raise error from exc
                self._sleep(random.uniform(0, 0.25 * 2**attempt))  # full jitter

    def _streamed(self, request: dict[str, Any]) -> Iterator[ModelEvent]:
        response = self._client().converse_stream(**request)
        calls: dict[int, dict[str, str]] = {}
        stop: str | None = None
        usage = TokenUsage(reported=False)
        stream = response["stream"]
        try:
            for event in stream:
                if "contentBlockStart" in event:
                    start = event["contentBlockStart"]
                    use = start.get("start", {}).get("toolUse")
                    if use:
                        calls[start["contentBlockIndex"]] = {
                            "id": use["toolUseId"],
                            "name": use["name"],
                            "input": "",
                        }
                elif "contentBlockDelta" in event:
                    delta = event["contentBlockDelta"]
                    if delta["delta"].get("text"):
                        yield TextDelta(text=delta["delta"]["text"])
                    elif "toolUse" in delta["delta"]:
                        slot = calls.setdefault(
                            delta["contentBlockIndex"], {"id": "", "name": "", "input": ""}
                        )
                        slot["input"] += delta["delta"]["toolUse"].get("input", "")
                    # reasoningContent deltas (a model thinking aloud) are never shown
                elif "messageStop" in event:
                    stop = event["messageStop"].get("stopReason", "end_turn")
                elif "metadata" in event:
                    usage = _usage(event["metadata"].get("usage") or {})
        finally:
            stream.close()
        if stop is None:
            raise errors.DependencyUnavailable(
                "the Bedrock stream ended before the turn finished", service="Bedrock", model=self.name
            )
        yield from _ending(
            [
                ToolCall(id=c["id"], name=c["name"], arguments=c["input"] or "{}")
                for _, c in sorted(calls.items())
            ],
            usage,
            stop,
        )

    def _whole(self, request: dict[str, Any]) -> Iterator[ModelEvent]:
        response = self._client().converse(**request)
        if "output" not in response or "stopReason" not in response:  # a torn body parses as {}
            raise errors.DependencyUnavailable(
                "the Bedrock answer ended before the turn finished", service="Bedrock", model=self.name
            )
        content = response["output"].get("message", {}).get("content", [])
        text = "".join(b["text"] for b in content if b.get("text"))
        if text:
            yield TextDelta(text=text)
        calls = [
            ToolCall(id=u["toolUseId"], name=u["name"], arguments=json.dumps(u.get("input") or {}))
            for u in (b["toolUse"] for b in content if "toolUse" in b)
        ]
        yield from _ending(calls, _usage(response.get("usage") or {}), response.get("stopReason", "end_turn"))

    def _translate(self, exc: BaseException) -> errors.RaglineError | None:
        if isinstance(exc, errors.RaglineError):
            return exc
        return translate_error(exc, model=self.name, region=self._region or "")


def _ending(calls: list[ToolCall], usage: TokenUsage, stop: str) -> Iterator[ModelEvent]:
    if calls:
        yield ToolCallsReady(calls=tuple(calls))
    yield usage
    yield TurnEnd(finish_reason=finish_reason(stop))


def _usage(usage: dict[str, Any]) -> TokenUsage:
    """Converse's usage: ``inputTokens`` leaves out the prompt-cache reads and writes, which are input
    the model processed too (and are billed), so they are added to it."""
    if not usage:
        return TokenUsage(reported=False)
    read = int(usage.get("cacheReadInputTokens") or 0)
    written = int(usage.get("cacheWriteInputTokens") or 0)
    return TokenUsage(
        input_tokens=int(usage.get("inputTokens") or 0) + read + written,
        output_tokens=int(usage.get("outputTokens") or 0),
        cached_input_tokens=read,
    )


def _from_http(exc: BaseException) -> bool:
    """An error answer to the HTTP request (which botocore's retries already covered), as opposed to an
    exception event inside an open stream (``EventStreamError``) or a cut connection."""
    from botocore.exceptions import ClientError, EventStreamError

    return isinstance(exc, ClientError) and not isinstance(exc, EventStreamError)


def translate_error(exc: BaseException, *, model: str, region: str) -> errors.RaglineError | None:
    """A botocore failure of a Converse call as the Ragline error a caller can act on (``None`` for an
    exception that is not a failure of the call)."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

    details: dict[str, Any] = {"service": "Bedrock", "model": model}
    if isinstance(exc, ClientError):
        code, status = error_code(exc), http_status(exc)
        code = code[:1].upper() + code[1:]  # exception events name it lowerCamel (throttlingException)
        details |= {"awsCode": code, "status": status}
        message = str((exc.response.get("Error") or {}).get("Message") or "")
        if code in THROTTLING_CODES or (status == 429 and code not in UNAVAILABLE_CODES):
            return errors.ModelThrottled(f"Bedrock is throttling model {model}; retry later", **details)
        if code in DENIED_CODES:
            where = f" in {region}" if region else ""
            return errors.ModelAccessDenied(
                f"Bedrock refused model {model}{where} ({code}). Enable access to it in the Bedrock console"
                f" (Model access{where}), or choose a model or a cross-Region inference profile"
                " (us./eu./apac.) the Region offers; the function's role must allow bedrock:InvokeModel and"
                " bedrock:InvokeModelWithResponseStream on it",
                **details,
            )
        if code == "ValidationException" and CONTEXT_TOO_LONG.search(message):
            return errors.ContextTooLong(
                f"the conversation does not fit model {model}'s context window", **details, reason=message
            )
        if code in UNAVAILABLE_CODES or status >= 500 or code == "ModelStreamErrorException":
            return errors.DependencyUnavailable(f"Bedrock model {model} failed", **details)
        return errors.DependencyFailed(
            f"Bedrock rejected the request to {model} ({code})", **details, reason=message
        )
    if isinstance(exc, (NoCredentialsError, NoRegionError)):
        return errors.ModelAccessDenied(f"Bedrock model {model} has no credentials or region", **details)
    if isinstance(exc, BotoCoreError | OSError) or type(exc).__module__.startswith("urllib3"):
        # refused, TLS, connect/read timeouts, a stream cut mid-body (ResponseStreamingError, ProtocolError)
        return errors.DependencyUnavailable(f"Bedrock model {model} was unreachable or cut off", **details)
    return None
