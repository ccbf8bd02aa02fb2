"""The services a request calls: retrieval and search, chat (with its runs and conversations),
ingestion and documents, tenancy and identity, limits and metering, evaluation and tenant deletion.

Above :mod:`.events`: every service is built from the stores, models and announcer below it. The
services whose work goes on a queue (background runs, reindexes, source syncs) are in :mod:`.work`.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from .events import EventParts

if TYPE_CHECKING:
    from ragline.services.chat import ChatService
    from ragline.services.conversations import ConversationService
    from ragline.services.documents import DocumentService
    from ragline.services.evaluation import EvaluationService
    from ragline.services.hosting_search import HostingSearchService
    from ragline.services.identity_providers import IdentityProviderService
    from ragline.services.ingest import IngestService
    from ragline.services.limits import FairShare
    from ragline.services.metering import Metering
    from ragline.services.retrieval import RetrievalService
    from ragline.services.runs import RunService
    from ragline.services.search import SearchService
    from ragline.services.tenancy import TenancyService
    from ragline.services.tenant_deletion import TenantDeletion
    from ragline.services.tenant_gate import TenantGate


class ServiceParts(EventParts):
    """The request services of :class:`~ragline.wiring.Container`, each built on first use."""

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
    def runs(self) -> RunService:
        from ragline.services.runs import RunService

        return RunService(self.run_log, announcer=self.announcer)

    @cached_property
    def conversations(self) -> ConversationService:
        from ragline.services.conversations import ConversationService

        return ConversationService(self.conversation_store, self.documents)

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
    def evaluation(self) -> EvaluationService:
        from ragline.services.evaluation import EvaluationService

        return EvaluationService(
            registry=self.registry,
            stores=self.stores,
            embedder=self.embedder,
            retrieval=self.retrieval,
            chunks_per_search=self.settings.chunks_per_search,
        )
