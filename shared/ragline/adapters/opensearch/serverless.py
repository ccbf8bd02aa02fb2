""":class:`~ragline.ports.VectorStoreProvider` on an OpenSearch Serverless vector-search collection
(``RAGLINE_OPENSEARCH_SERVICE=aoss``).

A collection refuses what the domain mode is built on — custom ``_id``s, ``version_type``,
``_refresh``, ``_delete_by_query``, ``refresh=true`` — so this mode keeps the same contract another way
(docs/decisions.md, "What AOSS vector collections refuse and how the store lives with it"):

- fences live in DynamoDB (:mod:`~ragline.adapters.opensearch.fences`); readers keep a chunk iff its
  generation is its document's fence, as in the domain mode;
- chunks get the collection's ids; a chunk written twice at one generation (a retried upsert) is two
  documents until the writer's sweep: readers keep the one with the highest ``stamp``;
- writes become searchable seconds later: reads of the writing process wait for its own writes, and
  ``publish`` waits for every chunk recorded for its generation before it raises the fence
  (:mod:`~ragline.adapters.opensearch.serverless_visibility`);
- sweeps are a search plus a bulk delete by ``_id``: a chunk not yet searchable is missed, stays
  unseen (its generation is below the fence) and the next publish of the document sweeps it.
"""

from __future__ import annotations

from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.client import build_client
from ragline.adapters.opensearch.fences import DynamoFences
from ragline.adapters.opensearch.serverless_collection import (
    BULK_RETRIES,
    VISIBILITY_TIMEOUT,
    ServerlessCollection,
)
from ragline.adapters.opensearch.serverless_store import ServerlessVectorStore
from ragline.config import Settings
from ragline.domain.filters import ReadView
from ragline.domain.models import TenantScope

__all__ = ["BULK_RETRIES", "VISIBILITY_TIMEOUT", "ServerlessVectorStoreProvider"]


class ServerlessVectorStoreProvider(ServerlessCollection):
    """A model's chunk index on a collection (:class:`~.serverless_collection.ServerlessCollection`)
    and the stores of its scopes."""

    @classmethod
    def from_settings(
        cls, settings: Settings, *, dimension: int, model_id: str
    ) -> ServerlessVectorStoreProvider:
        index = rq.index_name(settings.opensearch_index_prefix, model_id, dimension)
        return cls(
            build_client(settings),
            DynamoFences(settings.documents_table, index, region=settings.aws_region),
            index=index,
            dimension=dimension,
            visibility_timeout=settings.opensearch_visibility_timeout,
        )

    def scoped(self, scope: TenantScope, view: ReadView | None = None) -> ServerlessVectorStore:
        self.ensure_index()
        return ServerlessVectorStore(self, scope, view)
