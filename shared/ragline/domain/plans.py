"""A run's query plan: every retrieval it ran, and the choices that led to them.

Every agent's result (chat, streamed or not, and hosting search) carries one :class:`QueryPlan`: the
router's choices, the agent's own structure (``deep_search``'s sub-questions and rounds,
``chain_of_rag``'s hops, hosting search's rounds) and each retrieval with what it asked for and what
it got, tagged with the step that issued it. It is built by
:class:`ragline.agents.plan_recorder.PlanRecorder` as the run goes, so it says what ran, not what was
meant to. Bounded: a run's retrievals are bounded by its tool budget (hosting search: by its rounds,
queries and namespaces), every text in it is cut to :data:`PLAN_TEXT_CHARS`, and a model's filter is
at most its tool call's 8,000 characters.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from ragline.domain.api_base import ApiModel
from ragline.domain.models import SearchMode

PLAN_TEXT_CHARS = 1000
"""A query, question or intermediate answer in a plan is cut to this many characters (a search takes a
query of at most as many)."""

PlanIssuer = Literal["tool_loop", "deep_search", "chain_of_rag", "hosting_search"]
"""What issued a retrieval: the model calling ``search`` in the tool loop (``agentic``), or a planned
agent searching for the model."""


def cut(text: str, limit: int = PLAN_TEXT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit]


class PlanModel(ApiModel):
    """A part of a plan: its fields' docstrings are their descriptions in the OpenAPI document (and so
    in the TypeScript client's types)."""

    model_config = ConfigDict(use_attribute_docstrings=True)


class PlannedRetrieval(PlanModel):
    """One search as it ran."""

    step: int = Field(ge=1)
    """The agent step that issued it, from 1: the model turn (tool loop), the round (``deep_search``,
    hosting search) or the hop (``chain_of_rag``)."""
    issued_by: PlanIssuer
    """``tool_loop``: the model's own ``search`` call; else the agent that searched for the model."""
    query: str
    """The text searched (cut to 1,000 characters)."""
    mode: SearchMode
    """The mode that ran (a store without keyword search runs ``semantic``)."""
    namespaces: list[str]
    """The namespaces searched."""
    filter: dict[str, Any] | None = None
    """The model's own narrowing (a ``search`` call's ``filter``, as it wrote it; ANDed with the
    request's filter, which is not repeated here); null when it gave none."""
    k: int
    """Hits kept (after the rerank, when there is one)."""
    candidates: int
    """Hits fetched for the ``k`` to be chosen from."""
    hits: int
    """Hits found (0 when the search failed)."""
    rerank: str | None = None
    """The reranker that ordered the hits; null when not reranked (``fast``, ``keyword``, no reranker, or
    a failed rerank that kept fused order, with a ``rerank_failed`` warning)."""
    ms: float
    """Wall time of the search, in milliseconds."""
    error: str | None = None
    """The error code when the search failed (``invalid_request``: the model's filter or query was
    refused, a tool error it can correct; any other ended the run)."""


class PlanRound(PlanModel):
    """One round of a planned loop (``deep_search``, hosting search)."""

    round: int
    """From 1."""
    queries: list[str]
    """The round's queries, as searched."""
    kept: int | None = None
    """``deep_search``: the passages of the round judged to help (kept for the answer)."""
    new_chunks: int | None = None
    """Hosting search: the chunks the round added to the pool."""
    can_answer: bool | None = None
    """Hosting search: the planner's verdict after the round (null: not evaluated)."""


class PlanHop(PlanModel):
    """One hop of ``chain_of_rag``."""

    hop: int
    """From 1."""
    question: str
    """The follow-up question searched."""
    answer: str
    """The intermediate answer written from its passages (empty when none was: offline, or a reply
    that held no valid JSON)."""
    supporting_ids: list[str] = Field(default_factory=list)
    """The ids of the chunks that support the answer (the ids the final answer cites)."""


class PlanRoute(PlanModel):
    """The RAG router's choice (``agent: "auto"``), as the ``route`` event streamed it."""

    agent: str
    reason: str
    fallback: bool = False


class PlanCollections(PlanModel):
    """The collection router's choice (no ``namespaces``, or ``"auto"``), as the ``collections`` event
    streamed it."""

    namespaces: list[str]
    reason: str


class QueryPlan(PlanModel):
    """How a run searched: the choices made, the agent's steps and every retrieval, in order."""

    agent: str
    """The agent that ran (``hosting_search`` for hosting search); the requested one when the run
    stopped before an agent ran (``auto`` when it stopped before routing)."""
    route: PlanRoute | None = None
    """The RAG router's choice; null when the request named the agent."""
    collections: PlanCollections | None = None
    """The collection router's choice; null when the request named the namespaces."""
    sub_questions: list[str] = Field(default_factory=list)
    """``deep_search``: the sub-questions the question was split into."""
    rounds: list[PlanRound] = Field(default_factory=list)
    """``deep_search`` and hosting search: each round's queries and what came of them."""
    hops: list[PlanHop] = Field(default_factory=list)
    """``chain_of_rag``: each hop's question and intermediate answer."""
    retrievals: list[PlannedRetrieval] = Field(default_factory=list)
    """Every search of the run, in the order issued (a round's run at once)."""
