"""The agentic tool loop: the model searches and expands until it can answer, within hard bounds.

Bounds: ``max_steps`` model turns (20), ``max_output_tokens`` in total (5000), and a tool budget checked
before *every* call, not only between turns — ``max_tool_calls_per_turn`` (8) and
``max_tool_calls_per_run`` (24) calls, ``evidence_budget`` chunks retrieved (60) and
``max_tool_errors`` failed calls (3). A call over the budget is not run: the model gets a tool error it
can read instead. Once the run's budget is spent, tools are withdrawn and the model must answer. The
reason the loop ended is recorded on the final event.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

from ragline.agents.base import AgentDeps, LoopLimits, LoopOutcome
from ragline.agents.events import RunEvent, ToolFinished, ToolStarted, Warning
from ragline.agents.tool_arguments import echoed
from ragline.agents.tools import ToolContext, ToolResult, label_for, run_tool
from ragline.agents.turns import cut_short, stream_turn
from ragline.domain.chat import (
    ChatMessage,
    ChatOptions,
    ToolCall,
    ToolChoice,
)

UNREADABLE_CALL = (
    "Your last turn ended in a tool call that could not be read. Call the tool again through the"
    " tool-calling interface with valid JSON arguments, or answer if you have enough evidence."
)


@dataclass
class ToolBudget:
    """What a run has spent on tools, and whether the next call may still run."""

    limits: LoopLimits
    calls: int = 0
    errors: int = 0

    def spent_reason(self, ctx: ToolContext) -> str | None:
        """Why the run may call no more tools (also the loop's exit reason), or None."""
        if len(ctx.evidence) >= self.limits.evidence_budget:
            return "evidence_budget"
        if self.calls >= self.limits.max_tool_calls_per_run:
            return "max_tool_calls"
        if self.errors >= self.limits.max_tool_errors:
            return "max_tool_errors"
        return None

    def refusal(self, ctx: ToolContext, index: int) -> str | None:
        """Why the turn's call number ``index`` (from 0) may not run, or None (a spent run budget is
        named first: the model should not retry that call next turn)."""
        spent = self.spent_reason(ctx)
        if spent is None and index >= self.limits.max_tool_calls_per_turn:
            return "max_tool_calls_per_turn"
        return spent

    def record(self, result: ToolResult) -> None:
        self.calls += 1
        self.errors += result.error is not None

    def explain(self, reason: str) -> str:
        """The tool error the model reads for a call that was not run."""
        limits = self.limits
        return {
            "max_tool_calls_per_turn": f"not run: at most {limits.max_tool_calls_per_turn} tool calls per"
            " turn; call it again in your next turn if you still need it",
            "max_tool_calls": f"not run: this run's {limits.max_tool_calls_per_run} tool calls are used"
            " up; answer with the evidence you have",
            "evidence_budget": "not run: enough evidence was retrieved; answer with the evidence you have",
            "max_tool_errors": "not run: too many tool calls failed; answer with the evidence you have",
        }[reason]


class AgenticAgent:
    """Agent ``agentic``: a bounded search/expand tool loop driven by the model."""

    name: ClassVar[str] = "agentic"
    description: ClassVar[str] = (
        "Searches the documents itself, step by step, choosing each query from what the previous ones"
        " found and reading around a passage when it needs more context. Best for most questions: a"
        " fact, an explanation, a how-to, or a follow-up in a conversation."
    )
    uses_tools: ClassVar[bool] = True

    def __init__(self, deps: AgentDeps) -> None:
        self._model = deps.model
        self._limits = deps.limits

    def run(
        self, conversation: Sequence[ChatMessage], ctx: ToolContext, outcome: LoopOutcome
    ) -> Iterator[RunEvent]:
        """Stream the run; ``outcome`` is filled in as it goes (also when the consumer stops early).

        Text passes through a :class:`MarkupFilter`: tool calls a model writes as text (weak open
        models do) are run like real ones, with a warning, and tool markup never reaches the client.
        """
        history = list(conversation)
        limits = self._limits
        budget = ToolBudget(limits)
        for step in range(limits.max_steps):
            remaining = limits.max_output_tokens - ctx.usage.llm_output_tokens
            if remaining <= 0:
                outcome.exit_reason = "max_output_tokens"
                return
            braked = budget.spent_reason(ctx)
            tools = [] if braked else ctx.specs()
            # A first turn that must search: weak models otherwise answer from memory (issue 17).
            choice: ToolChoice | None = "required" if tools and step == 0 and ctx.search_first else None
            options = ChatOptions(
                max_output_tokens=min(limits.turn_output_tokens, remaining), tool_choice=choice
            )
            turn = yield from stream_turn(self._model, history, tools, options, ctx, outcome, step)
            stopped = cut_short(turn, options.max_output_tokens)
            if stopped is not None and turn.calls and turn.finish == "length":
                # A weak model writes its call as text, then keeps writing (made-up results) until the
                # cap: the calls read before the cut are whole, so they run; what followed is dropped.
                cap = options.max_output_tokens
                yield Warning(
                    code="turn_cut_after_tool_call",
                    message=f"the model kept writing after its tool call until its {cap}-token cap;"
                    " the call was run and the rest of the turn dropped",
                )
                turn.text = ""
            elif stopped is not None:
                outcome.exit_reason, warning = stopped
                yield warning
                return
            if not turn.calls:
                if turn.finish == "tool_calls" and tools:  # it meant to call a tool, but sent nothing usable
                    yield Warning(
                        code="tool_call_unreadable", message="the model's tool call could not be read"
                    )
                    history.append(ChatMessage(role="assistant", content=turn.text))
                    history.append(ChatMessage(role="user", content=UNREADABLE_CALL))
                    continue
                outcome.exit_reason = braked or "answered"
                return
            calls = tuple(map(echoed, turn.calls))  # what the model is shown of its own calls
            history.append(ChatMessage(role="assistant", content=turn.text, tool_calls=calls))
            ctx.plan.step = step + 1  # the plan numbers the turn's searches from 1
            yield from self._run_calls(turn.calls, ctx, budget, history)
        outcome.exit_reason = "max_steps"

    def _run_calls(
        self, calls: Sequence[ToolCall], ctx: ToolContext, budget: ToolBudget, history: list[ChatMessage]
    ) -> Iterator[RunEvent]:
        """Run one turn's calls in order, each only while the budget allows it.

        Every call gets a tool reply (the model's API requires one per call id): a refused call's is an
        error the model can act on, so a turn of 150 ``search`` calls costs at most the per-turn cap.
        """
        refused: dict[str, int] = {}
        for index, call in enumerate(calls):
            reason = budget.refusal(ctx, index)
            if reason is not None:
                refused[reason] = refused.get(reason, 0) + 1
                content = json.dumps({"error": budget.explain(reason)})
                history.append(ChatMessage(role="tool", content=content, tool_call_id=call.id))
                continue
            yield ToolStarted(call_id=call.id, tool=call.name, label=label_for(call.name, call.arguments))
            result = run_tool(ctx, call.name, call.arguments)
            budget.record(result)
            yield ToolFinished(
                call_id=call.id, tool=call.name, label=result.label, hits=result.hits, error=result.error
            )
            while ctx.warnings:
                code, message = ctx.warnings.pop(0)
                yield Warning(code=code, message=message)
            history.append(ChatMessage(role="tool", content=result.content, tool_call_id=call.id))
        if refused:
            yield Warning(
                code="tool_calls_refused",
                message=f"{sum(refused.values())} of {len(calls)} tool calls in one turn were not run"
                f" ({', '.join(sorted(refused))})",
                details={"refused": refused},
            )
