"""``POST /v1/hosting-search``: the best chunks for a conversation, found by a self-evaluating
multi-query loop, and how the loop searched.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ragline.domain.api.chat import ChatMode, RequestMessage
from ragline.domain.api.common import ApiRequest, ChunkView, RequestFilter, Usage, WarningView
from ragline.domain.api.search import RerankView
from ragline.domain.api_base import ApiModel
from ragline.domain.models import SearchMode
from ragline.domain.plans import QueryPlan

HostingQueryType = SearchMode
"""``hybrid`` is the last user message as written (round 1); generated queries are keyword or semantic."""
HostingExit = Literal["can_answer", "token_budget", "max_evals", "no_new_queries", "error"]


class HostingSearchRequest(ApiRequest):
    """``POST /v1/hosting-search``: the best chunks for a conversation, found by a self-evaluating
    multi-query loop; no generated answer."""

    messages: list[RequestMessage] = Field(default_factory=list, max_length=200)
    query: str | None = Field(default=None, min_length=1, max_length=4000)
    """Shorthand for ``messages: [{"role": "user", "content": query}]``."""
    namespaces: list[str] = Field(default_factory=list, max_length=20)
    """Empty: the tenant's default namespace."""
    max_evals: int = Field(default=3, ge=1, le=5)
    token_budget: int = Field(default=4096, ge=1, le=1_000_000)
    """Model tokens (in and out) the query generation and evaluation may spend."""
    top_k: int = Field(default=15, ge=1, le=100)
    mode: ChatMode = "accurate"
    """``accurate`` reranks the pooled chunks; ``fast`` keeps their fused order."""
    filter: RequestFilter = None

    @model_validator(mode="after")
    def _one_conversation(self) -> HostingSearchRequest:
        if (self.query is None) == (not self.messages):
            raise ValueError("send either messages or query, not both and not neither")
        return self

    @property
    def conversation(self) -> list[RequestMessage]:
        if self.query is not None:
            return [RequestMessage(role="user", content=self.query)]
        return list(self.messages)


class HostingQueryView(ApiModel):
    round: int
    type: HostingQueryType
    query: str
    hits: int


class HostingRoundView(ApiModel):
    round: int
    new_chunks: int
    can_answer: bool | None
    """``null`` when the round ended before its evaluation (budget, error)."""
    tokens: int


class HostingSearchResponse(ApiModel):
    total_queries: int
    queries: list[HostingQueryView]
    rounds: list[HostingRoundView]
    chunks: list[ChunkView]
    exit_reason: HostingExit
    model: str
    usage: Usage
    run_id: str
    warnings: list[WarningView]
    rerank: RerankView | None = None
    plan: QueryPlan | None = None
    """How the loop searched: its rounds and every (query, namespace) search (see
    :mod:`ragline.domain.plans`); null on a replay that had to leave it out."""
    replayed: bool = Field(default=False, exclude_if=lambda v: not v)
