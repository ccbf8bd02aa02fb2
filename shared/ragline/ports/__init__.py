"""Ports: the small Protocols the core depends on. Their docstrings are the contracts.

Every port has an embedded implementation (no servers) and a production one, and one contract-test
suite in ``tests/contract`` that both pass.

One module per concern (:mod:`.search`, :mod:`.models`, :mod:`.metering`, :mod:`.tenancy`,
:mod:`.documents`, :mod:`.events`, :mod:`.sources`, :mod:`.runs`, :mod:`.queues`); every port is
imported from here, ``from ragline.ports import VectorStore``.
"""

from ragline.ports.documents import DocumentRegistry, ObjectStore
from ragline.ports.events import EventPublisher, OnceMarks, WebhookStore, WebhookTransport
from ragline.ports.metering import RateLimiter, UsageLedger
from ragline.ports.models import (
    AnswerJudge,
    ChatModel,
    Embedder,
    GroundingScorer,
    Reranker,
    TextRecognizer,
    Tokenizer,
)
from ragline.ports.queues import RunQueue, StepQueue
from ragline.ports.runs import ConversationStore, RunLog
from ragline.ports.search import VectorStore, VectorStoreProvider
from ragline.ports.sources import KnownItems, Source, SourceRegistry, SourceSecrets, SyncScheduler
from ragline.ports.tenancy import ApiKeyLookup, TenantRegistry

__all__ = [
    "AnswerJudge",
    "ApiKeyLookup",
    "ChatModel",
    "ConversationStore",
    "DocumentRegistry",
    "Embedder",
    "EventPublisher",
    "GroundingScorer",
    "KnownItems",
    "ObjectStore",
    "OnceMarks",
    "RateLimiter",
    "Reranker",
    "RunLog",
    "RunQueue",
    "Source",
    "SourceRegistry",
    "SourceSecrets",
    "StepQueue",
    "SyncScheduler",
    "TenantRegistry",
    "TextRecognizer",
    "Tokenizer",
    "UsageLedger",
    "VectorStore",
    "VectorStoreProvider",
    "WebhookStore",
    "WebhookTransport",
]
