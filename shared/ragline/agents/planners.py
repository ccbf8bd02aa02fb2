"""Planners for hosting search: a model behind any OpenAI-compatible endpoint, or offline heuristics.

The model's replies are parsed leniently but strictly typed: a ``<think>`` block and prose around the
JSON are tolerated, the first JSON object that validates is used (pydantic), and a reply that holds
none is a warning — no queries (the round adds nothing new), or ``canAnswer: false`` — never a crash.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from ragline.agents.asking import ask, first_json, render_conversation
from ragline.agents.hosting_search import Plan, PlannedQuery, Verdict
from ragline.agents.prompts import EVALUATE_QUERIES_PROMPT, GENERATE_QUERIES_PROMPT
from ragline.domain.chat import ChatMessage
from ragline.domain.models import RunUsage
from ragline.domain.retrieval import Notice, RetrievedHit
from ragline.domain.terms import content_words, stems
from ragline.ports import ChatModel

PROJECTED_CHUNKS = 20
"""Pooled chunks the evaluation sees, best first, each cut to ``PROJECTED_CHARS``."""
PROJECTED_CHARS = 600


class GeneratedQuery(BaseModel):
    type: Literal["keyword", "semantic"]
    query: str = Field(min_length=1, max_length=1000)


class GeneratedQueries(BaseModel):
    queries: list[Any] = Field(max_length=100)


class Evaluation(BaseModel):
    canAnswer: bool


def project(pool: Sequence[RetrievedHit]) -> str:
    """The pool as the evaluation sees it: a compact JSON list of the best chunks."""
    return json.dumps(
        [
            {
                "id": str(h.key),
                "file": h.hit.chunk.metadata.filename,
                "text": h.hit.chunk.text[:PROJECTED_CHARS],
            }
            for h in pool[:PROJECTED_CHUNKS]
        ],
        ensure_ascii=False,
    )


class LlmPlanner:
    """Asks a chat model (no tools) for the queries and the verdict."""

    def __init__(self, model: ChatModel, *, max_output_tokens: int = 512) -> None:
        self._model = model
        self._max_output_tokens = max_output_tokens
        self.name = model.name

    def generate(
        self, conversation: Sequence[ChatMessage], tried: Sequence[PlannedQuery], pool: Sequence[RetrievedHit]
    ) -> Plan:
        tried_text = "\n".join(f"- {q.type}: {q.query}" for q in tried) or "(none yet)"
        reply, tokens = self._ask(
            GENERATE_QUERIES_PROMPT,
            f"Conversation:\n{render_conversation(conversation)}\n\nQueries already tried:\n{tried_text}",
        )
        parsed = first_json(reply, GeneratedQueries)
        if parsed is None:
            return Plan([], tokens, [_invalid("query generation", reply)])
        queries = []
        for item in parsed.queries:
            try:
                q = GeneratedQuery.model_validate(item)
            except ValidationError:
                continue  # one bad entry does not spoil the others
            queries.append(PlannedQuery(q.type, q.query.strip()))
        return Plan(queries, tokens)

    def evaluate(self, conversation: Sequence[ChatMessage], pool: Sequence[RetrievedHit]) -> Verdict:
        reply, tokens = self._ask(
            EVALUATE_QUERIES_PROMPT,
            f"Conversation:\n{render_conversation(conversation)}\n\nPassages:\n{project(pool)}",
        )
        parsed = first_json(reply, Evaluation)
        if parsed is None:
            return Verdict(False, tokens, [_invalid("evaluation", reply)])
        return Verdict(parsed.canAnswer, tokens)

    def _ask(self, system: str, user: str) -> tuple[str, RunUsage]:
        reply = ask(self._model, system, user, max_output_tokens=self._max_output_tokens)
        return reply.text, reply.usage


def _invalid(step: str, reply: str) -> Notice:
    return Notice(
        "planner_reply_invalid", f"the model's {step} reply held no valid JSON ({len(reply)} characters)"
    )


class OfflinePlanner:
    """The loop with no model: queries from the conversation's content words, later rounds adding the
    pool's recurring terms the queries have not covered yet; ``canAnswer`` when the best chunks cover
    the question's content words."""

    name = "extractive (offline, no LLM)"
    COVERED = 0.75
    """Share of the question's content words the top chunks must hold together..."""
    BEST_COVERS = 0.5
    """...and the best single chunk alone."""
    TOP = 5

    def generate(
        self, conversation: Sequence[ChatMessage], tried: Sequence[PlannedQuery], pool: Sequence[RetrievedHit]
    ) -> Plan:
        users = [m.content for m in conversation if m.role == "user"]
        words = content_words(users[-1])
        queries = []
        if words:
            queries.append(PlannedQuery("keyword", " ".join(words)))
            context = content_words(users[-2]) if len(users) > 1 else []
            queries.append(PlannedQuery("semantic", " ".join(dict.fromkeys([*context, *words]))))
        if pool:
            used = {s for q in tried for s in stems(q.query)} | set(stems(" ".join(words)))
            counts = Counter(
                w for h in pool[: self.TOP * 2] for w in dict.fromkeys(content_words(h.hit.chunk.text))
            )
            new = [w for w, n in counts.most_common() if n > 1 and w[:6] not in used and not w.isdigit()][:3]
            if new:
                queries.append(PlannedQuery("keyword", " ".join([*words, *new])))
                queries.append(PlannedQuery("semantic", " ".join([*words, *new])))
        return Plan(queries)

    def evaluate(self, conversation: Sequence[ChatMessage], pool: Sequence[RetrievedHit]) -> Verdict:
        question = set(stems(next(m.content for m in reversed(conversation) if m.role == "user")))
        if not pool:
            return Verdict(False)
        if not question:
            return Verdict(True)
        covers = [question & set(stems(h.hit.chunk.text)) for h in pool[: self.TOP]]
        together = len(set().union(*covers)) / len(question)
        best = max(len(c) for c in covers) / len(question)
        return Verdict(together >= self.COVERED and best >= self.BEST_COVERS)
