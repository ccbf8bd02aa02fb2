""":class:`~ragline.ports.ChatModel` over any OpenAI-compatible Chat Completions endpoint.

Streams text deltas, assembles tool-call deltas (which arrive split across chunks, keyed by
``index``) into whole calls, reads token usage from the final chunk, and translates SDK errors into
Ragline errors. Retries with backoff on 429/5xx are the SDK's own (``max_retries``).
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
    return body


class OpenAIChatModel:
    def __init__(self, *, model: str, client: OpenAI) -> None:
        self.name = model
        self._client = client

    @classmethod
    def from_settings(cls, settings: Settings) -> OpenAIChatModel:
        from openai import OpenAI

        client = OpenAI(
            api_key=settings.openai_api_key.get_secret_value() or "not-needed",
            base_url=settings.openai_base_url or None,
            timeout=settings.llm_timeout_s,
            max_retries=settings.llm_max_retries,
        )
        return cls(model=settings.chat_model, client=client)

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]:
        import openai

        try:
            yield from self._stream(build_request(self.name, messages, tools, options))
        except openai.RateLimitError as exc:
            raise errors.Throttled("the model endpoint is rate limiting", status=exc.status_code) from exc
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            raise errors.DependencyUnavailable("the model endpoint is unreachable") from exc
        except openai.InternalServerError as exc:
            raise errors.DependencyUnavailable("the model endpoint failed", status=exc.status_code) from exc
        except openai.APIStatusError as exc:
            raise errors.DependencyFailed(
                "the model endpoint refused the request", status=exc.status_code
            ) from exc

    def _stream(self, body: dict[str, Any]) -> Iterator[ModelEvent]:
        calls: dict[int, dict[str, str]] = {}
        finish = "stop"
        usage = TokenUsage()
        for chunk in self._client.chat.completions.create(**body):
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
        if calls:
            yield ToolCallsReady(
                calls=tuple(
                    ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=c["arguments"])
                    for i, c in sorted(calls.items())
                )
            )
        yield usage
        yield TurnEnd(finish_reason=finish)
