""":class:`~ragline.ports.ChatModel` over any OpenAI-compatible Chat Completions endpoint.

Streams text deltas, assembles tool-call deltas (which arrive split across chunks, keyed by
``index``, possibly interleaved) into whole calls, reads token usage from the final chunk, and
translates SDK errors into Ragline errors in one function. Retries with backoff on 408/409/429/5xx
are the SDK's own (``max_retries`` from settings; it honours ``retry-after``/``retry-after-ms``); they
happen before the first byte of a stream, never after text has been yielded. A stream cut mid-way
(connection lost, read timeout, or a body that ends before any ``finish_reason``) is
``DependencyUnavailable``. ``openai`` is imported on first use only: it costs the chat Lambda's cold
start about a second.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ragline import errors
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

if TYPE_CHECKING:
    from openai import OpenAI

_CONNECT_TIMEOUT_S = 5.0
OPENAI_DEFAULT = "gpt-4o-mini"


def build_request(
    model: str, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
) -> dict[str, Any]:
    """The request body, as a plain dict (unit-tested without a server)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [m.to_openai() for m in messages],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": options.max_output_tokens,
        "temperature": options.temperature,
    }
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            }
            for t in tools
        ]
        if options.tool_choice is not None:
            body["tool_choice"] = options.tool_choice
    return body


def openai_client(settings: Settings) -> OpenAI:
    """The SDK client of both OpenAI adapters: endpoint, retries and timeouts from settings.

    ``llm_read_timeout_s`` bounds each read (so a stalled stream fails, a long one does not);
    connecting gets at most a few seconds, so an unreachable endpoint fails fast and is retried.
    """
    from openai import OpenAI, Timeout

    read = settings.llm_read_timeout_s
    return OpenAI(
        api_key=settings.openai_api_key.get_secret_value() or "not-needed",
        base_url=settings.openai_base_url or None,
        timeout=Timeout(read, connect=min(read, _CONNECT_TIMEOUT_S)),
        max_retries=settings.llm_max_retries,
    )


def served_model(client: OpenAI) -> str:
    """The model an OpenAI-compatible server serves (the first it lists): a local server (llama.cpp,
    vLLM, Ollama) names its own; "default" when it lists none or cannot be asked."""
    import openai

    try:
        models = client.with_options(max_retries=0).models.list()
        return next((m.id for m in models if m.id), "default")
    except openai.OpenAIError:
        return "default"


def translate_error(exc: Exception) -> errors.RaglineError:
    """The SDK's error as a Ragline error, by exception type and HTTP status (never message text).

    Called once the SDK's own retries are spent: 429 is ``ModelThrottled``; 408, 409, 5xx,
    connection and timeout failures are ``DependencyUnavailable``; a 400 whose error code is
    ``context_length_exceeded`` is ``ContextTooLong``; any other status (400, 401, 403, 404, 422)
    means Ragline sent something wrong or is misconfigured: ``DependencyFailed``.
    """
    import openai

    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status == 429:
            return errors.ModelThrottled("the model endpoint is rate limiting; retry later", status=status)
        if status == 400 and getattr(exc, "code", None) == "context_length_exceeded":
            return errors.ContextTooLong(
                "the conversation does not fit the model's context window", status=status
            )
        if status in (408, 409) or status >= 500:
            return errors.DependencyUnavailable("the model endpoint failed", status=status)
        return errors.DependencyFailed("the model endpoint refused the request", status=status)
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError, also mid-stream
        return errors.DependencyUnavailable("the model endpoint is unreachable or timed out")
    if isinstance(exc, openai.APIError):  # an error event inside an open stream
        return errors.DependencyUnavailable("the model endpoint failed mid-stream")
    return errors.DependencyFailed("the model client failed")


class OpenAIChatModel:
    def __init__(self, *, model: str, client: OpenAI) -> None:
        self.name = model
        self._client = client

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIChatModel:
        client = openai_client(settings)
        model = settings.chat_model or (served_model(client) if settings.openai_base_url else OPENAI_DEFAULT)
        return cls(model=model, client=client)

    def close(self) -> None:
        """Close the client's connection pool (SnapStart's before-snapshot hook; the container then
        forgets this model and builds another on next use)."""
        self._client.close()

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]:
        import openai

        body = build_request(self.name, messages, tools, options)
        try:
            yield from self._stream(body)
        except openai.OpenAIError as exc:
            raise translate_error(exc) from exc

    def _stream(self, body: dict[str, Any]) -> Iterator[ModelEvent]:
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage = TokenUsage(reported=False)
        with self._client.chat.completions.create(**body) as chunks:  # closes the response early too
            for chunk in chunks:
                if chunk.usage is not None:
                    usage = TokenUsage(
                        input_tokens=chunk.usage.prompt_tokens or 0,
                        output_tokens=chunk.usage.completion_tokens or 0,
                    )
                for choice in chunk.choices:
                    delta = choice.delta
                    if delta.content:
                        yield TextDelta(text=delta.content)
                    for tc in delta.tool_calls or []:
                        slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                        if tc.id:
                            slot["id"] = tc.id
                        if tc.function and tc.function.name:
                            slot["name"] += tc.function.name
                        if tc.function and tc.function.arguments:
                            slot["arguments"] += tc.function.arguments
                    if choice.finish_reason:
                        finish = choice.finish_reason
        if finish is None:
            # Some transports end a cut body cleanly; a turn without a finish_reason never finished.
            raise errors.DependencyUnavailable("the model stream ended before the turn finished")
        if calls:
            yield ToolCallsReady(
                calls=tuple(
                    ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
                    for i, c in sorted(calls.items())
                )
            )
        yield usage
        yield TurnEnd(finish_reason=finish)
