"""One model turn, streamed the way every agent streams it: text through the markup filter (tool calls
written as text recognised, tool markup dropped), structured calls, the finish reason, and the turn's
tokens added to the run — estimated, with a warning, when the endpoint reports none."""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass

from ragline.agents.asking import estimated_usage
from ragline.agents.base import LoopOutcome
from ragline.agents.events import AnswerDelta, RunEvent, Warning
from ragline.agents.text_calls import MarkupFilter
from ragline.agents.tools import ToolContext
from ragline.domain.chat import (
    ChatMessage,
    ChatOptions,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallsReady,
    ToolSpec,
    TurnEnd,
)
from ragline.ports import ChatModel


@dataclass
class Turn:
    """What one model turn produced."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    finish: str = "stop"


def stream_turn(
    model: ChatModel,
    history: Sequence[ChatMessage],
    tools: Sequence[ToolSpec],
    options: ChatOptions,
    ctx: ToolContext,
    outcome: LoopOutcome,
    step: int,
) -> Generator[RunEvent, None, Turn]:
    """Stream one model turn: its text (through the markup filter), its calls (structured, or
    written as text), its finish reason; its tokens added to the run (estimated when the endpoint
    reports none)."""
    markup = MarkupFilter([t.name for t in tools])
    text: list[str] = []
    turn = Turn()
    reported = True
    for event in model.stream(history, tools, options):
        if isinstance(event, TextDelta):
            yield from _say(markup.feed(event.text), text, outcome)
        elif isinstance(event, ToolCallsReady):
            turn.calls = event.calls
        elif isinstance(event, TokenUsage):
            reported = event.reported
            ctx.usage.add(event.as_run_usage())
        elif isinstance(event, TurnEnd):
            turn.finish = event.finish_reason
    yield from _say(markup.close(), text, outcome)
    turn.text = "".join(text)
    if not reported:
        estimate = estimated_usage(history, turn.text + "".join(c.arguments for c in turn.calls))
        ctx.usage.add(estimate)
        if step == 0:
            yield Warning(
                code="usage_estimated",
                message="the model endpoint reports no token counts; this run's tokens are estimated",
            )
    if markup.removed:
        yield Warning(
            code="tool_markup_removed",
            message=f"{markup.removed} block(s) of tool markup the model wrote as text were removed",
        )
    if not turn.calls and markup.calls:
        turn.calls = tuple(
            ToolCall(id=f"text_call_{step}_{i}", name=c.name, arguments=c.arguments)
            for i, c in enumerate(markup.calls)
        )
        yield Warning(
            code="text_tool_calls",
            message=f"the model wrote {len(turn.calls)} tool call(s) as text instead of calling the"
            " tool; they were run",
        )
    return turn


def cut_short(turn: Turn, cap: int) -> tuple[str, Warning] | None:
    """The exit reason and warning of a turn the endpoint stopped (``length``, ``content_filter``)."""
    if turn.finish == "length":
        message = f"the model's turn was cut off at its {cap}-token cap; the answer is incomplete"
        return "max_output_tokens", Warning(code="answer_truncated", message=message)
    if turn.finish == "content_filter":
        message = "the model endpoint's content filter stopped the answer"
        return "content_filter", Warning(code="content_filtered", message=message)
    return None


def _say(safe: str, text: list[str], outcome: LoopOutcome) -> Iterator[RunEvent]:
    """Stream text the markup filter let through, and keep it for the turn and the answer."""
    if safe:
        text.append(safe)
        outcome.answer += safe
        yield AnswerDelta(text=safe)
