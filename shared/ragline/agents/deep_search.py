"""Agent ``deep_search`` (DeepSearcher's DeepSearch): decompose → search all at once → filter → reflect.

Round 1 searches up to :data:`MAX_SUB_QUERIES` sub-questions of the last user message, concurrently in
every namespace of the run; one planning call per round keeps the passages that help (not one call per
passage); a reflection call asks for the gap queries still missing, which the next round searches (at
most :data:`MAX_ROUNDS`). The answer is written from every passage kept.

Offline (no model endpoint) the question is split at its clauses and conjunctions, a passage is kept
when it shares a content word with the question or its sub-question, and there is no reflection (one
round).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import ClassVar

from pydantic import BaseModel, Field

from ragline.agents.asking import render_conversation
from ragline.agents.base import AgentDeps, LoopOutcome
from ragline.agents.events import RunEvent
from ragline.agents.planned import (
    MAX_QUERY_CHARS,
    PROJECTED_PASSAGES,
    Planner,
    Searches,
    answer,
    last_user,
    project,
    unique,
)
from ragline.agents.prompts import DECOMPOSE_PROMPT, REFLECT_PROMPT, RELEVANCE_PROMPT
from ragline.agents.tools import ToolContext
from ragline.domain.chat import ChatMessage
from ragline.domain.plans import PlanRound, cut
from ragline.domain.retrieval import Evidence
from ragline.domain.terms import content_words, stems

MAX_SUB_QUERIES = 4
MAX_GAP_QUERIES = 3
MAX_ROUNDS = 3
_CLAUSES = re.compile(
    r"[?;!\n]+|,\s*(?:and|or|but|also|as well as)?\s*|\s+(?:and|or|but|also|as well as|versus|vs\.?)\s+", re.I
)


class SubQueries(BaseModel):
    subQueries: list[str] = Field(max_length=50)


class Relevant(BaseModel):
    relevant: list[str] = Field(max_length=500)


class GapQueries(BaseModel):
    gapQueries: list[str] = Field(max_length=50)


def split_clauses(question: str) -> list[str]:
    """The question's parts, at clause marks and conjunctions. A part with fewer than two content words
    joins a neighbour (the part before it; the first part, the one after), so no sub-query loses its
    subject; past :data:`MAX_SUB_QUERIES` parts the last is kept (it is usually the question itself).
    One part: the question as written."""
    text = " ".join(question.split())[:MAX_QUERY_CHARS]
    parts: list[str] = []
    pending = ""
    for raw in _CLAUSES.split(text):
        piece = f"{pending} {raw.strip(' ,.')}".strip()
        if not piece:
            continue
        short = len(content_words(piece)) < 2
        if short and not parts:
            pending = piece
            continue
        pending = ""
        if short:
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    if pending:
        parts.append(pending)
    kept = [p for p in parts if content_words(p)]
    if len(kept) > MAX_SUB_QUERIES:
        kept = [*kept[: MAX_SUB_QUERIES - 1], kept[-1]]
    return kept if len(kept) > 1 else [text]


def interleave(found: Sequence[tuple[str, list[Evidence]]]) -> list[Evidence]:
    """Every query's hits, rank by rank (each query's best first), each passage once: so a cut keeps
    the top of every sub-query, not all of the first one."""
    ranked = [items for _, items in found]
    order = [
        items[rank]
        for rank in range(max(map(len, ranked), default=0))
        for items in ranked
        if rank < len(items)
    ]
    return unique(order)


class DeepSearchAgent:
    name: ClassVar[str] = "deep_search"
    description: ClassVar[str] = (
        "Breaks a broad or many-sided question into up to four sub-questions, searches them all at once,"
        " keeps only the passages that help, and searches again for whatever is still missing (up to"
        " three rounds) before writing one answer. Best for comparisons, overviews across several"
        " documents, and questions with several independent parts."
    )
    uses_tools: ClassVar[bool] = False

    def __init__(self, deps: AgentDeps) -> None:
        self._deps = deps

    def run(
        self, conversation: Sequence[ChatMessage], ctx: ToolContext, outcome: LoopOutcome
    ) -> Iterator[RunEvent]:
        plan = Planner(self._deps, ctx)
        searches = Searches(ctx, self._deps.limits, "deep_search")
        question = last_user(conversation)
        queries = self._decompose(plan, conversation, question)
        ctx.plan.sub_questions = list(queries)
        yield from plan.flush()
        kept: list[Evidence] = []
        judged: set[str] = set()
        searched: list[str] = []
        for round_number in range(1, MAX_ROUNDS + 1):
            ctx.plan.step = round_number
            found = yield from searches.run(queries)
            if not found:
                break
            searched += [q for q, _ in found]
            pool = [e for e in interleave(found) if e.alias not in judged]
            if not plan.offline:
                pool = pool[:PROJECTED_PASSAGES]  # what one relevance call can be shown
            judged.update(e.alias for e in pool)
            helped = self._filter(plan, question, found, pool)
            kept += helped
            ctx.plan.rounds.append(
                PlanRound(round=round_number, queries=[cut(q) for q, _ in found], kept=len(helped))
            )
            yield from plan.flush()
            if round_number == MAX_ROUNDS or plan.offline:
                break
            queries = self._reflect(plan, question, searched, kept)
            yield from plan.flush()
            if not searches.fresh(queries):
                break
        yield from answer(self._deps, conversation, unique(kept), ctx, outcome)

    @staticmethod
    def _decompose(plan: Planner, conversation: Sequence[ChatMessage], question: str) -> list[str]:
        parsed = plan.ask_json(
            "decomposition",
            DECOMPOSE_PROMPT,
            f"Conversation:\n{render_conversation(conversation)}",
            SubQueries,
        )
        if parsed is None:
            return split_clauses(question)
        queries = [q.strip()[:MAX_QUERY_CHARS] for q in parsed.subQueries if isinstance(q, str) and q.strip()]
        return queries[:MAX_SUB_QUERIES] or [question]

    @staticmethod
    def _filter(
        plan: Planner, question: str, found: list[tuple[str, list[Evidence]]], pool: list[Evidence]
    ) -> list[Evidence]:
        """The pool's passages that help; one planning call for the whole round."""
        if not pool:
            return []
        if not plan.offline:
            parsed = plan.ask_json(
                "relevance", RELEVANCE_PROMPT, f"Question: {question}\n\nPassages:\n{project(pool)}", Relevant
            )
            if parsed is not None:
                wanted = set(parsed.relevant)
                return [e for e in pool if e.alias in wanted]
            return pool  # no verdict: keep everything rather than lose evidence
        query_of = {e.alias: q for q, items in reversed(found) for e in items}  # the first query to find it
        asked = set(stems(question))
        return [e for e in pool if (asked | set(stems(query_of.get(e.alias, "")))) & set(stems(e.chunk.text))]

    @staticmethod
    def _reflect(plan: Planner, question: str, asked: list[str], kept: list[Evidence]) -> list[str]:
        tried = "\n".join(f"- {q}" for q in asked)
        parsed = plan.ask_json(
            "reflection",
            REFLECT_PROMPT,
            f"Question: {question}\n\nSearches run:\n{tried}\n\nRelevant passages:\n{project(kept)}",
            GapQueries,
        )
        if parsed is None:
            return []
        return [q.strip()[:MAX_QUERY_CHARS] for q in parsed.gapQueries if isinstance(q, str) and q.strip()][
            :MAX_GAP_QUERIES
        ]
