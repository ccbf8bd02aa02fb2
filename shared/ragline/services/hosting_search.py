"""``hosting_search``: the best chunks for a conversation, from a self-evaluating multi-query loop.

Validated, authorised and reserved before any work (errors raise there and are not charged); then the
:class:`~ragline.agents.hosting_search.HostingSearchAgent` runs over fresh per-task retrievers, the pool
is reranked to ``topK`` (``accurate``) or cut in fused order (``fast``), and the run is charged once
through :class:`~ragline.services.metering.Metering` — also when it fails. A replay of a completed
``Idempotency-Key`` returns the recorded response and does no work.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime

from ragline import errors
from ragline.agents.hosting_search import HostingLimits, HostingOutcome, HostingSearchAgent, Planner
from ragline.domain.api import (
    ChunkView,
    HostingQueryView,
    HostingRoundView,
    HostingSearchRequest,
    HostingSearchResponse,
    RerankView,
    Usage,
    WarningView,
)
from ragline.domain.billing import MAX_RESULT_BYTES, CompletedRun, request_fingerprint
from ragline.domain.chat import ChatMessage
from ragline.domain.filters import ReadView
from ragline.domain.models import RunUsage, TenantScope
from ragline.domain.retrieval import RetrievalResult
from ragline.services.authentication import Principal
from ragline.services.metering import NO_RESULT, Metering, recorded_result, replayed_chunks
from ragline.services.read_views import RequestAccess
from ragline.services.replays import reach_of, sealed
from ragline.services.retrieval import RetrievalService, Retriever

logger = logging.getLogger(__name__)
_NO_RERANKER_LOGGED = threading.Event()
"""Set once the process has said it has no reranker: a configuration is stated once, not per request."""

ROUTE = "/v1/hosting-search"
RERANK_POOL = 60
"""Pooled chunks (best fused first) the reranker scores; the rest cannot reach ``topK`` anyway."""


class HostingSearchService:
    def __init__(
        self, *, retrieval: RetrievalService, planner: Planner, metering: Metering, limits: HostingLimits
    ) -> None:
        self._retrieval = retrieval
        self._planner = planner
        self._metering = metering
        self._limits = limits

    def search(
        self, principal: Principal, request: HostingSearchRequest, *, run_id: str | None = None
    ) -> HostingSearchResponse:
        conversation = [ChatMessage(role=m.role, content=m.content) for m in request.conversation]
        if any(m.role == "system" for m in conversation):
            raise errors.InvalidRequest("system messages are not accepted")
        users = [m for m in conversation if m.role == "user"]
        if not users:
            raise errors.InvalidRequest("the conversation has no user message")
        if not users[-1].content.strip():
            raise errors.InvalidRequest("the last user message is empty")
        spaces = self._retrieval.namespaces(principal, request.namespaces, "search")
        access = RequestAccess.of(principal, request.filter)
        access.check(spaces)
        views = access.views(spaces)
        scopes = [TenantScope(tenant_id=principal.tenant_id, namespace_id=ns.namespace_id) for ns in spaces]
        reach = reach_of(principal, "search", [ns.namespace_id for ns in spaces]) | access.reach()
        fingerprint = request_fingerprint("POST", ROUTE, request, reach=reach)
        run = self._metering.start(principal.tenant_id, run_id, fingerprint)
        if run.replay is not None:
            return self._replayed(principal.tenant_id, run.replay, run.run_id, access.readers)
        outcome = HostingOutcome(usage=run.usage)
        response: HostingSearchResponse | None = None
        try:
            limits = HostingLimits(
                max_evals=request.max_evals,
                token_budget=request.token_budget,
                candidates=self._limits.candidates,
                workers=self._limits.workers,
            )
            agent = HostingSearchAgent(self._planner, lambda scope: self._bind(scope, views), scopes, limits)
            agent.run(conversation, outcome)
            final = self._final(users[-1].content, scopes, outcome, request, run.usage, views)
            response = _response(outcome, final, request, self._planner.name, run.run_id)
        finally:
            charged = run.finish(_recorded(response, run.started_at))
        assert response is not None  # the run raised otherwise
        response.usage = Usage.of(charged)
        return response

    def _replayed(
        self, tenant_id: str, replay: CompletedRun, run_id: str, readers: frozenset[str] | None
    ) -> HostingSearchResponse:
        """The recorded response, without the chunks of documents deleted or changed since the run;
        none when there is nothing to serve (the first run failed, expired or predates the rule)."""
        recorded = self._metering.opened(tenant_id, replay, readers)
        usage = Usage.of(replay.usage)
        if recorded is None:
            return HostingSearchResponse(
                total_queries=0, queries=[], rounds=[], chunks=[], exit_reason="error",
                model=self._planner.name, usage=usage, run_id=run_id, warnings=[NO_RESULT], replayed=True,
            )  # fmt: skip
        response = HostingSearchResponse.model_validate(recorded.result)
        chunks, warnings = replayed_chunks(recorded, response.chunks)
        update = {"chunks": chunks, "warnings": [*response.warnings, *warnings], "usage": usage}
        if warnings:  # later rounds' queries take terms from the chunks found: they may quote them too
            update |= {"queries": [], "plan": None}
        return response.model_copy(update=update | {"replayed": True})

    def _bind(self, scope: TenantScope, views: dict[str, ReadView]) -> Retriever:
        return self._retrieval.bind([scope], usage=RunUsage(), view=views)

    def _final(
        self,
        question: str,
        scopes: list[TenantScope],
        outcome: HostingOutcome,
        request: HostingSearchRequest,
        usage: RunUsage,
        views: dict[str, ReadView],
    ) -> RetrievalResult:
        """``accurate``: the pool reranked against the last user message; ``fast``: fused order.

        A deployment with no reranker answers ``accurate`` in fused order, as chat does: that is its
        configuration, not something that went wrong with this request, so no response carries a
        warning for it (the response's ``rerank`` is null) and the process logs it once."""
        if request.mode == "fast" or not outcome.pool:
            return RetrievalResult(hits=outcome.pool[: request.top_k], mode="hybrid")
        if self._retrieval.reranker_name is None:
            if not _NO_RERANKER_LOGGED.is_set():
                _NO_RERANKER_LOGGED.set()
                logger.warning("no reranker is configured: accurate hosting search keeps the fused order")
            return RetrievalResult(hits=outcome.pool[: request.top_k], mode="hybrid")
        return self._retrieval.bind(scopes, usage=usage, view=views).rerank(
            question, outcome.pool[:RERANK_POOL], request.top_k
        )


def _response(
    outcome: HostingOutcome,
    final: RetrievalResult,
    request: HostingSearchRequest,
    model: str,
    run_id: str,
) -> HostingSearchResponse:
    notices = [*outcome.notices, *final.notices]
    return HostingSearchResponse(
        total_queries=len(outcome.queries),
        queries=[
            HostingQueryView(round=q.round, type=q.query.type, query=q.query.query, hits=q.hits)
            for q in outcome.queries
        ],
        rounds=[
            HostingRoundView(round=r.round, new_chunks=r.new_chunks, can_answer=r.can_answer, tokens=r.tokens)
            for r in outcome.rounds
        ],
        chunks=[ChunkView.of_hit(h) for h in final.hits],
        exit_reason=outcome.exit_reason,
        model=model,
        usage=Usage.of(outcome.usage),
        run_id=run_id,
        warnings=[WarningView.of(n) for n in dict.fromkeys(notices)],
        rerank=RerankView(reranker=final.rerank.reranker, fell_back=final.rerank.fell_back)
        if final.rerank
        else None,
        plan=outcome.query_plan(),
    )


def _recorded(response: HostingSearchResponse | None, read_at: datetime) -> str | None:
    """What a replay gets (see :func:`recorded_result`): without the plan when the whole would be too
    large with it (the chunks are what a replay is for)."""
    if response is not None and response.plan is not None:
        documents = [(c.namespace, c.document_id) for c in response.chunks]
        if len(sealed(response, documents, read_at).encode()) > MAX_RESULT_BYTES:
            response = response.model_copy(update={"plan": None})
    return recorded_result(
        response, drop="chunks", code="replay_without_chunks", what="chunks", read_at=read_at
    )
