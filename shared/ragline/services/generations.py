"""Which embedding model, chunking and storage a namespace's generation uses.

Every reader and writer resolves a namespace through here: :func:`serving` (what answers queries and
takes ingests) and :func:`building` (what a running reindex writes). The embedding models come from the
deployment's :class:`ModelCatalog` (the configured model, the local offline one; tests add their own):
the old generation keeps its model's embedder while the new one is built with another.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ragline.documents.strategies import ChunkPlan
from ragline.domain.filters import ReadView
from ragline.domain.generations import PARENT_SHARE, Chunking, storage_scope
from ragline.domain.models import TenantScope
from ragline.domain.tenancy import Namespace
from ragline.ports import Embedder, Tokenizer, VectorStore, VectorStoreProvider
from ragline.services.namespaces import check_embedding_space


@dataclass(frozen=True)
class Space:
    """One embedding model with the tokenizer its chunker counts in and the stores its vectors fit."""

    embedder: Embedder
    tokenizer: Tokenizer
    stores: VectorStoreProvider


class ModelCatalog:
    """The embedding models this deployment can serve, each built on first use (a model is loaded or
    an endpoint client made only when a namespace uses it). ``default`` is the configured model: a
    new namespace's, and a reindex's unless it names another."""

    def __init__(self, default: str, builders: Mapping[str, Callable[[], Space]]) -> None:
        if default not in builders:
            raise ValueError(f"the default model {default!r} is not in the catalog")
        self.default = default
        self._builders = dict(builders)
        self._built: dict[str, Space] = {}
        self._lock = threading.Lock()

    @classmethod
    def of(
        cls, embedder: Embedder, stores: VectorStoreProvider, tokenizer: Tokenizer | None = None
    ) -> ModelCatalog:
        """A catalog of one model (a service built without the deployment's catalog). Without a
        tokenizer, its generations can be read but not chunked into."""
        space = Space(embedder, tokenizer or _NoTokenizer(), stores)
        return cls(embedder.model_id, {embedder.model_id: lambda: space})

    def models(self) -> list[str]:
        return sorted(self._builders)

    def space(self, model_id: str) -> Space | None:
        """The model's space, ``None`` when this deployment cannot serve it."""
        builder = self._builders.get(model_id)
        if builder is None:
            return None
        with self._lock:
            if model_id not in self._built:
                self._built[model_id] = builder()
            return self._built[model_id]

    def default_space(self) -> Space:
        space = self.space(self.default)
        assert space is not None  # checked at construction
        return space


@dataclass(frozen=True)
class Generation:
    """One generation of a namespace: its number, where its chunks live, how they are made."""

    public: TenantScope
    number: int
    space: Space
    chunking: Chunking

    @property
    def scope(self) -> TenantScope:
        """The storage scope (never shown to a caller: hits carry :attr:`public`)."""
        return storage_scope(self.public, self.number)

    def store(self, view: ReadView | None = None) -> VectorStore:
        """Its store, serving only what ``view`` admits (None: every chunk)."""
        if view is None:
            return self.space.stores.scoped(self.scope)
        return self.space.stores.scoped(self.scope, view)

    def chunk_plan(self, deployment: ChunkPlan) -> ChunkPlan:
        """How this generation cuts documents: its own chunking, the ``deployment``'s where it sets
        none (a size set without an overlap overlaps by the deployment's, at most a quarter of the
        size; a ``hierarchical`` parent unset is :data:`PARENT_SHARE` chunks, or the deployment's
        parent size when the chunk size is the deployment's too)."""
        own = self.chunking
        size = own.chunk_tokens or deployment.chunk_tokens
        if own.chunk_overlap_tokens:
            overlap = own.chunk_overlap_tokens
        else:
            overlap = (
                min(deployment.overlap_tokens, size // 4) if own.chunk_tokens else deployment.overlap_tokens
            )
        parent = own.parent_tokens or (PARENT_SHARE * size if own.chunk_tokens else deployment.parent_tokens)
        return ChunkPlan(own.strategy or deployment.strategy, size, overlap, max(parent, size))


def serving(catalog: ModelCatalog, namespace: Namespace) -> Generation:
    """The generation that answers ``namespace``'s queries. A namespace recorded with a model this
    deployment cannot serve gets the configured embedder — and the embedding-space guard refuses it
    (:class:`~ragline.errors.EmbeddingMismatch`): vectors of two models never meet."""
    s = namespace.settings
    space = catalog.space(s.embedding_model) if s.embedding_model else None
    space = space or catalog.default_space()
    check_embedding_space(namespace, space.embedder)
    return Generation(_public(namespace), s.generation, space, s.chunking)


def building(catalog: ModelCatalog, namespace: Namespace) -> Generation | None:
    """The generation a running reindex is building (``None``: none is)."""
    rebuild = namespace.settings.rebuild
    if rebuild is None or rebuild.state != "building":
        return None
    space = catalog.space(rebuild.embedding_model)
    if space is None:
        return None
    return Generation(_public(namespace), rebuild.generation, space, rebuild.chunking)


def _public(namespace: Namespace) -> TenantScope:
    return TenantScope(tenant_id=namespace.tenant_id, namespace_id=namespace.namespace_id)


class _NoTokenizer:
    """A read-only catalog's tokenizer: reading never chunks."""

    def count_many(self, texts: Sequence[str]) -> list[int]:
        raise NotImplementedError("this catalog only reads")
