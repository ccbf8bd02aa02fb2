"""The one place a run's retrievals are recorded: :class:`PlanRecorder` builds its
:class:`~ragline.domain.plans.QueryPlan` as the run goes.

Every search an agent runs goes through :meth:`PlanRecorder.planned` (chat's through
:meth:`ragline.agents.tools.ToolContext.planned_search`), which times it and records what it found or
the error it raised, so the plan says what ran. A search takes its place in the plan when it is
planned, by the thread that plans it; concurrent searches (a round's) each fill their own place, so
the plan's order is the order they were issued in, whichever finished first.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from ragline import errors
from ragline.agents.events import Collections, Route
from ragline.domain.models import SearchMode
from ragline.domain.plans import (
    PlanCollections,
    PlanHop,
    PlanIssuer,
    PlannedRetrieval,
    PlanRound,
    PlanRoute,
    QueryPlan,
    cut,
)
from ragline.domain.retrieval import RetrievalResult


class PlanRecorder:
    """A run's query plan in the making. ``step`` is the agent step now running (from 1): the agents
    set it as they go, and each search planned meanwhile is recorded under it."""

    def __init__(self, agent: str = "") -> None:
        self.agent = agent
        self.step = 1
        self.route: PlanRoute | None = None
        self.collections: PlanCollections | None = None
        self.sub_questions: list[str] = []
        self.rounds: list[PlanRound] = []
        self.hops: list[PlanHop] = []
        self._retrievals: list[PlannedRetrieval | None] = []
        """In the order planned; None until the search has run."""

    def note(self, event: Route | Collections) -> None:
        """A router's choice, as streamed."""
        if isinstance(event, Route):
            self.route = PlanRoute(agent=event.agent, reason=cut(event.reason), fallback=event.fallback)
            self.agent = event.agent
        else:
            self.collections = PlanCollections(namespaces=list(event.namespaces), reason=cut(event.reason))

    def hop(self, question: str, answer: str, supporting: Sequence[str]) -> None:
        self.hops.append(
            PlanHop(
                hop=len(self.hops) + 1,
                question=cut(question),
                answer=cut(answer),
                supporting_ids=[*supporting],
            )
        )

    def planned(
        self,
        search: Callable[[], RetrievalResult],
        *,
        issued_by: PlanIssuer,
        query: str,
        mode: SearchMode,
        namespaces: Sequence[str],
        k: int,
        candidates: int,
        filter: dict[str, Any] | None = None,
    ) -> Callable[[], RetrievalResult]:
        """``search`` in its place in the plan (taken now, at the current step), recorded when called:
        timed, with its hits, or with the code of the error it raised (which still propagates)."""
        index = len(self._retrievals)
        self._retrievals.append(None)
        step = self.step

        def record(started: float, result: RetrievalResult | None, error: str | None) -> None:
            reranked = result.rerank if result is not None else None
            self._retrievals[index] = PlannedRetrieval(
                step=step,
                issued_by=issued_by,
                query=cut(query),
                mode=result.mode if result is not None else mode,
                namespaces=[*namespaces],
                filter=filter,
                k=k,
                candidates=candidates,
                hits=len(result.hits) if result is not None else 0,
                rerank=reranked.reranker if reranked is not None and not reranked.fell_back else None,
                ms=round((time.perf_counter() - started) * 1000, 3),
                error=error,
            )

        def run() -> RetrievalResult:
            started = time.perf_counter()
            try:
                result = search()
            except errors.RaglineError as exc:
                record(started, None, exc.code)
                raise
            except Exception:
                record(started, None, "internal_error")
                raise
            record(started, result, None)
            return result

        return run

    def build(self) -> QueryPlan:
        """The plan so far (searches planned but not run are left out)."""
        return QueryPlan(
            agent=self.agent,
            route=self.route,
            collections=self.collections,
            sub_questions=[cut(q) for q in self.sub_questions],
            rounds=list(self.rounds),
            hops=list(self.hops),
            retrievals=[r for r in self._retrievals if r is not None],
        )
