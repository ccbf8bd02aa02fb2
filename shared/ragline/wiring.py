"""The composition root: the only module (with :mod:`ragline.backends`) that imports adapters.
Everything is built lazily.

``embedded`` (default) wires SQLite files under ``settings.home`` and offline models; ``aws`` wires
DynamoDB and S3 (and OpenSearch as the store). The backend is chosen once, in :func:`backend_for`; a
model endpoint (``OPENAI_API_KEY``/``OPENAI_BASE_URL``) replaces the offline extractive chat model in
either. Tests and benchmarks swap any part with ``Container(settings, embedder=..., stores=...)``.
"""

from __future__ import annotations

import importlib
import importlib.util
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

from ragline import errors
from ragline.backends import Backend, api_key_lookup, backend_for
from ragline.environment import env_values

__all__ = ["Container", "api_key_lookup", "container", "release_connections", "warm_key_lookup"]

if TYPE_CHECKING:  # importing the wiring costs no pydantic (the authorizer imports only this module)
    from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
    from ragline.config import Settings
    from ragline.domain.generations import ReindexStep
    from ragline.domain.sources import SourceRecord, SyncStep
    from ragline.ports import (
        AnswerJudge,
        ChatModel,
        ConversationStore,
        DocumentRegistry,
        Embedder,
        EventPublisher,
        GroundingScorer,
        ObjectStore,
        OnceMarks,
        RateLimiter,
        Reranker,
        RunLog,
        RunQueue,
        Source,
        SourceRegistry,
        SourceSecrets,
        StepQueue,
        SyncScheduler,
        TenantRegistry,
        TextRecognizer,
        Tokenizer,
        UsageLedger,
        VectorStoreProvider,
        WebhookStore,
    )
    from ragline.services.answer_evals import AnswerEvaluations
    from ragline.services.background import BackgroundRuns
    from ragline.services.chat import ChatService
    from ragline.services.conversations import ConversationService
    from ragline.services.documents import DocumentService
    from ragline.services.evaluation import EvaluationService
    from ragline.services.events import Announcer, QuotaWatch
    from ragline.services.generations import ModelCatalog
    from ragline.services.hosting_search import HostingSearchService
    from ragline.services.identity_providers import IdentityProviderService
    from ragline.services.ingest import IngestService
    from ragline.services.limits import FairShare
    from ragline.services.metering import Metering
    from ragline.services.namespaces import NamespaceService
    from ragline.services.reindex import ReindexService
    from ragline.services.retrieval import RetrievalService
    from ragline.services.runs import RunService
    from ragline.services.search import SearchService
    from ragline.services.source_sync import SourceSync
    from ragline.services.sources import SourceService
    from ragline.services.tenancy import TenancyService
    from ragline.services.tenant_deletion import TenantDeletion
    from ragline.services.tenant_gate import TenantGate
    from ragline.services.webhooks import WebhookDelivery, WebhookService


EXIT_EVENT_GRACE_SECONDS = 10.0
"""How long a local command's end may spend delivering its webhook events (a POST begun then may take
its own 10 s more)."""


class Container:
    """Builds each part on first use. ``Container(settings, **overrides)`` replaces parts by name
    (any port or service below), so a test swaps the embedder without touching internals."""

    def __init__(self, settings: Settings, **overrides: Any) -> None:
        self.settings = settings
        self._overrides = frozenset(overrides)
        for name, value in overrides.items():
            if not isinstance(getattr(type(self), name, None), cached_property):
                raise TypeError(f"Container has no part named {name!r}")
            self.__dict__[name] = value  # what cached_property would have stored

    # -- ports ---------------------------------------------------------------------------------
    @cached_property
    def backend(self) -> Backend:
        return backend_for(self.settings)

    @cached_property
    def registry(self) -> TenantRegistry:
        return self.backend.registry()

    @cached_property
    def documents(self) -> DocumentRegistry:
        """Announcing each settled record when events are on (see :mod:`ragline.services.events`)."""
        from ragline.services.events import AnnouncingDocuments

        inner = self.backend.documents()
        return AnnouncingDocuments(inner, self.announcer) if self.announcer.enabled else inner

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
    def embedder(self) -> Embedder:
        """Offline by default; vectors are cached (re-embedding unchanged text costs nothing)."""
        from ragline.adapters.embedded.embedding_cache import EmbeddingCache

        s = self.settings
        inner: Embedder
        if s.embedding_provider == "openai":
            from ragline.adapters.openai.embedder import OpenAIEmbedder

            inner = OpenAIEmbedder.from_settings(s)
        elif s.embedding_provider == "bedrock":
            from ragline.adapters.bedrock.embedder import BedrockEmbedder

            inner = BedrockEmbedder(
                model=s.bedrock_embedding_model, dimension=s.embedding_dimension, region=s.aws_region
            )
        else:
            inner = self.local_model
        path = s.home / "cache" / "embeddings.sqlite"
        return EmbeddingCache(inner, path, max_bytes=s.embedding_cache_mib * 1024 * 1024)

    @cached_property
    def tokenizer(self) -> Tokenizer:
        """The chunker counts in the embedder's own tokens: the local model's tokenizer (each distinct
        word encoded once), or the endpoint embedder's own count (no local model loaded)."""
        from ragline.documents.chunker import EmbedderTokenCounter, WordCachedCounter

        if self.settings.embedding_provider != "local":
            return EmbedderTokenCounter(self.embedder)
        return WordCachedCounter(self.local_model)

    @cached_property
    def local_model(self) -> LocalOnnxEmbedder:
        """The offline MiniLM (embedder and tokenizer); built only when embeddings are local."""
        from ragline.adapters.local_models.embedder import LocalOnnxEmbedder

        return LocalOnnxEmbedder(batch_size=self.settings.embed_batch_size)

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

    @cached_property
    def chat_model(self) -> ChatModel:
        """The model of every agent, router and hosting search (``settings.chat_backend``); a turn
        whose conversation does not fit its context window is pruned and asked once more."""
        from ragline.agents.fitting import ContextFitting

        return ContextFitting(self._chat_backend())

    def _chat_backend(self) -> ChatModel:
        s = self.settings
        if s.chat_backend == "bedrock":
            from ragline.adapters.bedrock.chat import BedrockChatModel

            return BedrockChatModel(
                model=s.bedrock_chat_model,
                region=s.aws_region,
                cache_points=s.bedrock_cache_points,
                retries=s.llm_max_retries,
                read_timeout_s=s.llm_timeout_s or 60.0,
            )
        if s.chat_backend == "openai":
            from ragline.adapters.openai.chat import OpenAIChatModel

            return OpenAIChatModel.from_settings(self.llm_settings)
        from ragline.adapters.local_models.extractive_chat import ExtractiveChatModel

        return ExtractiveChatModel()

    @cached_property
    def llm_settings(self) -> Settings:
        """The settings with the LLM key filled in from Secrets Manager when one is named."""
        s = self.settings
        if not s.llm_api_key_secret or s.openai_api_key.get_secret_value():
            return s
        from pydantic import SecretStr

        from ragline.adapters.aws.secrets import SecretsManagerSecret

        key = SecretsManagerSecret(s.llm_api_key_secret).value()
        return s.model_copy(update={"openai_api_key": SecretStr(key)})

    @cached_property
    def reranker(self) -> Reranker | None:
        """``auto``: the LLM listwise reranker when a model endpoint is configured, else none."""
        choice = self.settings.reranker
        if choice == "auto":
            choice = "llm" if self.settings.llm_configured else "none"
        if choice == "none":
            return None
        if choice == "bedrock":
            from ragline.adapters.bedrock.regions import default_rerank_model
            from ragline.adapters.bedrock.reranker import BedrockReranker

            region = self.settings.aws_region
            model = self.settings.bedrock_rerank_model or default_rerank_model(region)
            return BedrockReranker(model=model, region=region)
        if choice == "cross-encoder":
            from ragline.adapters.local_models.cross_encoder import OnnxCrossEncoderReranker

            s = self.settings
            return OnnxCrossEncoderReranker(s.cross_encoder_model, s.cross_encoder_tokenizer)
        from ragline.adapters.rerank import LlmListwiseReranker

        return LlmListwiseReranker(self.chat_model)

    @cached_property
    def event_publisher(self) -> EventPublisher | None:
        """aws: the EventBridge bus (``event_bus_name``; none: no events); embedded: the outbox under
        ``home``, relayed to this process's webhook delivery."""
        s = self.settings
        if s.backend == "aws":
            if not s.event_bus_name:
                return None
            from ragline.adapters.aws.events import EventBridgePublisher

            return EventBridgePublisher(s.event_bus_name, region=s.aws_region)
        from ragline.adapters.embedded.events import SqliteEventOutbox
        from ragline.backends import EVENTS_FILE

        return SqliteEventOutbox(s.home / EVENTS_FILE, deliver=self.webhook_delivery.deliver)

    @cached_property
    def webhook_store(self) -> WebhookStore:
        return self.backend.webhooks()

    @cached_property
    def once_marks(self) -> OnceMarks:
        return self.backend.once_marks()

    @cached_property
    def grounding_scorer(self) -> GroundingScorer | None:
        """``settings.resolved_grounding``'s scorer (None: grounding off)."""
        s = self.settings
        choice = s.resolved_grounding
        if choice == "none":
            return None
        if choice == "bedrock":
            from ragline.adapters.bedrock.guardrail import BedrockGuardrailGroundingScorer

            return BedrockGuardrailGroundingScorer(
                guardrail_id=s.grounding_guardrail_id,
                version=s.grounding_guardrail_version,
                region=s.aws_region,
            )
        if choice == "judge":
            from ragline import errors
            from ragline.adapters.grounding.judge import ChatJudgeGroundingScorer

            # the offline extractive model judges nothing: refused here, not "unavailable" per answer
            if not s.llm_configured and "chat_model" not in self._overrides:
                raise errors.ConfigurationError(
                    "the judge grounding scorer needs a chat model: set RAGLINE_CHAT_PROVIDER (bedrock) or "
                    "an OpenAI-compatible endpoint (OPENAI_API_KEY, RAGLINE_OPENAI_BASE_URL), or choose "
                    "RAGLINE_GROUNDING=verifier"
                )
            return ChatJudgeGroundingScorer(self.chat_model)
        if choice == "overlap":
            from ragline.adapters.grounding.overlap import OverlapGroundingScorer

            return OverlapGroundingScorer()
        from ragline.adapters.grounding.verifier import LexicalVerifierGroundingScorer

        return LexicalVerifierGroundingScorer()

    # -- services ------------------------------------------------------------------------------
    @cached_property
    def announcer(self) -> Announcer:
        from ragline.services.events import Announcer

        return Announcer(self.event_publisher)

    @cached_property
    def quota_watch(self) -> QuotaWatch:
        from ragline.services.events import QuotaWatch

        return QuotaWatch(ledger=self.ledger, marks=self.once_marks, announcer=self.announcer)

    @cached_property
    def webhooks(self) -> WebhookService:
        from ragline.services.webhooks import WebhookService

        return WebhookService(self.webhook_store, loopback_http=self.settings.webhook_loopback_http)

    @cached_property
    def webhook_delivery(self) -> WebhookDelivery:
        from ragline.adapters.webhook_http import HttpWebhookTransport
        from ragline.services.webhooks import WebhookDelivery

        return WebhookDelivery(
            self.webhook_store,
            self.once_marks,
            HttpWebhookTransport(allow_loopback=self.settings.webhook_loopback_http),
            loopback_http=self.settings.webhook_loopback_http,
        )

    @cached_property
    def retrieval(self) -> RetrievalService:
        from ragline.services.retrieval import RetrievalService

        s = self.settings
        return RetrievalService(
            registry=self.registry,
            stores=self.stores,
            embedder=self.embedder,
            reranker=self.reranker,
            fusion=s.hybrid_fusion,
            rrf_k=s.rrf_k,
            alpha=s.hybrid_alpha,
            catalog=self.catalog,
        )

    @cached_property
    def metering(self) -> Metering:
        from ragline.services.metering import Metering

        return Metering(
            ledger=self.ledger,
            registry=self.registry,
            documents=self.documents,
            fair_share=self.fair_share,
            quota_watch=self.quota_watch,
        )

    @cached_property
    def search(self) -> SearchService:
        from ragline.services.search import SearchService

        return SearchService(retrieval=self.retrieval, metering=self.metering)

    @cached_property
    def hosting_search(self) -> HostingSearchService:
        from ragline.agents.hosting_search import HostingLimits
        from ragline.agents.planners import LlmPlanner, OfflinePlanner
        from ragline.services.hosting_search import HostingSearchService

        planner = LlmPlanner(self.chat_model) if self.settings.llm_configured else OfflinePlanner()
        return HostingSearchService(
            retrieval=self.retrieval, planner=planner, metering=self.metering, limits=HostingLimits()
        )

    @cached_property
    def chat(self) -> ChatService:
        from ragline.agents.base import LoopLimits
        from ragline.domain.grounding import GroundingLimits
        from ragline.services.chat import ChatService
        from ragline.services.grounding import GroundingService

        s = self.settings
        limits = GroundingLimits(
            max_sentences=s.grounding_max_sentences, max_passage_chars=s.grounding_max_chunk_chars
        )
        return ChatService(
            retrieval=self.retrieval,
            model=self.chat_model,
            planner=self.chat_model if s.llm_configured else None,
            metering=self.metering,
            search_first=s.tool_choice == "required_first",
            chunks_per_search=s.chunks_per_search,
            layout=s.tool_results,
            grounding=GroundingService(self.grounding_scorer, limits),
            runs=self.runs,
            conversations=self.conversations,
            limits=LoopLimits(
                max_output_tokens=s.max_output_tokens,
                turn_output_tokens=s.turn_output_tokens,
                max_tool_calls_per_turn=s.max_tool_calls_per_turn,
                max_tool_calls_per_run=s.max_tool_calls_per_run,
            ),
        )

    @cached_property
    def run_log(self) -> RunLog:
        return self.backend.run_log()

    @cached_property
    def conversation_store(self) -> ConversationStore:
        return self.backend.conversations()

    @cached_property
    def runs(self) -> RunService:
        from ragline.services.runs import RunService

        return RunService(self.run_log, announcer=self.announcer)

    @cached_property
    def conversations(self) -> ConversationService:
        from ragline.services.conversations import ConversationService

        return ConversationService(self.conversation_store, self.documents)

    @cached_property
    def run_queue(self) -> RunQueue:
        """Where background runs run: the runs queue (``runs_queue_url``), else threads of this process."""
        if self.settings.runs_queue_url:
            from ragline.adapters.aws.run_queue import SqsRunQueue

            return SqsRunQueue(self.settings.runs_queue_url)
        from ragline.adapters.embedded.run_queue import ThreadRunQueue

        # late-bound: the services are built from this queue
        return ThreadRunQueue(self.queued_work)

    def queued_work(self, tenant_id: str, run_id: str, message: str) -> bool:
        """One runs-queue message: an evaluation job's slice, or a background chat run."""
        from ragline.services.answer_evals import is_evaluation

        if is_evaluation(message):
            return self.evaluations.work(tenant_id, run_id)
        return self.background.work(tenant_id, run_id, message)

    @cached_property
    def background(self) -> BackgroundRuns:
        from ragline.services.background import BackgroundRuns

        return BackgroundRuns(self.chat, self.runs, self.run_queue, self.tenant_gate)

    @cached_property
    def evaluations(self) -> AnswerEvaluations:
        from ragline.services.answer_evals import AnswerEvaluations

        s = self.settings
        return AnswerEvaluations(
            chat=self.chat,
            metering=self.metering,
            objects=self.evaluation_objects or self.backend.evaluation_objects(),  # None: the reason
            judge=self.answer_judge,
            queue=self.run_queue,
            slice_s=s.evaluation_slice_s if s.runs_queue_url else None,
        )

    @cached_property
    def answer_judge(self) -> AnswerJudge:
        """``settings.evaluation_judge``: the chat model, or the offline reference-overlap judge."""
        from ragline.adapters.grounding.answer_judges import ModelAnswerJudge, ReferenceOverlapJudge

        choice = self.settings.evaluation_judge
        if choice == "auto":
            model = self.settings.llm_configured or "chat_model" in self._overrides
            choice = "model" if model else "offline"
        return ModelAnswerJudge(self.chat_model) if choice == "model" else ReferenceOverlapJudge()

    @property
    def _chunking(self) -> dict[str, Any]:
        """The deployment's parsing and chunking, as ingestion and a reindex's writer both use it."""
        s = self.settings
        return {
            "chunk_tokens": s.chunk_tokens,
            "chunk_overlap_tokens": s.chunk_overlap_tokens,
            "chunking_strategy": s.chunking,
            "chunk_parent_tokens": s.chunk_parent_tokens,
            "max_document_bytes": s.max_document_bytes,
            "max_document_seconds": s.max_document_seconds,
            "recognizer": self.text_recognizer,
        }

    @cached_property
    def text_recognizer(self) -> TextRecognizer | None:
        """The OCR engine (``RAGLINE_OCR``): offline PP-OCRv4, Amazon Textract, or none."""
        s = self.settings
        if s.ocr == "off" or (s.ocr == "auto" and importlib.util.find_spec("rapidocr_onnxruntime") is None):
            return None
        if s.ocr == "textract":
            from ragline.adapters.aws.textract import TextractRecognizer

            return TextractRecognizer(region=s.aws_region)
        from ragline.adapters.local_models.ocr import RapidOcrRecognizer

        return RapidOcrRecognizer()

    @cached_property
    def ingest(self) -> IngestService:
        from ragline.services.ingest import IngestService, IngestSettings

        s = self.settings
        return IngestService(
            registry=self.registry,
            documents=self.documents,
            objects=self.objects,
            stores=self.stores,
            embedder=self.embedder,
            tokenizer=self.tokenizer,
            settings=IngestSettings(**self._chunking),
            bucket=s.documents_bucket,
            ledger=self.ledger,
            catalog=self.catalog,
            announcer=self.announcer,
        )

    @cached_property
    def document_service(self) -> DocumentService:
        from ragline.services.documents import DocumentService

        return DocumentService(
            registry=self.registry, documents=self.documents, objects=self.objects, ingest=self.ingest
        )

    @cached_property
    def namespaces(self) -> NamespaceService:
        from ragline.services.namespaces import NamespaceService

        return NamespaceService(
            registry=self.registry, documents=self.documents, reindex=self.reindex, sources=self.sources
        )

    @cached_property
    def reindex(self) -> ReindexService:
        from ragline.services.generation_writer import GenerationWriter, WriterSettings
        from ragline.services.reindex import ReindexService, ReindexSettings

        s = self.settings
        writer = GenerationWriter(
            registry=self.registry,
            catalog=self.catalog,
            settings=WriterSettings(**self._chunking),
            ledger=self.ledger,
        )
        return ReindexService(
            registry=self.registry,
            documents=self.documents,
            objects=self.objects,
            catalog=self.catalog,
            writer=writer,
            queue=self.step_queue,
            settings=ReindexSettings(
                step_documents=s.reindex_step_documents, retire_seconds=s.reindex_retire_seconds
            ),
            announcer=self.announcer,
        )

    @cached_property
    def step_queue(self) -> StepQueue:
        """Where a reindex's steps run: the ingestion queue (``reindex_queue_url``), else a thread."""
        if self.settings.reindex_queue_url:
            from ragline.adapters.aws.step_queue import SqsStepQueue

            return SqsStepQueue(self.settings.reindex_queue_url)
        from ragline.adapters.embedded.step_queue import ThreadStepQueue

        return ThreadStepQueue(self.run_step)

    def run_step(self, step: ReindexStep | SyncStep) -> None:
        """A queued step in this process: a reindex's or a source sync's."""
        from ragline.domain.generations import ReindexStep

        if isinstance(step, ReindexStep):
            self.reindex.run(step)
        else:
            self.source_sync.run(step)

    @cached_property
    def sources(self) -> SourceRegistry:
        return self.backend.sources()

    @cached_property
    def source_secrets(self) -> SourceSecrets:
        return self.backend.source_secrets()

    @cached_property
    def sync_scheduler(self) -> SyncScheduler:
        return self.backend.sync_scheduler()

    def connector(self, record: SourceRecord) -> Source:
        """The connector of a data source, from its kind, settings and credentials."""
        from ragline.adapters.sources.web import WebSource
        from ragline.domain.source_settings import WebSettings

        loopback = self.settings.source_loopback_http
        if record.kind == "web":
            return WebSource(WebSettings.model_validate(record.settings), allow_loopback=loopback)
        try:
            credentials = self.source_secrets.get(record.tenant_id, record.namespace_id, record.source_id)
        except errors.NotFound:
            raise errors.ConfigurationError(
                "the source has no credentials: PATCH them in", source_id=record.source_id
            ) from None
        if record.kind == "confluence":
            from ragline.adapters.sources.confluence import ConfluenceSource
            from ragline.domain.source_settings import ConfluenceSettings

            settings = ConfluenceSettings.model_validate(record.settings)
            return ConfluenceSource(settings, credentials, allow_loopback=loopback)
        if record.kind == "graph":
            from ragline.adapters.sources.graph import GraphSource
            from ragline.domain.source_settings import GraphSettings

            return GraphSource(
                GraphSettings.model_validate(record.settings), credentials, allow_loopback=loopback
            )
        raise errors.ConfigurationError(f"no connector for sources of kind {record.kind!r}", kind=record.kind)

    @cached_property
    def source_sync(self) -> SourceSync:
        from ragline.services.source_sync import SourceSync

        return SourceSync(
            sources=self.sources,
            connector=self.connector,
            ingest=self.ingest,
            documents=self.documents,
            queue=self.step_queue,
        )

    @cached_property
    def source_service(self) -> SourceService:
        from ragline.services.sources import SourceService

        return SourceService(
            registry=self.registry,
            sources=self.sources,
            queue=self.step_queue,
            secrets=self.source_secrets,
            scheduler=self.sync_scheduler,
            loopback_http=self.settings.source_loopback_http,
        )

    @cached_property
    def tenancy(self) -> TenancyService:
        from ragline.services.identity_tokens import TokenVerifier
        from ragline.services.tenancy import TenancyService

        tokens = TokenVerifier(loopback_http=self.settings.identity_loopback_http)
        return TenancyService(self.registry, tokens=tokens)

    @cached_property
    def identity_providers(self) -> IdentityProviderService:
        from ragline.services.identity_providers import IdentityProviderService

        return IdentityProviderService(self.registry, loopback_http=self.settings.identity_loopback_http)

    @cached_property
    def tenant_gate(self) -> TenantGate:
        from ragline.services.tenant_gate import TenantGate

        return TenantGate(self.registry, fair_share=self.fair_share)

    @cached_property
    def fair_share(self) -> FairShare:
        from ragline.services.limits import FairShare

        return FairShare(self.limiter, defaults=self.settings.default_limits)

    @cached_property
    def tenant_deletion(self) -> TenantDeletion:
        from ragline.services.tenant_deletion import TenantDeletion

        return TenantDeletion(
            tenancy=self.tenancy,
            registry=self.registry,
            objects=self.objects,
            stores=self.stores,
            documents=self.documents,
            ledger=self.ledger,
            catalog=self.catalog,
            webhooks=self.webhook_store,
            limiter=self.limiter,
            sources=self.sources,
            source_secrets=self.source_secrets,
            sync_scheduler=self.sync_scheduler,
            run_log=self.run_log,
            conversations=self.conversation_store,
            evaluations=self.evaluation_objects,
        )

    @cached_property
    def evaluation_objects(self) -> ObjectStore | None:
        """The evaluations store; None where there is none (AWS without an evaluations bucket)."""
        from ragline import errors

        try:
            return self.backend.evaluation_objects()
        except errors.ConfigurationError:
            return None

    @cached_property
    def evaluation(self) -> EvaluationService:
        from ragline.services.evaluation import EvaluationService

        return EvaluationService(
            registry=self.registry,
            stores=self.stores,
            embedder=self.embedder,
            retrieval=self.retrieval,
            chunks_per_search=self.settings.chunks_per_search,
        )

    def close(self) -> None:
        if "stores" in self.__dict__:
            self.stores.close()

    def deliver_pending_events(self, seconds: float = EXIT_EVENT_GRACE_SECONDS) -> int:
        """Before a local process exits: the outbox's due events delivered, starting none after
        ``seconds`` (the relay thread dies with the process). Only where this container built the
        outbox (it published, or could have); on AWS the bus delivers: nothing to do."""
        from ragline.adapters.embedded.events import SqliteEventOutbox

        outbox = self.__dict__.get("event_publisher")
        return outbox.drain(seconds) if isinstance(outbox, SqliteEventOutbox) else 0

    def release_connections(self) -> None:
        """Close every connection pool this container's parts hold and forget the parts (overrides
        excepted): each is rebuilt on its next use, so no socket, client or credential outlives a
        SnapStart snapshot. The modules, models and parsed service models they used stay loaded."""
        from ragline.adapters.boto import release_clients

        for name in ("stores", "chat_model", "embedder", "reranker"):
            part = self.__dict__.get(name)
            for holder in (part, getattr(part, "inner", None)):  # a wrapper's model (ContextFitting)
                close = getattr(holder, "close", None)
                if callable(close):
                    close()
        for name in [n for n in self.__dict__ if isinstance(getattr(type(self), n, None), cached_property)]:
            if name not in self._overrides:
                del self.__dict__[name]
        release_clients()

    def aws_services(self) -> tuple[str, ...]:
        """The AWS services this configuration calls (their models are worth parsing at init)."""
        s = self.settings
        services = ["dynamodb", "s3"] if s.backend == "aws" else []
        if "bedrock" in (s.embedding_provider, s.chat_backend, s.resolved_grounding):
            services.append("bedrock-runtime")
        if s.reranker == "bedrock":
            services.append("bedrock-agent-runtime")
        if s.chat_backend == "openai" and s.llm_api_key_secret:
            services.append("secretsmanager")
        return tuple(services)

    def warm(self, parts: tuple[str, ...] = ()) -> None:
        """SnapStart's init (:func:`ragline.snapstart.prepare`): import the modules of ``parts`` (the
        services a handler uses; all when none is named) and of the configured adapters, and parse
        their AWS service models — building no part: no client, no credential, no connection (the LLM
        key would be read from Secrets Manager; SigV4 would resolve credentials)."""
        from ragline.adapters.boto import warm_models

        s = self.settings
        modules = [m for part in parts or tuple(SERVICE_MODULES) for m in SERVICE_MODULES[part]]
        backend = "aws" if s.backend == "aws" else "embedded"
        adapters = ("tenants", "documents", "ledger", "objects", "limits")
        modules += [f"ragline.adapters.{backend}.{m}" for m in adapters]
        if s.resolved_store == "opensearch" and s.opensearch_service == "aoss":
            modules += [
                "ragline.adapters.opensearch.serverless",
                "ragline.adapters.opensearch.serverless_store",
            ]
        elif s.resolved_store == "opensearch":
            modules.append("ragline.adapters.opensearch.store")
        else:  # with the stemmer its keyword index loads on first use
            modules += ["ragline.adapters.embedded.store", "snowballstemmer"]
        if "bedrock" in (s.embedding_provider, s.reranker):
            modules += ["ragline.adapters.bedrock.embedder", "ragline.adapters.bedrock.reranker"]
        if s.chat_backend in ("bedrock", "openai"):
            modules += [f"ragline.adapters.{s.chat_backend}.chat", "ragline.agents.fitting"]
        if s.llm_configured:
            modules.append("ragline.adapters.rerank")
        modules += GROUNDING_MODULES[s.resolved_grounding]
        for module in ["ragline.services.tenant_gate", "ragline.services.limits", *modules]:
            importlib.import_module(module)
        warm_models(self.aws_services())


GROUNDING_MODULES: dict[str, list[str]] = {
    "none": [],
    "verifier": ["ragline.adapters.grounding.verifier", "snowballstemmer"],
    "overlap": ["ragline.adapters.grounding.overlap", "snowballstemmer"],
    "judge": ["ragline.adapters.grounding.judge"],
    "bedrock": ["ragline.adapters.bedrock.guardrail"],
}
"""The grounding scorer's modules, by ``settings.resolved_grounding``."""

SERVICE_MODULES: dict[str, tuple[str, ...]] = {
    "search": ("ragline.services.search",),
    "hosting_search": ("ragline.services.hosting_search", "ragline.agents.planners"),
    "chat": ("ragline.services.chat", "ragline.agents.planners", "ragline.services.grounding"),
    "document_service": ("ragline.services.documents", "ragline.services.ingest"),
    "ingest": ("ragline.services.ingest",),
    "namespaces": ("ragline.services.namespaces", "ragline.services.reindex"),
    "tenancy": ("ragline.services.tenancy",),
    "metering": ("ragline.services.metering",),
    "identity_providers": ("ragline.services.identity_providers",),
    "webhooks": ("ragline.services.webhooks", "ragline.domain.webhook_api"),
    "webhook_delivery": ("ragline.services.webhooks", "ragline.adapters.webhook_http"),
}
"""The modules a container service's construction and first use import (SnapStart's init warms them)."""


def release_connections() -> None:
    """Close and forget every connection pool and AWS client of the process: the container's parts
    (when it was built) and any other boto3 client (the authorizer's key lookup). Idempotent."""
    from ragline.adapters.boto import release_clients

    if container.cache_info().currsize:
        container().release_connections()  # its parts, then every client
    else:
        release_clients()


def warm_key_lookup() -> None:
    """The authorizer's SnapStart init: the key lookup's AWS model, without the settings model."""
    if env_values(("backend",)).get("backend") == "aws":
        from ragline.adapters.boto import warm_models

        warm_models(("dynamodb",))


@cache
def container() -> Container:
    """The process's one container (a Lambda container keeps it across invocations)."""
    from ragline.config import load_settings

    return Container(load_settings())
