"""Hosting search: Agentset's fixed generate → retrieve → self-evaluate loop, returning chunks, not text.

Each round a :class:`Planner` proposes queries (round 1 also searches the last user message as
written); the round's queries run concurrently in every namespace of the run; the hits join one
pool, fused across queries by reciprocal rank and deduplicated by chunk and by text; then the planner
judges whether the pool can answer the conversation. The loop stops on ``can_answer``,
``token_budget`` (the planner's tokens, in and out), ``max_evals``, ``no_new_queries`` (every proposal
was tried already) or ``error`` (the model failed: the pool found so far is still returned, with a
warning). The caller reranks the pool to ``top_k``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

from ragline import errors
from ragline.agents.plan_recorder import PlanRecorder
from ragline.domain.api import HostingExit, HostingQueryType
from ragline.domain.chat import ChatMessage
from ragline.domain.models import RunUsage, SearchMode, TenantScope
from ragline.domain.plans import PlanRound, QueryPlan, cut
from ragline.domain.retrieval import ChunkKey, Notice, RetrievalResult, RetrievedHit, deduplicate
from ragline.domain.terms import normalise_query

RRF_K = 60
MAX_QUERIES_PER_ROUND = 5
"""Generated queries kept per round (the last user message of round 1 comes on top)."""


@dataclass(frozen=True)
class PlannedQuery:
    type: HostingQueryType
    query: str

    @property
    def key(self) -> tuple[str, str]:
        return self.type, normalise_query(self.query)


@dataclass
class Plan:
    queries: list[PlannedQuery]
    tokens: RunUsage = field(default_factory=RunUsage)
    notices: list[Notice] = field(default_factory=list)


@dataclass
class Verdict:
    can_answer: bool
    tokens: RunUsage = field(default_factory=RunUsage)
    notices: list[Notice] = field(default_factory=list)


class Planner(Protocol):
    """Proposes queries and judges the pool: a model behind an endpoint, or the offline heuristics."""

    name: str

    def generate(
        self, conversation: Sequence[ChatMessage], tried: Sequence[PlannedQuery], pool: Sequence[RetrievedHit]
    ) -> Plan: ...

    def evaluate(self, conversation: Sequence[ChatMessage], pool: Sequence[RetrievedHit]) -> Verdict: ...


class ScopeRetriever(Protocol):
    """A retriever over one scope, used by one task (so its usage needs no lock)."""

    usage: RunUsage

    def search(
        self, text: str, *, mode: SearchMode = ..., candidates: int = ..., keep: int = ..., rerank: bool = ...
    ) -> RetrievalResult: ...


@dataclass(frozen=True)
class HostingLimits:
    max_evals: int = 3
    token_budget: int = 4096
    candidates: int = 20
    """Hits each query fetches per namespace."""
    workers: int = 8
    """The bounded pool the round's (query, namespace) searches share."""


@dataclass
class QueryRecord:
    round: int
    query: PlannedQuery
    hits: int = 0


@dataclass
class RoundRecord:
    round: int
    new_chunks: int = 0
    can_answer: bool | None = None
    tokens: int = 0


@dataclass
class HostingOutcome:
    usage: RunUsage
    """Everything the run spends (searches and planner tokens), added from the calling thread only."""
    queries: list[QueryRecord] = field(default_factory=list)
    rounds: list[RoundRecord] = field(default_factory=list)
    pool: list[RetrievedHit] = field(default_factory=list)
    """Best first (fused across queries), deduplicated."""
    exit_reason: HostingExit = "max_evals"
    notices: list[Notice] = field(default_factory=list)
    plan: PlanRecorder = field(default_factory=lambda: PlanRecorder("hosting_search"))
    """Every (query, namespace) search, recorded as it runs, at its round."""

    @property
    def planner_tokens(self) -> int:
        return self.usage.llm_input_tokens + self.usage.llm_output_tokens

    def query_plan(self) -> QueryPlan:
        """The run's query plan: its retrievals, and its rounds with their queries and verdicts."""
        plan = self.plan.build()
        plan.rounds = [
            PlanRound(
                round=r.round,
                queries=[cut(q.query.query) for q in self.queries if q.round == r.round],
                new_chunks=r.new_chunks,
                can_answer=r.can_answer,
            )
            for r in self.rounds
        ]
        return plan


class HostingSearchAgent:
    def __init__(
        self,
        planner: Planner,
        bind: Callable[[TenantScope], ScopeRetriever],
        scopes: Sequence[TenantScope],
        limits: HostingLimits,
    ) -> None:
        self._planner = planner
        self._bind = bind
        self._scopes = list(scopes)
        self._limits = limits

    def run(self, conversation: Sequence[ChatMessage], outcome: HostingOutcome) -> None:
        """Fill ``outcome``; a model failure ends the loop as ``error`` (other failures raise)."""
        last_user = next(m.content for m in reversed(conversation) if m.role == "user")
        tried: dict[tuple[str, str], PlannedQuery] = {}
        ranked_lists: list[list[RetrievedHit]] = []
        for number in range(1, self._limits.max_evals + 1):
            record = RoundRecord(round=number)
            proposals = [PlannedQuery("hybrid", last_user)] if number == 1 else []
            stop: HostingExit | None = None
            if not self._within_budget(outcome):
                stop = "token_budget"
            else:
                try:
                    plan = self._planner.generate(conversation, list(tried.values()), outcome.pool)
                except errors.RaglineError as exc:
                    stop = self._failed(outcome, exc, "query generation")
                else:
                    record.tokens += self._spent(outcome, plan)
                    outcome.notices.extend(plan.notices)
                    proposals += plan.queries[:MAX_QUERIES_PER_ROUND]
            fresh = list({q.key: q for q in proposals if q.key not in tried and q.key[1]}.values())
            if fresh:  # searched even when the round stops here: round 1 always has the user's words
                outcome.plan.step = number
                outcome.rounds.append(record)
                tried.update((q.key, q) for q in fresh)
                before = {h.key for h in outcome.pool}
                for query, hits in zip(fresh, self._search_round(fresh, outcome), strict=True):
                    outcome.queries.append(QueryRecord(number, query, len(hits)))
                    ranked_lists.append(hits)
                outcome.pool = _fuse(ranked_lists)
                record.new_chunks = len({h.key for h in outcome.pool} - before)
            elif stop is None:
                stop = "no_new_queries"
            if stop is None and not self._within_budget(outcome):
                stop = "token_budget"
            if stop is not None:
                outcome.exit_reason = stop
                return
            try:
                verdict = self._planner.evaluate(conversation, outcome.pool)
            except errors.RaglineError as exc:
                outcome.exit_reason = self._failed(outcome, exc, "evaluation")
                return
            record.tokens += self._spent(outcome, verdict)
            outcome.notices.extend(verdict.notices)
            record.can_answer = verdict.can_answer
            if verdict.can_answer:
                outcome.exit_reason = "can_answer"
                return
        outcome.exit_reason = "max_evals"

    def _within_budget(self, outcome: HostingOutcome) -> bool:
        return outcome.planner_tokens < self._limits.token_budget

    @staticmethod
    def _spent(outcome: HostingOutcome, answer: Plan | Verdict) -> int:
        outcome.usage.add(answer.tokens)
        return answer.tokens.llm_input_tokens + answer.tokens.llm_output_tokens

    @staticmethod
    def _failed(outcome: HostingOutcome, exc: errors.RaglineError, step: str) -> HostingExit:
        outcome.notices.append(
            Notice(
                exc.code, f"the model failed during {step} ({exc.message}); the chunks found so far are kept"
            )
        )
        return "error"

    def _search_round(self, queries: list[PlannedQuery], outcome: HostingOutcome) -> list[list[RetrievedHit]]:
        """Every (query, namespace) search of the round at once, in a bounded pool, each recorded in the
        run's plan; each query's hits over all namespaces, best first."""
        tasks = [(i, scope) for i in range(len(queries)) for scope in self._scopes]
        retrievers = [self._bind(scope) for _, scope in tasks]
        results: list[RetrievalResult] = []
        k = self._limits.candidates
        calls = [
            outcome.plan.planned(
                partial(r.search, queries[i].query, mode=queries[i].type, candidates=k, keep=k, rerank=False),
                issued_by="hosting_search",
                query=queries[i].query,
                mode=queries[i].type,
                namespaces=[scope.namespace_id],
                k=k,
                candidates=k,
            )
            for (i, scope), r in zip(tasks, retrievers, strict=True)
        ]
        try:
            with ThreadPoolExecutor(max_workers=min(self._limits.workers, len(tasks))) as pool:
                futures = [pool.submit(call) for call in calls]
                results = [f.result() for f in futures]
        finally:
            for r in retrievers:  # what was spent is charged, also when a search failed
                outcome.usage.add(r.usage)
        per_query: list[list[RetrievedHit]] = [[] for _ in queries]
        for (i, _), result in zip(tasks, results, strict=True):
            per_query[i].extend(result.hits)
            outcome.notices.extend(n for n in result.notices if n not in outcome.notices)
        return [deduplicate(sorted(hits, key=lambda h: -h.hit.score)) for hits in per_query]


def _fuse(ranked_lists: Sequence[Sequence[RetrievedHit]]) -> list[RetrievedHit]:
    """One pool over every query so far: reciprocal-rank fusion (scores of different query types do
    not compare), then one copy of each chunk and of each text. Each hit keeps its own breakdown and
    carries the pool's score."""
    fused: dict[ChunkKey, float] = {}
    best: dict[ChunkKey, RetrievedHit] = {}
    for hits in ranked_lists:
        for rank, h in enumerate(hits, start=1):
            fused[h.key] = fused.get(h.key, 0.0) + 1.0 / (RRF_K + rank)
            if h.key not in best or h.hit.score > best[h.key].hit.score:
                best[h.key] = h
    order = sorted(fused, key=lambda k: (-fused[k], k))
    pooled = [RetrievedHit(best[k].scope, best[k].hit.model_copy(update={"score": fused[k]})) for k in order]
    return deduplicate(pooled)
