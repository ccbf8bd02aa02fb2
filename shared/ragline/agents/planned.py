"""The steps the planned agents (``deep_search``, ``chain_of_rag``) share: planning calls charged to the
run and bounded by its budget, searches run for the model (concurrently, each streamed as a
``tool_start``/``tool_end`` pair), and the final answer written from the evidence they kept.

The answer step shows the model the kept passages as the result of one ``search`` call, the shape
every tool-calling model is trained to read and cite, and offers no tools: the model only writes.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel

from ragline.agents.asking import ask, first_json
from ragline.agents.base import AgentDeps, LoopLimits, LoopOutcome
from ragline.agents.events import RunEvent, ToolFinished, ToolStarted, Warning
from ragline.agents.tools import ToolContext, render
from ragline.agents.turns import cut_short, stream_turn
from ragline.domain.chat import ChatMessage, ChatOptions, ToolCall
from ragline.domain.models import SearchMode
from ragline.domain.plans import PlanIssuer
from ragline.domain.retrieval import Evidence, RetrievalResult
from ragline.domain.terms import normalise_query

T = TypeVar("T", bound=BaseModel)

PLANNING_TOKENS = 512
"""Output tokens one planning call may write."""
ANSWER_RESERVE = 1024
"""Output tokens planning leaves for the answer (half the run's budget when that is smaller)."""
SEARCH_WORKERS = 4
PROJECTED_CHARS = 600
"""Characters of each passage a planning call sees."""
PROJECTED_PASSAGES = 30
MAX_QUERY_CHARS = 1000
"""A planned search query is cut to this many characters (the model's ``search`` takes as many)."""


@dataclass
class Planner:
    """Planning calls of one run: charged to the run, each bounded, all stopped once only the answer's
    reserve of the output budget is left. Replies that hold no valid JSON become warnings."""

    deps: AgentDeps
    ctx: ToolContext
    notices: list[Warning] = field(default_factory=list)

    @property
    def offline(self) -> bool:
        return self.deps.planner is None

    def _room(self) -> int:
        budget = self.deps.limits.max_output_tokens
        reserve = min(ANSWER_RESERVE, budget // 2)
        return budget - reserve - self.ctx.usage.llm_output_tokens

    def ask_json(self, step: str, system: str, user: str, shape: type[T]) -> T | None:
        """The model's reply to one planning question, parsed as ``shape``; None when offline, when the
        budget leaves no room for planning, or when the reply holds no valid JSON (with a warning)."""
        model = self.deps.planner
        room = self._room()
        if model is None:
            return None
        if room <= 0:
            self.warn("planning_budget", f"{step} skipped: the run's output budget is kept for the answer")
            return None
        reply = ask(model, system, user, max_output_tokens=min(PLANNING_TOKENS, room))
        self.ctx.usage.llm_input_tokens += reply.usage.llm_input_tokens
        self.ctx.usage.llm_output_tokens += reply.usage.llm_output_tokens
        parsed = first_json(reply.text, shape)
        if parsed is None:
            self.warn(
                "planner_reply_invalid",
                f"the model's {step} reply held no valid JSON ({len(reply.text)} chars)",
            )
        return parsed

    def warn(self, code: str, message: str) -> None:
        self.notices.append(Warning(code=code, message=message))

    def flush(self) -> Iterator[RunEvent]:
        while self.notices:
            yield self.notices.pop(0)


@dataclass
class Searches:
    """Searches an agent runs for the model, within the run's tool-call and evidence budgets; each is
    recorded in the run's plan as ``issued_by`` at the plan's current step (the agent's round or hop)."""

    ctx: ToolContext
    limits: LoopLimits
    issued_by: PlanIssuer
    done: int = 0
    asked: set[str] = field(default_factory=set)

    def fresh(self, queries: Sequence[str]) -> list[str]:
        """The queries not searched yet in this run (normalised), in order, once each."""
        out: dict[str, str] = {}
        for q in queries:
            text = " ".join(q.split())[:MAX_QUERY_CHARS]
            key = normalise_query(text)
            if key and key not in self.asked and key not in out:
                out[key] = text
        return list(out.values())

    def run(self, queries: Sequence[str]) -> Generator[RunEvent, None, list[tuple[str, list[Evidence]]]]:
        """Search the fresh ``queries`` at once (within the budget); each query searched, with its
        evidence, in order."""
        fresh = self.fresh(queries)
        room = self.limits.max_tool_calls_per_run - self.done
        if len(self.ctx.evidence) >= self.limits.evidence_budget:
            room = 0
        todo = fresh[: max(0, room)]
        if len(todo) < len(fresh):
            yield Warning(
                code="tool_calls_refused",
                message=f"{len(fresh) - len(todo)} planned searches were not run: the run's tool budget"
                " is spent",
            )
        if not todo:
            return []
        self.asked.update(normalise_query(q) for q in todo)
        self.done += len(todo)
        first = self.done - len(todo)
        ids = [f"search_{first + i}" for i in range(len(todo))]
        for call_id, q in zip(ids, todo, strict=True):
            yield ToolStarted(call_id=call_id, tool="search", label=q[:120])
        ctx = self.ctx
        mode: SearchMode = "hybrid" if ctx.semantic_as_hybrid else "semantic"
        calls = [ctx.planned_search(q, mode=mode, issued_by=self.issued_by) for q in todo]
        with ThreadPoolExecutor(max_workers=min(SEARCH_WORKERS, len(todo))) as pool:
            futures = [pool.submit(call) for call in calls]
            results: list[RetrievalResult] = [f.result() for f in futures]
        found: list[tuple[str, list[Evidence]]] = []
        notices: dict[str, str] = {}
        for call_id, q, result in zip(ids, todo, results, strict=True):
            items = [ctx.evidence.add(h.scope, h.hit.chunk, h.hit) for h in result.hits]
            found.append((q, items))
            notices.update((n.code, n.message) for n in result.notices)
            yield ToolFinished(call_id=call_id, tool="search", label=q[:120], hits=len(items))
        for code, message in notices.items():
            yield Warning(code=code, message=message)
        return found


def project(items: Sequence[Evidence]) -> str:
    """Passages as a planning call sees them: id, file and the start of the text."""
    return json.dumps(
        [
            {"id": e.alias, "file": e.chunk.metadata.filename, "text": e.chunk.text[:PROJECTED_CHARS]}
            for e in items[:PROJECTED_PASSAGES]
        ],
        ensure_ascii=False,
    )


def unique(items: Sequence[Evidence]) -> list[Evidence]:
    """Each passage once, where it first appears."""
    return list({e.alias: e for e in items}.values())


def last_user(conversation: Sequence[ChatMessage]) -> str:
    return next(m.content for m in reversed(conversation) if m.role == "user")


def answer(
    deps: AgentDeps,
    conversation: Sequence[ChatMessage],
    evidence: Sequence[Evidence],
    ctx: ToolContext,
    outcome: LoopOutcome,
    *,
    notes: str = "",
) -> Iterator[RunEvent]:
    """Stream the answer to the conversation from ``evidence`` (and the agent's ``notes``)."""
    tokens = deps.limits.max_output_tokens - ctx.usage.llm_output_tokens
    if tokens <= 0:
        outcome.exit_reason = "max_output_tokens"
        return
    system, *turns = conversation
    if notes:
        system = system.model_copy(update={"content": f"{system.content}\n\n{notes}"})
    call = ToolCall(id="evidence", name="search", arguments=json.dumps({"query": last_user(conversation)}))
    history = [
        system,
        *turns,
        ChatMessage(role="assistant", content="", tool_calls=(call,)),
        ChatMessage(role="tool", content=render(evidence, ctx.layout), tool_call_id=call.id),
    ]
    options = ChatOptions(max_output_tokens=min(deps.limits.turn_output_tokens, tokens))
    turn = yield from stream_turn(deps.model, history, [], options, ctx, outcome, step=0)
    stopped = cut_short(turn, options.max_output_tokens)
    if stopped is not None:
        outcome.exit_reason, warning = stopped
        yield warning
    else:
        outcome.exit_reason = "answered"
