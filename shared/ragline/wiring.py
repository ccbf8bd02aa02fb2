"""The composition root: the only module that imports adapters. Everything is built lazily.

``embedded`` (default) wires SQLite files under ``settings.home`` and offline models; ``aws`` wires
OpenSearch, DynamoDB and S3. A model endpoint (``OPENAI_API_KEY``/``OPENAI_BASE_URL``) replaces the
offline extractive chat model in either backend.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from ragline.agents.agentic import LoopLimits
from ragline.agents.tools import RerankFn
from ragline.config import Settings
from ragline.domain.models import RunUsage, SearchHit
from ragline.errors import ConfigurationError
from ragline.ports import (
    ChatModel,
    DocumentRegistry,
    Embedder,
    ObjectStore,
    Reranker,
    TenantRegistry,
    Tokenizer,
    UsageLedger,
    VectorStoreProvider,
)
from ragline.services.chat import ChatService
from ragline.services.evaluation import EvaluationService
from ragline.services.ingest import IngestService, IngestSettings
from ragline.services.metering import Metering
from ragline.services.search import SearchService
from ragline.services.tenancy import TenancyService

if TYPE_CHECKING:
    from ragline.adapters.local_models.embedder import LocalOnnxEmbedder


class Container:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @cached_property
    def onnx(self) -> LocalOnnxEmbedder:
        from ragline.adapters.local_models.embedder import LocalOnnxEmbedder

        return LocalOnnxEmbedder(batch_size=self.settings.embed_batch_size)

    @cached_property
    def embedder(self) -> Embedder:
        """Offline by default; vectors are cached (re-embedding unchanged text costs nothing)."""
        from ragline.adapters.embedded.embedding_cache import EmbeddingCache

        inner: Embedder = self.onnx
        if self.settings.embedding_provider == "openai":
            from ragline.adapters.openai.embedder import OpenAIEmbedder

            inner = OpenAIEmbedder.from_settings(self.settings)
        return EmbeddingCache(inner, self.settings.home / "cache" / "embeddings.sqlite")

    @cached_property
    def tokenizer(self) -> Tokenizer:
        """The chunker counts in the embedder's own tokens (each distinct word encoded once)."""
        from ragline.documents.chunker import WordCachedCounter

        return WordCachedCounter(self.onnx)

    @cached_property
    def stores(self) -> VectorStoreProvider:
        if self.settings.resolved_store == "opensearch":
            from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider

            return OpenSearchVectorStoreProvider.from_settings(
                self.settings, dimension=self.embedder.dimension, model_id=self.embedder.model_id
            )
        from ragline.adapters.embedded.store import SqliteVectorStoreProvider

        return SqliteVectorStoreProvider(
            self.settings.home / "store.sqlite", dimension=self.embedder.dimension
        )

    @cached_property
    def registry(self) -> TenantRegistry:
        if self.settings.backend == "aws":
            from ragline.adapters.aws.tenants import DynamoDbTenantRegistry

            return DynamoDbTenantRegistry(self._required("tenants_table"))
        from ragline.adapters.embedded.tenants import SqliteTenantRegistry

        return SqliteTenantRegistry(self.settings.home / "tenants.sqlite")

    @cached_property
    def documents(self) -> DocumentRegistry:
        if self.settings.backend == "aws":
            from ragline.adapters.aws.documents import DynamoDbDocumentRegistry

            return DynamoDbDocumentRegistry(self._required("documents_table"))
        from ragline.adapters.embedded.documents import SqliteDocumentRegistry

        return SqliteDocumentRegistry(self.settings.home / "documents.sqlite")

    @cached_property
    def objects(self) -> ObjectStore:
        if self.settings.backend == "aws":
            from ragline.adapters.aws.objects import S3ObjectStore

            return S3ObjectStore(self._required("documents_bucket"))
        from ragline.adapters.embedded.objects import LocalObjectStore

        return LocalObjectStore(self.settings.home / "objects")

    def _required(self, name: str) -> str:
        value = str(getattr(self.settings, name))
        if not value:
            raise ConfigurationError(f"RAGLINE_{name.upper()} must be set for the aws backend")
        return value

    @cached_property
    def metering(self) -> Metering:
        return Metering(ledger=self.ledger, registry=self.registry)

    @cached_property
    def tenancy(self) -> TenancyService:
        return TenancyService(self.registry)

    @cached_property
    def ledger(self) -> UsageLedger:
        if self.settings.backend == "aws":
            from ragline.adapters.aws.ledger import DynamoDbUsageLedger

            return DynamoDbUsageLedger(self._required("usage_table"))
        from ragline.adapters.embedded.ledger import SqliteUsageLedger

        return SqliteUsageLedger(self.settings.home / "usage.sqlite")

    @cached_property
    def chat_model(self) -> ChatModel:
        if self.settings.llm_configured:
            from ragline.adapters.openai.chat import OpenAIChatModel

            return OpenAIChatModel.from_settings(self.settings)
        from ragline.adapters.local_models.extractive_chat import ExtractiveChatModel

        return ExtractiveChatModel()

    @cached_property
    def search(self) -> SearchService:
        return SearchService(
            registry=self.registry,
            stores=self.stores,
            embedder=self.embedder,
            rrf_k=self.settings.rrf_k,
            fusion=self.settings.hybrid_fusion,
            alpha=self.settings.hybrid_alpha,
        )

    @cached_property
    def ingest(self) -> IngestService:
        s = self.settings
        return IngestService(
            registry=self.registry,
            documents=self.documents,
            objects=self.objects,
            stores=self.stores,
            embedder=self.embedder,
            tokenizer=self.tokenizer,
            settings=IngestSettings(
                chunk_tokens=s.chunk_tokens,
                chunk_overlap_tokens=s.chunk_overlap_tokens,
                max_document_bytes=s.max_document_bytes,
            ),
        )

    @cached_property
    def rerank(self) -> RerankFn | None:
        """The chat's rerank step: the configured reranker behind a fused-order fallback."""
        from ragline.adapters.rerank import FallbackReranker, LlmListwiseReranker

        choice = self.settings.reranker
        if choice == "auto":
            choice = "llm" if self.settings.llm_configured else "none"
        if choice == "none":
            return None
        if choice == "cross-encoder":
            from ragline.adapters.local_models.cross_encoder import OnnxCrossEncoderReranker

            inner: Reranker = OnnxCrossEncoderReranker(
                self.settings.cross_encoder_model, self.settings.cross_encoder_tokenizer
            )
        else:
            inner = LlmListwiseReranker(self.chat_model)
        reranker = FallbackReranker(inner)

        def rerank(
            query: str, hits: list[SearchHit], keep: int
        ) -> tuple[list[SearchHit], RunUsage, str | None]:
            outcome = reranker.rerank_outcome(query, hits, keep)
            return outcome.hits, outcome.usage, outcome.warning

        return rerank

    @cached_property
    def chat(self) -> ChatService:
        return ChatService(
            registry=self.registry,
            stores=self.stores,
            search=self.search,
            model=self.chat_model,
            ledger=self.ledger,
            rerank=self.rerank,
            limits=LoopLimits(max_output_tokens=self.settings.max_output_tokens),
        )

    @cached_property
    def evaluation(self) -> EvaluationService:
        return EvaluationService(
            registry=self.registry, stores=self.stores, embedder=self.embedder, search=self.search
        )

    def close(self) -> None:
        if "stores" in self.__dict__:
            self.stores.close()
