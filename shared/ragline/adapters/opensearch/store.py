""":class:`~ragline.ports.VectorStore` on OpenSearch: lucene HNSW kNN + BM25, client-side RRF.

Requests are built by :mod:`ragline.adapters.opensearch.requests` (pure); the modules below only send
them and translate vendor errors (:func:`translate`) into Ragline errors. This one assembles the two
classes callers use from their parts, each in a module of its own:

- :class:`OpenSearchVectorStoreProvider`: a model's indexes (:mod:`.indexes`), plus its scoped stores
  and the pacing of growth rounds (:mod:`.growth`);
- :class:`OpenSearchVectorStore`: one scope's placement and fences (:mod:`.scoped`), its searches
  (:mod:`.searching`), document reads (:mod:`.document_reads`) and writes (:mod:`.writes`).

The settings tests and benchmarks change at run time (``grow``, ``GROWTH_TENANTS``, ``BULK_RETRIES``)
are read here, at each call.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from ragline import errors
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.client import build_client, translate
from ragline.adapters.opensearch.document_reads import DocumentReads
from ragline.adapters.opensearch.growth import grow
from ragline.adapters.opensearch.indexes import WRITE_WAIT, HybridStrategy, ModelIndexes
from ragline.adapters.opensearch.scoped import FENCE_RETRIES, MOVE_RETRIES
from ragline.adapters.opensearch.searching import OVERFETCH, Searching
from ragline.adapters.opensearch.visibility import Refresh
from ragline.adapters.opensearch.writes import SWEEP_DOCUMENTS, ChunkWrites
from ragline.config import Settings
from ragline.domain.filters import ReadView
from ragline.domain.models import Chunk, TenantScope

__all__ = [
    "BULK_BYTES",
    "BULK_RETRIES",
    "FENCE_RETRIES",
    "GROWTH_TENANTS",
    "MOVE_RETRIES",
    "OVERFETCH",
    "SWEEP_DOCUMENTS",
    "WRITE_WAIT",
    "HybridStrategy",
    "OpenSearchVectorStore",
    "OpenSearchVectorStoreProvider",
    "Refresh",
    "build_client",
    "translate",
]

BULK_BYTES = rq.BULK_BYTES
BULK_RETRIES = 3
"""Resends of the chunks a bulk request answered 429 for, after 1, 2 and 4 s."""
GROWTH_TENANTS = 10_000
"""Tenants whose last growth round a process remembers before it forgets those past the interval."""
_log = logging.getLogger(__name__)


class OpenSearchVectorStoreProvider(ModelIndexes):
    """A model's indexes (:class:`~.indexes.ModelIndexes`), the stores of its scopes, and the growth
    rounds their writes start."""

    @classmethod
    def from_settings(
        cls, settings: Settings, *, dimension: int, model_id: str
    ) -> OpenSearchVectorStoreProvider:
        return cls(
            build_client(settings),
            index=rq.index_name(settings.opensearch_index_prefix, model_id, dimension),
            dimension=dimension,
            refresh=settings.opensearch_refresh,
            replicas=settings.opensearch_replicas,
            hybrid=settings.opensearch_hybrid,
            engine=settings.opensearch_engine,
            shards=settings.opensearch_shards,
            routing_partition_size=settings.opensearch_routing_partition_size,
            placement_ttl=settings.opensearch_placement_ttl,
            max_shard_chunks=settings.opensearch_shard_max_chunks,
            growth_interval=settings.opensearch_growth_interval,
            silo_chunks=settings.opensearch_silo_chunks,
            silo_tenants=frozenset(settings.opensearch_silo_tenants),
        )

    def grow(self, tenant_id: str) -> dict[str, Any] | None:
        """A round of growth (:func:`.growth.grow`) after ``tenant_id`` wrote, at most once per
        ``growth_interval`` seconds for that tenant in this process — every writing tenant is checked
        at its own pace, not one tenant per interval — and the pool-wide part (a new generation,
        retired copies reaped) at most once per interval for all of them (None: not due)."""
        interval = self.growth_interval
        if interval is None:
            return None
        with self._lock:
            now = time.monotonic()
            if now - self._grown_at.get(tenant_id, float("-inf")) < interval:
                return None
            if len(self._grown_at) >= GROWTH_TENANTS:  # bounded: a lapsed entry is as good as none
                self._grown_at = {t: at for t, at in self._grown_at.items() if now - at < interval}
            self._grown_at[tenant_id] = now
            pool = now - self._pool_grown_at >= interval
            if pool:
                self._pool_grown_at = now
        with translate("growth round"):
            return grow(self, self.growth, tenant_id, pool_wide=pool)

    def scoped(self, scope: TenantScope, view: ReadView | None = None) -> OpenSearchVectorStore:
        self.ensure_index()
        return OpenSearchVectorStore(self, scope, view)


class OpenSearchVectorStore(Searching, DocumentReads, ChunkWrites):
    """One scope of ``provider``'s indexes: its searches, document reads and writes, each where the
    tenant's chunks live and at each document's published generation."""

    _p: OpenSearchVectorStoreProvider

    def __init__(
        self, provider: OpenSearchVectorStoreProvider, scope: TenantScope, view: ReadView | None = None
    ) -> None:
        """The provider typed as the one that also runs growth rounds, which :meth:`upsert` starts."""
        super().__init__(provider, scope, view)

    def upsert(self, chunks: Sequence[Chunk], *, generation: int = 0) -> int:
        """:meth:`_upsert` where the tenant lives, then a round of growth when one is due (a failed
        one is logged: the chunks are written, the next round tries again)."""
        written = self._placed(lambda: self._upsert(chunks, generation), write=True)
        if written:
            try:
                self._p.grow(self.scope.tenant_id)
            except errors.RaglineError:
                _log.warning("growth round failed", exc_info=True)
        return written

    def _bulk_retries(self) -> int:
        return BULK_RETRIES  # this module's, read at each request: tests lower it
