"""The one retrieval path: authorised namespaces → search each → merge → rerank → deduplicate.

Every caller that needs chunks (the search route, the chat tools, hosting search, the agents, the
evaluation) goes through here, so a rule (scope checks, the keyword→semantic downgrade, rerank
fallback, duplicate passages, usage accounting) is written once.

:meth:`RetrievalService.namespaces` authorises a principal for namespaces; :meth:`RetrievalService.bind`
returns a :class:`Retriever` over their scopes that adds everything it spends to the run's usage.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Mapping, Sequence

from ragline import errors
from ragline.domain.filters import Filter, Narrowed, ReadView, narrowed_for
from ragline.domain.fusion import fuse_across
from ragline.domain.generations import Chunking
from ragline.domain.models import (
    Chunk,
    FusionName,
    HybridQuery,
    KeywordQuery,
    MetadataFilter,
    RunUsage,
    SearchMode,
    SearchQuery,
    SemanticQuery,
    TenantScope,
)
from ragline.domain.retrieval import (
    Notice,
    RerankReport,
    RetrievalResult,
    RetrievedHit,
    deduplicate,
    with_rerank_scores,
)
from ragline.domain.tenancy import Namespace, Scope
from ragline.ports import Embedder, Reranker, TenantRegistry, VectorStore, VectorStoreProvider
from ragline.services.authentication import Principal
from ragline.services.generations import Generation, ModelCatalog, serving
from ragline.services.namespaces import require_namespace

Fusion = FusionName
QueryBuilder = Callable[
    [str, SearchMode, int, "Fusion | None", RunUsage, Embedder, "Filter | None"], SearchQuery
]
"""(text, mode, k, fusion, usage, embedder, where) → the store query (embedding the text with the
embedder of the generation it searches, counted in ``usage``; ``where`` narrows it inside the store's
bound view)."""

FALLBACK_ERRORS: tuple[type[errors.RaglineError], ...] = (
    errors.RerankFailed,
    errors.DependencyFailed,
    errors.DependencyUnavailable,
    errors.Throttled,
)
"""A rerank failing with one of these falls back to fused order (a bug still propagates)."""


class RetrievalService:
    def __init__(
        self,
        *,
        registry: TenantRegistry,
        stores: VectorStoreProvider,
        embedder: Embedder,
        reranker: Reranker | None = None,
        fusion: Fusion = "adaptive",
        rrf_k: int = 60,
        alpha: float = 0.4,
        catalog: ModelCatalog | None = None,
    ) -> None:
        self._registry = registry
        self._stores = stores
        self._embedder = embedder
        self._catalog = catalog or ModelCatalog.of(embedder, stores)
        """The embedding models of the namespaces' served generations (``embedder``: the configured)."""
        self._reranker = reranker
        self._fusion: Fusion = fusion
        self._rrf_k = rrf_k
        self._alpha = alpha

    def tuned(self, fusion: Fusion | None = None, alpha: float | None = None) -> RetrievalService:
        """This service with another hybrid fusion or semantic weight (None: as configured): an
        evaluation's configuration."""
        if fusion is None and alpha is None:
            return self
        other = copy.copy(self)
        other._fusion = fusion or self._fusion
        other._alpha = self._alpha if alpha is None else alpha
        return other

    def namespaces(self, principal: Principal, requested: Sequence[str], need: Scope) -> list[Namespace]:
        """The namespaces ``principal`` may ``need`` (deduplicated), checked to exist and to match the
        configured embedder. None requested: the tenant's default namespace among those the key may
        read (or the only one). A namespace outside the key's allow-list is the same 404 as a missing
        one, so a key learns nothing about namespaces it may not read."""
        tenant = principal.tenant_id
        if requested:
            wanted = list(dict.fromkeys(requested))
            for ns_id in wanted:
                principal.require(need, ns_id)
            spaces = [require_namespace(self._registry, tenant, ns_id) for ns_id in wanted]
        else:
            principal.require(need)
            readable = [
                n for n in self._registry.list_namespaces(tenant) if principal.may_read(n.namespace_id)
            ]
            spaces = [n for n in readable if n.default][:1] or (readable if len(readable) == 1 else [])
            if not spaces:
                raise errors.InvalidRequest("no default namespace: name the namespaces to search")
        for ns in spaces:
            serving(self._catalog, ns)  # the embedding-space guard
        return spaces

    def readable(self, principal: Principal, need: Scope) -> tuple[list[Namespace], list[Notice]]:
        """Every namespace ``principal`` may ``need`` (the collection router's candidates), in listing
        order; one made with another embedder is left out with a notice rather than failing the run."""
        principal.require(need)
        usable: list[Namespace] = []
        notices: list[Notice] = []
        for ns in self._registry.list_namespaces(principal.tenant_id):
            if not principal.may_read(ns.namespace_id):
                continue
            try:
                serving(self._catalog, ns)
            except errors.EmbeddingMismatch as exc:
                notices.append(
                    Notice("namespace_skipped", f"{ns.namespace_id!r} not searched: {exc.message}")
                )
                continue
            usable.append(ns)
        return usable, notices

    def bind(
        self,
        scopes: Sequence[TenantScope],
        usage: RunUsage | None = None,
        view: ReadView | Mapping[str, ReadView] | None = None,
    ) -> Retriever:
        """A retriever over already-authorised scopes, adding what it spends to ``usage``; every store
        serves only what ``view`` admits (the request's filter and user: see :class:`ReadView`), or
        what ``view[namespace]`` admits (a filter typed by each namespace's schema). A mapping without
        a scope's namespace is a bug, never "no view": it raises. Each scope reads its namespace's
        served generation as of now (its storage and its embedder): the run keeps it, so a reindex's
        switch meanwhile never splits a run across two generations; hits carry the public scope."""

        def view_of(scope: TenantScope) -> ReadView | None:
            return view[scope.namespace_id] if isinstance(view, Mapping) else view

        generations = {s: self._generation(s) for s in dict.fromkeys(scopes)}
        return Retriever(
            stores={s: self._store(g, view_of(s)) for s, g in generations.items()},
            embedders={s: g.space.embedder for s, g in generations.items()},
            build_query=self._query,
            reranker=self._reranker,
            usage=usage if usage is not None else RunUsage(),
        )

    def _generation(self, scope: TenantScope) -> Generation:
        try:
            namespace = self._registry.get_namespace(scope.tenant_id, scope.namespace_id)
        except errors.NamespaceNotFound:  # deleted meanwhile: nothing of it was served (it was empty)
            return Generation(scope, 1, self._catalog.default_space(), Chunking())
        return serving(self._catalog, namespace)

    def _store(self, generation: Generation, view: ReadView | None) -> VectorStore:
        """The generation's store: through this service's own ``stores`` for the configured model."""
        if generation.space.embedder.model_id != self._catalog.default:
            return generation.store(view)
        if view is None:  # no view: the provider's plain call (what a store without views takes)
            return self._stores.scoped(generation.scope)
        return self._stores.scoped(generation.scope, view)

    @property
    def reranker_name(self) -> str | None:
        return self._reranker.name if self._reranker else None

    def _query(
        self,
        text: str,
        mode: SearchMode,
        k: int,
        fusion: Fusion | None,
        usage: RunUsage,
        embedder: Embedder,
        where: Filter | None = None,
    ) -> SearchQuery:
        filters = MetadataFilter(where=where)
        try:
            if mode == "keyword":
                return KeywordQuery(text=text, k=k, filters=filters)
            vector = tuple(float(x) for x in embedder.embed_query(text))
            usage.embedded_tokens += embedder.count_tokens(text)
            if mode == "semantic":
                return SemanticQuery(text=text, k=k, vector=vector, filters=filters)
            return HybridQuery(
                text=text,
                k=k,
                filters=filters,
                vector=vector,
                fusion=fusion or self._fusion,
                rrf_k=self._rrf_k,
                alpha=self._alpha,
                candidates=max(100, k),
            )
        except ValueError as exc:
            raise errors.InvalidRequest(str(exc).splitlines()[-1].strip()) from exc


class Retriever:
    """Searches a fixed set of authorised scopes for one run; the model or caller picks only the
    query text, the mode and how many hits."""

    def __init__(
        self,
        *,
        stores: dict[TenantScope, VectorStore],
        embedders: dict[TenantScope, Embedder],
        build_query: QueryBuilder,
        reranker: Reranker | None,
        usage: RunUsage,
    ) -> None:
        self._stores = stores
        self._embedders = embedders
        self._build_query = build_query
        self._reranker = reranker
        self.usage = usage
        self._lock = threading.Lock()
        """Searches may run concurrently (the planned agents): what they spend is added under it."""

    @property
    def scopes(self) -> list[TenantScope]:
        return list(self._stores)

    @property
    def can_expand(self) -> bool:
        """True when every store keeps chunks in order (``neighbors`` works)."""
        return all(store.capabilities().neighbors for store in self._stores.values())

    def search(
        self,
        text: str,
        *,
        mode: SearchMode = "hybrid",
        candidates: int = 10,
        keep: int = 10,
        rerank: bool = False,
        fusion: Fusion | None = None,
        where: Narrowed | None = None,
    ) -> RetrievalResult:
        """``candidates`` hits per namespace, merged (hybrid hits of several namespaces fused again on
        one scale; otherwise by their raw cosine or BM25 scores), reranked (if asked,
        and never for keyword mode) and deduplicated, cut to ``keep``. ``where`` (an agent tool's own
        filter, one for all or one typed per namespace id) narrows the search inside each store's
        bound view — it can never widen it."""
        if not text.strip():
            raise errors.InvalidRequest("query text is empty")
        result = RetrievalResult(hits=[], mode=mode)
        if mode != "semantic" and not all(s.capabilities().keyword for s in self._stores.values()):
            result.notices.append(
                Notice("search_downgraded", f"{mode} search is not available on this store; used semantic")
            )
            result.mode = mode = "semantic"
        try:
            queries: dict[str, SearchQuery] = {}  # one per embedding model: each text embedded once
            query: SearchQuery | None = None
            found: list[RetrievedHit] = []
            for scope, store in self._stores.items():
                embedder = self._embedders[scope]
                own = narrowed_for(where, scope.namespace_id)
                query = queries.get(embedder.model_id)
                if query is None:
                    query = self._build_query(text, mode, candidates, fusion, result.usage, embedder, own)
                    queries[embedder.model_id] = query
                elif query.filters.where != own:  # the same embedding, this store's own filter
                    query = query.model_copy(update={"filters": MetadataFilter(where=own)})
                found.extend(RetrievedHit(scope, h) for h in store.search(query))
                result.usage.retrievals += 1
            if isinstance(query, HybridQuery) and len(self._stores) > 1:
                found = fuse_across(query, found)  # one scale: each store's fused scores are its own
            else:
                found.sort(key=lambda h: -h.hit.score)
            found = deduplicate(found)[:candidates]
            if rerank and mode != "keyword" and found:
                found = self._rerank(text, found, keep, result)
            result.hits = found[:keep]
        finally:
            with self._lock:  # what was spent is charged, also when a store fails half way
                self.usage.add(result.usage)
        return result

    def rerank(self, text: str, hits: list[RetrievedHit], keep: int) -> RetrievalResult:
        """Hits found by other queries (a pool), reranked against ``text`` and cut to ``keep``; a failed
        or missing reranker keeps their order, with a notice."""
        result = RetrievalResult(hits=[], mode="hybrid")
        try:
            result.hits = self._rerank(text, hits, keep, result)[:keep] if hits else []
        finally:
            with self._lock:
                self.usage.add(result.usage)
        return result

    def neighbors(
        self, scope: TenantScope, document_id: str, sequence_number: int, *, before: int = 5, after: int = 5
    ) -> list[Chunk]:
        """The chunks around one chunk of an authorised scope, in order."""
        store = self._stores.get(scope)
        if store is None:
            raise errors.Forbidden("that namespace is not part of this run", namespace=scope.namespace_id)
        with self._lock:
            self.usage.retrievals += 1
        return store.neighbors(document_id, sequence_number, before=before, after=after)

    def _rerank(
        self, text: str, found: list[RetrievedHit], keep: int, result: RetrievalResult
    ) -> list[RetrievedHit]:
        reranker = self._reranker
        if reranker is None:
            result.notices.append(Notice("rerank_unavailable", "no reranker is configured; fused order"))
            return found
        try:
            ranked = reranker.rerank(text, [h.hit for h in found], keep)
        except FALLBACK_ERRORS as exc:
            if isinstance(exc, errors.RerankFailed):
                result.usage.llm_input_tokens += exc.input_tokens
                result.usage.llm_output_tokens += exc.output_tokens
            result.rerank = RerankReport(reranker.name, fell_back=True, error_code=exc.code)
            result.notices.append(
                Notice(
                    "rerank_failed",
                    f"rerank with {reranker.name!r} failed ({exc.code}); results are in fused order",
                )
            )
            hits = with_rerank_scores([h.hit for h in found], [h.hit.score for h in found], keep)
            return [RetrievedHit(h.scope, hit) for h, hit in zip(found, hits, strict=False)]
        result.usage.add(ranked.usage)
        result.rerank = RerankReport(reranker.name)
        # The reranker returns copies of the hits it was given; after deduplication no two of them share
        # chunk id and text, so that pair leads each copy back to its namespace.
        scope_of = {(h.hit.chunk.id, h.hit.chunk.text): h.scope for h in found}
        return [RetrievedHit(scope_of[(hit.chunk.id, hit.chunk.text)], hit) for hit in ranked.hits]
