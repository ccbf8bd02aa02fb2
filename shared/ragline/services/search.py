"""``POST /v1/namespaces/{ns}/search``: one authorised, metered retrieval, as the route returns it.

Everything that can refuse the request (bad query, a namespace the key may not use or that does not
exist, the quota) is checked before any retrieval; the run is then charged exactly once, also when
the retrieval fails half way.
"""

from __future__ import annotations

from ragline import errors
from ragline.domain.api import ChunkView, RerankView, SearchRequest, SearchResponse, Usage, WarningView
from ragline.domain.models import TenantScope
from ragline.services.metering import Metering
from ragline.services.retrieval import RetrievalService
from ragline.services.tenancy import Principal

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
        self._retrieval.namespaces(principal, [namespace], "search")
        scope = TenantScope(tenant_id=principal.tenant_id, namespace_id=namespace)
        run = self._metering.start(principal.tenant_id, run_id)
        try:
            retriever = self._retrieval.bind([scope], usage=run.usage)
            candidates = max(request.k, RERANK_CANDIDATES) if request.rerank else request.k
            result = retriever.search(
                request.query,
                mode=request.mode,
                candidates=candidates,
                keep=request.k,
                rerank=request.rerank,
                fusion=request.fusion,
            )
        finally:
            charged = run.finish()
        return SearchResponse(
            mode=result.mode,
            hits=[ChunkView.of_hit(h) for h in result.hits],
            warnings=[WarningView.of(n) for n in result.notices],
            usage=Usage.of(charged),
            run_id=run.run_id,
            rerank=RerankView(reranker=result.rerank.reranker, fell_back=result.rerank.fell_back)
            if result.rerank
            else None,
        )
