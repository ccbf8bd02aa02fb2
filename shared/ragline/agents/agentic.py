"""The agentic tool loop: the model searches and expands until it can answer, within hard bounds.

Bounds: ``max_steps`` model turns (20), ``max_output_tokens`` in total (5000), and an evidence brake —
once ``evidence_budget`` chunks were retrieved, tools are withdrawn and the model must answer. The
reason the loop ended is recorded on the final event.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ragline.agents.events import AnswerDelta, RunEvent, ToolFinished, ToolStarted, Warning
from ragline.agents.tools import ToolContext, label_for, run_tool
from ragline.domain.chat import ChatMessage, ChatOptions, TextDelta, TokenUsage, ToolCall, ToolCallsReady
from ragline.ports import ChatModel


@dataclass(frozen=True)
class LoopLimits:
    max_steps: int = 20
    max_output_tokens: int = 5000
    evidence_budget: int = 60
    max_tool_errors: int = 3


@dataclass
class LoopOutcome:
    answer: str = ""
    exit_reason: str = "running"


class AgenticAgent:
    """Agent ``agentic``: a bounded search/expand tool loop driven by the model."""

    description = (
        "Answers by searching the documents itself, step by step, expanding context where needed; "
        "best for most questions."
    )

    def __init__(self, model: ChatModel, limits: LoopLimits | None = None) -> None:
        self._model = model
        self._limits = limits or LoopLimits()

    def run(
        self, messages: Sequence[ChatMessage], ctx: ToolContext, outcome: LoopOutcome
    ) -> Iterator[RunEvent]:
        """Stream the run; ``outcome`` is filled in as it goes (also when the consumer stops early)."""
        history = list(messages)
        limits = self._limits
        tool_errors = 0
        for _step in range(limits.max_steps):
            budget = limits.max_output_tokens - ctx.usage.llm_output_tokens
            if budget <= 0:
                outcome.exit_reason = "max_output_tokens"
                return
            braked = len(ctx.evidence) >= limits.evidence_budget or tool_errors >= limits.max_tool_errors
            tools = [] if braked else ctx.specs()
            text: list[str] = []
            calls: tuple[ToolCall, ...] = ()
            for event in self._model.stream(history, tools, ChatOptions(max_output_tokens=budget)):
                if isinstance(event, TextDelta):
                    text.append(event.text)
                    outcome.answer += event.text
                    yield AnswerDelta(text=event.text)
                elif isinstance(event, ToolCallsReady):
                    calls = event.calls
                elif isinstance(event, TokenUsage):
                    ctx.usage.llm_input_tokens += event.input_tokens
                    ctx.usage.llm_output_tokens += event.output_tokens
            if not calls:
                outcome.exit_reason = "evidence_budget" if braked else "answered"
                return
            history.append(ChatMessage(role="assistant", content="".join(text), tool_calls=calls))
            for call in calls:
                yield ToolStarted(call_id=call.id, tool=call.name, label=label_for(call.name, call.arguments))
                result = run_tool(ctx, call.name, call.arguments)
                tool_errors += result.error is not None
                yield ToolFinished(
                    call_id=call.id, tool=call.name, label=result.label, hits=result.hits, error=result.error
                )
                while ctx.warnings:
                    code, message = ctx.warnings.pop(0)
                    yield Warning(code=code, message=message)
                history.append(ChatMessage(role="tool", content=result.content, tool_call_id=call.id))
        outcome.exit_reason = "max_steps"
