"""Search one namespace: embed the query, honour the store's capabilities, return scored hits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ragline import errors
from ragline.domain.models import (
    HybridQuery,
    KeywordQuery,
    MetadataFilter,
    RunUsage,
    SearchHit,
    SearchMode,
    SearchQuery,
    SemanticQuery,
    TenantScope,
)
from ragline.ports import Embedder, TenantRegistry, VectorStoreProvider
from ragline.services.namespaces import check_embedding_space, require_namespace

Fusion = Literal["rrf", "convex"]


@dataclass
class SearchOutcome:
    hits: list[SearchHit]
    mode: SearchMode
    usage: RunUsage
    warnings: list[str] = field(default_factory=list)


class SearchService:
    def __init__(
        self,
        *,
        registry: TenantRegistry,
        stores: VectorStoreProvider,
        embedder: Embedder,
        rrf_k: int = 60,
        fusion: Fusion = "rrf",
        alpha: float = 0.5,
    ) -> None:
        self._registry = registry
        self._stores = stores
        self._embedder = embedder
        self._rrf_k = rrf_k
        self._fusion: Fusion = fusion
        self._alpha = alpha

    def search(
        self,
        scope: TenantScope,
        text: str,
        *,
        mode: SearchMode = "hybrid",
        k: int = 10,
        filters: MetadataFilter | None = None,
        fusion: Fusion | None = None,
    ) -> SearchOutcome:
        if not text.strip():
            raise errors.InvalidRequest("query text is empty")
        namespace = require_namespace(self._registry, scope.tenant_id, scope.namespace_id)
        check_embedding_space(namespace, self._embedder)
        store = self._stores.scoped(scope)
        caps = store.capabilities()
        warnings: list[str] = []
        if mode in ("keyword", "hybrid") and not caps.keyword:
            warnings.append(f"{mode} search is not available on this store; used semantic")
            mode = "semantic"
        usage = RunUsage(retrievals=1)
        f = filters or MetadataFilter()
        query: SearchQuery
        try:
            if mode == "keyword":
                query = KeywordQuery(text=text, k=k, filters=f)
            else:
                vector = tuple(float(x) for x in self._embedder.embed_query(text))
                usage.embedded_tokens = self._embedder.count_tokens(text)
                if mode == "semantic":
                    query = SemanticQuery(text=text, k=k, vector=vector, filters=f)
                else:
                    query = HybridQuery(
                        text=text,
                        k=k,
                        vector=vector,
                        filters=f,
                        fusion=fusion or self._fusion,
                        rrf_k=self._rrf_k,
                        alpha=self._alpha,
                        candidates=max(100, k),
                    )
        except ValueError as exc:
            raise errors.InvalidRequest(str(exc).splitlines()[-1].strip()) from exc
        return SearchOutcome(hits=store.search(query), mode=mode, usage=usage, warnings=warnings)
