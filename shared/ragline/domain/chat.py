"""Chat messages and the events a :class:`~ragline.ports.ChatModel` streams.

Messages follow the OpenAI Chat Completions shape, the lingua franca every compatible server speaks.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragline.domain.models import RunUsage


class ToolCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str
    """Raw JSON text as the model produced it; parsed with pydantic by the agent, never eval'd."""


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None

    def to_openai(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            msg["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            msg["tool_call_id"] = self.tool_call_id
        return msg


class ToolSpec(BaseModel):
    """A function the model may call; ``parameters`` is a JSON schema (from a pydantic model)."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    parameters: dict[str, Any]


class TextDelta(BaseModel):
    kind: Literal["text"] = "text"
    text: str


class ToolCallsReady(BaseModel):
    """The model finished a turn by asking for these tool calls (deltas already assembled)."""

    kind: Literal["tool_calls"] = "tool_calls"
    calls: tuple[ToolCall, ...]


class TokenUsage(BaseModel):
    kind: Literal["usage"] = "usage"
    input_tokens: int = 0
    output_tokens: int = 0
    reported: bool = True
    """False when the endpoint sent no token counts (the counts are then zero; the caller estimates)."""
    cached_input_tokens: int = 0
    """Of ``input_tokens``, those read from the model's prompt cache."""

    def as_run_usage(self) -> RunUsage:
        return RunUsage(
            llm_input_tokens=self.input_tokens,
            llm_output_tokens=self.output_tokens,
            llm_cached_input_tokens=self.cached_input_tokens,
        )


class TurnEnd(BaseModel):
    kind: Literal["end"] = "end"
    finish_reason: str = "stop"


ModelEvent = TextDelta | ToolCallsReady | TokenUsage | TurnEnd


ToolChoice = Literal["auto", "required", "none"]


class ChatOptions(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_output_tokens: int = Field(default=5000, ge=1)
    temperature: float = 0.0
    tool_choice: ToolChoice | None = None
    """Sent only with tools; None: the endpoint's default (``auto``)."""
