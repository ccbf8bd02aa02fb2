"""``POST /v1/namespaces/{ns}/search``: one authorised, metered retrieval, as the route returns it.

Everything that can refuse the request (bad query, a namespace the key may not use or that does not
exist, the quota) is checked before any retrieval; the run is then charged exactly once, also when
the retrieval fails half way. A replay of a completed ``Idempotency-Key`` returns the recorded
response (``replayed: true``; its hits dropped if the response was over ``MAX_RESULT_BYTES``) and does
no retrieval.
"""

from __future__ import annotations

from datetime import datetime

from ragline import errors
from ragline.domain.api import ChunkView, RerankView, SearchRequest, SearchResponse, Usage, WarningView
from ragline.domain.billing import CompletedRun, request_fingerprint
from ragline.domain.models import TenantScope
from ragline.services.authentication import Principal
from ragline.services.metering import NO_RESULT, Metering, recorded_result, replayed_chunks
from ragline.services.read_views import RequestAccess
from ragline.services.replays import reach_of
from ragline.services.retrieval import RetrievalService

RERANK_CANDIDATES = 30
"""With ``rerank``, at least this many fused candidates go to the reranker (as chat's accurate mode)."""


class SearchService:
    def __init__(self, *, retrieval: RetrievalService, metering: Metering) -> None:
        self._retrieval = retrieval
        self._metering = metering

    def search(
        self, principal: Principal, namespace: str, request: SearchRequest, *, run_id: str | None = None
    ) -> SearchResponse:
        if not request.query.strip():
            raise errors.InvalidRequest("query text is empty")
        spaces = self._retrieval.namespaces(principal, [namespace], "search")
        access = RequestAccess.of(principal, request.filter)
        access.check(spaces)
        scope = TenantScope(tenant_id=principal.tenant_id, namespace_id=namespace)
        route = f"/v1/namespaces/{namespace}/search"
        reach = reach_of(principal, "search", [namespace]) | access.reach()
        fingerprint = request_fingerprint("POST", route, request, reach=reach)
        run = self._metering.start(principal.tenant_id, run_id, fingerprint)
        if run.replay is not None:
            return self._replayed(principal.tenant_id, run.replay, run.run_id, request, access.readers)
        response: SearchResponse | None = None
        try:
            retriever = self._retrieval.bind([scope], usage=run.usage, view=access.views(spaces))
            candidates = max(request.k, RERANK_CANDIDATES) if request.rerank else request.k
            result = retriever.search(
                request.query,
                mode=request.mode,
                candidates=candidates,
                keep=request.k,
                rerank=request.rerank,
                fusion=request.fusion,
            )
            response = SearchResponse(
                mode=result.mode,
                hits=[ChunkView.of_hit(h) for h in result.hits],
                warnings=[WarningView.of(n) for n in result.notices],
                usage=Usage.of(run.usage),
                run_id=run.run_id,
                rerank=RerankView(reranker=result.rerank.reranker, fell_back=result.rerank.fell_back)
                if result.rerank
                else None,
            )
        finally:
            charged = run.finish(_recorded(response, run.started_at))
        assert response is not None  # the search raised otherwise
        response.usage = Usage.of(charged)
        return response

    def _replayed(
        self,
        tenant_id: str,
        replay: CompletedRun,
        run_id: str,
        request: SearchRequest,
        readers: frozenset[str] | None,
    ) -> SearchResponse:
        """The recorded response, without the hits of documents deleted or changed since the run;
        none when there is nothing to serve (the first run failed, expired or predates the rule)."""
        recorded = self._metering.opened(tenant_id, replay, readers)
        usage = Usage.of(replay.usage)
        if recorded is None:
            return SearchResponse(
                mode=request.mode, hits=[], warnings=[NO_RESULT], usage=usage, run_id=run_id, replayed=True
            )
        response = SearchResponse.model_validate(recorded.result)
        hits, warnings = replayed_chunks(recorded, response.hits)
        update = {"hits": hits, "warnings": [*response.warnings, *warnings], "usage": usage}
        return response.model_copy(update=update | {"replayed": True})


def _recorded(response: SearchResponse | None, read_at: datetime) -> str | None:
    return recorded_result(response, drop="hits", code="replay_without_hits", what="hits", read_at=read_at)
