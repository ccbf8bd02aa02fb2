"""Where the container keeps things: the backend's stores (tenants, documents, usage, objects, runs,
sources…), chosen once by :func:`ragline.backends.backend_for`, and each embedding model's vector store.

Above :mod:`.models` in the container's layers: a vector store is sized by its model's dimension,
and the model catalog pairs each model with its store.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from ragline import errors
from ragline.backends import Backend, backend_for

from .models import ModelParts

if TYPE_CHECKING:
    from ragline.ports import (
        ConversationStore,
        Embedder,
        ObjectStore,
        OnceMarks,
        RateLimiter,
        RunLog,
        SourceRegistry,
        SourceSecrets,
        SyncScheduler,
        TenantRegistry,
        UsageLedger,
        VectorStoreProvider,
        WebhookStore,
    )
    from ragline.services.generations import ModelCatalog


class StorageParts(ModelParts):
    """The storage parts of :class:`~ragline.wiring.Container`: the backend's ports and the vector
    stores, each built on first use."""

    @cached_property
    def backend(self) -> Backend:
        return backend_for(self.settings)

    @cached_property
    def registry(self) -> TenantRegistry:
        return self.backend.registry()

    @cached_property
    def ledger(self) -> UsageLedger:
        return self.backend.ledger()

    @cached_property
    def limiter(self) -> RateLimiter:
        return self.backend.limiter()

    @cached_property
    def objects(self) -> ObjectStore:
        return self.backend.objects()

    @cached_property
    def webhook_store(self) -> WebhookStore:
        return self.backend.webhooks()

    @cached_property
    def once_marks(self) -> OnceMarks:
        return self.backend.once_marks()

    @cached_property
    def run_log(self) -> RunLog:
        return self.backend.run_log()

    @cached_property
    def conversation_store(self) -> ConversationStore:
        return self.backend.conversations()

    @cached_property
    def sources(self) -> SourceRegistry:
        return self.backend.sources()

    @cached_property
    def source_secrets(self) -> SourceSecrets:
        return self.backend.source_secrets()

    @cached_property
    def sync_scheduler(self) -> SyncScheduler:
        return self.backend.sync_scheduler()

    @cached_property
    def evaluation_objects(self) -> ObjectStore | None:
        """The evaluations store; None where there is none (AWS without an evaluations bucket)."""
        try:
            return self.backend.evaluation_objects()
        except errors.ConfigurationError:
            return None

    @cached_property
    def stores(self) -> VectorStoreProvider:
        return self.stores_for(self.embedder)

    def stores_for(self, embedder: Embedder) -> VectorStoreProvider:
        """The store vectors of ``embedder`` live in: an OpenSearch index per model, or the SQLite
        file (whose scopes carry vectors of any one dimension). A function deployed without the
        store's URL gets a stand-in that refuses every use (:class:`StoreNotDeployed`)."""
        if self.settings.resolved_store == "opensearch" and not self.settings.opensearch_url:
            from ragline.adapters.opensearch.client import StoreNotDeployed

            return StoreNotDeployed()
        if self.settings.resolved_store == "opensearch" and self.settings.opensearch_service == "aoss":
            from ragline.adapters.opensearch.serverless import ServerlessVectorStoreProvider

            return ServerlessVectorStoreProvider.from_settings(
                self.settings, dimension=embedder.dimension, model_id=embedder.model_id
            )
        if self.settings.resolved_store == "opensearch":
            from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider

            return OpenSearchVectorStoreProvider.from_settings(
                self.settings, dimension=embedder.dimension, model_id=embedder.model_id
            )
        from ragline.adapters.embedded.store import SqliteVectorStoreProvider

        return SqliteVectorStoreProvider(self.settings.home / "store.sqlite", dimension=embedder.dimension)

    @cached_property
    def catalog(self) -> ModelCatalog:
        """The embedding models a namespace may use: the configured one, and the offline MiniLM
        (both its generations' embedders, tokenizers and stores, built on first use). Tests pass
        their own (``Container(settings, catalog=...)``)."""
        from ragline.services.generations import ModelCatalog, Space

        builders = {self.embedder.model_id: lambda: Space(self.embedder, self.tokenizer, self.stores)}
        if self.settings.embedding_provider != "local":
            from ragline.documents.chunker import WordCachedCounter

            local = self.local_model
            builders[local.model_id] = lambda: Space(local, WordCachedCounter(local), self.stores_for(local))
        return ModelCatalog(self.embedder.model_id, builders)
