"""``POST /v1/namespaces/{ns}/search``: one query against one namespace, and its ranked chunks."""

from __future__ import annotations

from pydantic import Field

from ragline.domain.api.common import ApiRequest, ChunkView, RequestFilter, Usage, WarningView
from ragline.domain.api_base import ApiModel
from ragline.domain.models import FusionName, SearchMode


class SearchRequest(ApiRequest):
    """``POST /v1/namespaces/{ns}/search``."""

    query: str = Field(min_length=1, max_length=4000)
    mode: SearchMode = "hybrid"
    k: int = Field(default=10, ge=1, le=100)
    rerank: bool = False
    """Rerank the fused candidates (semantic and hybrid modes; keyword order is kept)."""
    fusion: FusionName | None = None
    """Hybrid fusion for this query (default: the deployment's setting)."""
    filter: RequestFilter = None


class RerankView(ApiModel):
    reranker: str
    fell_back: bool


class SearchResponse(ApiModel):
    mode: SearchMode
    hits: list[ChunkView]
    warnings: list[WarningView]
    usage: Usage
    run_id: str
    rerank: RerankView | None = None
    replayed: bool = Field(default=False, exclude_if=lambda v: not v)
    """``true`` only on a replay of a completed ``Idempotency-Key``: the recorded result, not re-run."""
