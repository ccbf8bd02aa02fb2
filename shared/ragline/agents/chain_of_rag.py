"""Agent ``chain_of_rag`` (DeepSearcher's ChainOfRAG): follow-up query → retrieve → intermediate answer.

Each hop the model writes the next simple question (naming what earlier answers found), the agent
searches it, and one planning call answers it from the passages, names the passages that support that
answer and judges whether the original question can now be answered; the chain stops there, or after
:data:`MAX_HOPS`. The final answer is written from the supporting passages of every hop, with the
intermediate answers as notes.

Offline (no model endpoint) the chain is one hop: the question itself, every passage found kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, Field

from ragline.agents.asking import render_conversation
from ragline.agents.base import AgentDeps, LoopOutcome
from ragline.agents.events import RunEvent
from ragline.agents.planned import Planner, Searches, answer, last_user, project, unique
from ragline.agents.prompts import FOLLOW_UP_PROMPT, INTERMEDIATE_PROMPT
from ragline.agents.tools import ToolContext
from ragline.domain.chat import ChatMessage
from ragline.domain.retrieval import Evidence

MAX_HOPS = 4
NOTE_CHARS = 500
"""Characters of each intermediate answer kept in the notes."""


class FollowUp(BaseModel):
    query: str = Field(min_length=1, max_length=1000)


class Intermediate(BaseModel):
    answer: str = Field(default="", max_length=5000)
    supportingIds: list[str] = Field(default_factory=list, max_length=500)
    questionAnswered: bool = False


@dataclass
class Hop:
    query: str
    answer: str
    supporting: list[Evidence]


class ChainOfRagAgent:
    name: ClassVar[str] = "chain_of_rag"
    description: ClassVar[str] = (
        "Follows a chain of facts one step at a time: asks one simple follow-up question, answers it from"
        " the documents, and uses that answer to ask the next (up to four hops), keeping the passages"
        " that support each step. Best for multi-hop questions, where what to look up next depends on"
        ' an earlier answer ("the warranty of the model the shop recommends for commuting").'
    )
    uses_tools: ClassVar[bool] = False

    def __init__(self, deps: AgentDeps) -> None:
        self._deps = deps

    def run(
        self, conversation: Sequence[ChatMessage], ctx: ToolContext, outcome: LoopOutcome
    ) -> Iterator[RunEvent]:
        plan = Planner(self._deps, ctx)
        searches = Searches(ctx, self._deps.limits, "chain_of_rag")
        question = last_user(conversation)
        hops: list[Hop] = []
        retrieved: list[Evidence] = []
        for number in range(1, MAX_HOPS + 1):
            ctx.plan.step = number
            query = self._follow_up(plan, conversation, hops) if not plan.offline else question
            yield from plan.flush()
            if query is None:
                query = question if number == 1 else None
            if query is None or not searches.fresh([query]):
                break  # nothing new to ask: the chain has run its course
            searched = yield from searches.run([query])
            if not searched:
                break
            _, hits = searched[0]
            retrieved += hits
            if plan.offline:
                _add(hops, Hop(query, "", hits), ctx)
                break
            step = plan.ask_json(
                "intermediate answer",
                INTERMEDIATE_PROMPT,
                f"Original question: {question}\n\nIntermediate question: {query}\n\n"
                f"Passages:\n{project(hits)}",
                Intermediate,
            )
            yield from plan.flush()
            if step is None:
                _add(hops, Hop(query, "", hits), ctx)
                break
            wanted = set(step.supportingIds)
            _add(hops, Hop(query, step.answer.strip(), [e for e in hits if e.alias in wanted]), ctx)
            if step.questionAnswered:
                break
        evidence = unique([e for hop in hops for e in hop.supporting]) or unique(retrieved)
        yield from answer(self._deps, conversation, evidence, ctx, outcome, notes=_notes(hops))

    @staticmethod
    def _follow_up(plan: Planner, conversation: Sequence[ChatMessage], hops: Sequence[Hop]) -> str | None:
        parsed = plan.ask_json(
            "follow-up question",
            FOLLOW_UP_PROMPT,
            f"Conversation:\n{render_conversation(conversation)}\n\nIntermediate questions and answers so"
            f" far:\n{_qa(hops) or '(none yet)'}",
            FollowUp,
        )
        return parsed.query.strip() if parsed is not None and parsed.query.strip() else None


def _add(hops: list[Hop], hop: Hop, ctx: ToolContext) -> None:
    """``hop`` joins the chain, and the run's plan."""
    hops.append(hop)
    ctx.plan.hop(hop.query, hop.answer, [e.alias for e in hop.supporting])


def _qa(hops: Sequence[Hop]) -> str:
    return "\n".join(f"- Q: {h.query}\n  A: {h.answer[:NOTE_CHARS] or 'unknown'}" for h in hops)


def _notes(hops: Sequence[Hop]) -> str:
    """The intermediate answers, for the answer step's system message (none offline)."""
    answered = [h for h in hops if h.answer]
    if not answered:
        return ""
    return "Intermediate findings (from the search steps; cite the passages, not these notes):\n" + _qa(
        answered
    )
