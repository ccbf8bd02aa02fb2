"""A model's indexes on an OpenSearch domain as one provider keeps them: its chunk indexes (under the
model's alias, placed by :mod:`.placement`, grown by :mod:`.growth`), its fences index, when writes
become searchable (:mod:`.visibility`), and the thread pool its stores send concurrent requests on.

:class:`ModelIndexes` is all of ``OpenSearchVectorStoreProvider`` but what ties it to the store
classes (:mod:`.store`): scoped stores and the pacing of growth rounds. The stores' own modules see
their provider as this class, which is how they import none of :mod:`.store`.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Literal

from ragline import errors
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch import term_stats
from ragline.adapters.opensearch.client import translate
from ragline.adapters.opensearch.filtering import ensure_fields
from ragline.adapters.opensearch.growth import Growth
from ragline.adapters.opensearch.hybrid import NORMALIZATION, Normalization
from ragline.adapters.opensearch.placement import Placements
from ragline.adapters.opensearch.visibility import UNREFRESHED, Refresh

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

HybridStrategy = Literal["msearch", "concurrent", "query"]
"""How a hybrid search runs: both legs in one ``_msearch``, fused here (default); the legs as two
concurrent searches; or OpenSearch's own ``hybrid`` query fused on the node (:mod:`.hybrid`)."""
WRITE_WAIT = 10.0
"""Seconds a replicated index's write waits for a second active copy of its shard before the node
answers it 503 (retryable): under the client's 30 s timeout, so the client never re-sends a write the
node still holds."""
_log = logging.getLogger("ragline.adapters.opensearch.store")  # the name its warnings always had


class ModelIndexes:
    """One embedding model's indexes on a domain, shared by every scope's store (see the module)."""

    def __init__(
        self,
        client: OpenSearch,
        *,
        index: str,
        dimension: int,
        refresh: Refresh = "on_read",
        hybrid: HybridStrategy = "msearch",
        hybrid_normalization: Normalization = NORMALIZATION,
        hnsw: tuple[int, int] = rq.HNSW,
        engine: rq.Engine = "lucene",
        knn_candidates: int = rq.KNN_CANDIDATES,
        replicas: int = 0,
        bulk_bytes: int = rq.BULK_BYTES,
        write_wait: float = WRITE_WAIT,
        shards: int = 1,
        routing_partition_size: int = 1,
        placement_ttl: float = 30.0,
        max_shard_chunks: int = 0,
        growth_interval: float | None = 300.0,
        silo_chunks: int = 0,
        silo_tenants: frozenset[str] = frozenset(),
        bulk_writers: int | None = None,
        primaries: int | None = None,
    ) -> None:
        """``bulk_writers``: ``_bulk`` requests one upsert sends at once; by default
        :func:`~.requests.bulk_writers` of ``primaries``, the primary shards a scope's writes land on
        (its routing partition unless given)."""
        if routing_partition_size > 1 and routing_partition_size >= shards:
            raise errors.ConfigurationError(
                "the routing partition size must be below the number of shards",
                shards=shards,
                routing_partition_size=routing_partition_size,
            )
        self.client = client
        self.bulk_bytes = bulk_bytes
        self.bulk_writers = bulk_writers or rq.bulk_writers(primaries or routing_partition_size)
        self.replicas = replicas
        self.copies = 2 if replicas else 1
        """Copies of a shard that must hold a write (a chunk, a deletion, a fence) for it to count."""
        self.write_params: dict[str, str | int | float] = (
            {
                "wait_for_active_shards": self.copies,
                "timeout": f"{round(write_wait * 1000)}ms",
                "request_timeout": write_wait + 20,  # given, so the client leaves ``timeout`` to the node
            }
            if replicas
            else {}
        )
        """With a replica, a ``_bulk`` starts only once its shard has two active copies (the primary and
        one replica): a write is never acknowledged from a lone copy, which a second loss would take
        with it (docs/decisions.md). Without replicas (one node) nothing to wait for."""
        self.shards = shards
        self.routing_partition_size = routing_partition_size
        self.hnsw = hnsw
        self.engine = engine
        self.knn_candidates = knn_candidates
        self.index = index
        self.dimension = dimension
        self.refresh = refresh
        self.hybrid = hybrid
        self.hybrid_normalization = hybrid_normalization
        self._ready = False
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self.scope_stats: term_stats.ScopeStatistics | None = None
        """Keyword queries scored with each scope's statistics; None on an index made before them."""
        self.placements = Placements(client, index, ttl=placement_ttl)
        """Where each tenant's chunks live (:mod:`.placement`): ``index`` names the model's alias."""
        self.growth = Growth(
            self,
            max_shard_chunks=max_shard_chunks,
            grace=2 * placement_ttl,
            silo_chunks=silo_chunks,
            silo_tenants=silo_tenants,
        )
        self.growth_interval = growth_interval
        """Seconds between a process's growth rounds for one tenant, run after it writes (its ``grow``;
        0: every write; None: never, e.g. a client whose chunks an operator places by hand)."""
        self._grown_at: dict[str, float] = {}
        """When each tenant's last round ran in this process (entries older than the interval pruned)."""
        self._pool_grown_at = float("-inf")

    def ensure_index(self) -> None:
        """Create the fences, the placement registry and the pool's first chunk index on first use
        (idempotent; a concurrent creator is fine)."""
        if self._ready:
            return
        with self._lock, translate("index creation"):
            self._create(rq.fences_index(self.index), rq.fences_body(replicas=self.replicas))
            self.placements.ensure(self.create_chunk_index, replicas=self.replicas)
            mappings = self.client.indices.get_mapping(index=self.index)
            if all(term_stats.supported(m["mappings"]) for m in mappings.values()):
                self.scope_stats = term_stats.ScopeStatistics(
                    self.client, self.index, ttl=self.placements.ttl
                )
            else:  # its text has Lucene's BM25 and no lengths: shard statistics until a reindex
                _log.warning("index %s predates per-scope BM25: shard statistics score keywords", self.index)
            self._ready = True

    def create_chunk_index(self, name: str, *, shards: int | None = None, silo: bool = False) -> None:
        """A chunk index of the model (a pool generation or a silo) under its alias, unless it exists:
        then it gets the filter fields an index made before them lacks (idempotent; its old chunks
        read as open to everyone, without attributes). The legacy index named as the alias is not
        aliased."""
        body = self.chunk_index_body(shards=shards, silo=silo)
        if name != self.index:
            body["aliases"] = {self.index: {}}
        if not self._create(name, body):
            ensure_fields(self.client, name)

    def _create(self, name: str, body: dict[str, Any]) -> bool:
        """Create ``name`` unless it exists; whether this call made it."""
        from opensearchpy.exceptions import RequestError

        if self.client.indices.exists(index=name):
            return False
        try:
            self.client.indices.create(index=name, body=body)
        except RequestError as exc:
            if exc.error != "resource_already_exists_exception":
                raise
            return False
        return True

    def chunk_index_body(self, *, shards: int | None = None, silo: bool = False) -> dict[str, Any]:
        """A new chunk index as this provider makes them: its shards (``shards``: a larger generation's
        instead), routing partition, engine and graph (``silo``: one tenant's, see ``index_body``)."""
        return rq.index_body(
            self.dimension,
            shards=shards or self.shards,
            replicas=self.replicas,
            hnsw=self.hnsw,
            engine=self.engine,
            silo=silo,
            routing_partition_size=self.routing_partition_size,
        )

    def drop(self) -> None:
        """Delete the chunk, fence and placement indexes (tests, benchmarks); gone ones are ignored."""
        with translate("index deletion"):
            chunks = (
                self.placements.indexes()
                if self.client.indices.exists(index=self.placements.registry)
                else []
            )
            if self.client.indices.exists(index=self.index) and not self.client.indices.exists_alias(
                name=self.index
            ):
                chunks.append(self.index)  # a legacy index under the alias's name
            indexes = [*chunks, rq.fences_index(self.index), self.placements.registry]
            self.client.indices.delete(index=indexes, ignore_unavailable=True)
        self._ready = False

    def purge_tenant(self, tenant_id: str) -> int:
        """The tenant's chunks (one routed delete-by-query over every namespace and every chunk index
        of the model: a move may have left a copy), then its fences. The query's hits leave out the
        vector: k-NN 2.19's derived source drops a hit's ``_routing`` when it puts the vector back into
        ``_source`` (or when no source is fetched), and each delete is routed by its hit's ``_routing``
        (a 400 ``routing_missing_exception`` without it)."""
        self.ensure_index()
        query = {"query": {"term": {"tenant_id": tenant_id}}}
        with translate("tenant purge"):
            chunk_indexes = self.placements.indexes()
            self.client.indices.refresh(index=[*chunk_indexes, rq.fences_index(self.index)])
            chunks = self.client.delete_by_query(
                index=chunk_indexes, body=query, routing=tenant_id, refresh=True, conflicts="proceed",
                _source_excludes=rq.SOURCE_EXCLUDES,
            )  # fmt: skip
            self.client.delete_by_query(
                index=rq.fences_index(self.index), body=query, refresh=True, conflicts="proceed"
            )
        return int(chunks.get("deleted", 0))

    # -- visibility (see ragline.adapters.opensearch.visibility) -------------------------------------
    @property
    def lazy(self) -> bool:
        """Writes do not refresh; a publish's sweep and a discard must refresh before they look."""
        return self.refresh in ("on_read", "false")

    def refresh_now(self, index: str | None = None) -> None:
        """Every write so far to ``index`` (a chunk index; None: all of the model's) becomes
        searchable, from every process."""
        if index is None:
            for name in self.placements.indexes():
                self._refresh(name, UNREFRESHED.claim(name))
        else:
            self._refresh(index, UNREFRESHED.claim(index))

    def wrote(self, index: str) -> None:
        if self.refresh == "on_read":
            UNREFRESHED.mark(index)
        if self.scope_stats is not None:
            self.scope_stats.wrote(index)

    def before_read(self, index: str) -> None:
        """``on_read``: refresh first when this process wrote to ``index`` since the last refresh."""
        if self.refresh == "on_read" and UNREFRESHED.claim(index):
            self._refresh(index, True)

    def _refresh(self, index: str, claimed: bool) -> None:
        try:
            with translate("refresh"):
                self.client.indices.refresh(index=index)
        except errors.RaglineError:
            if claimed:
                UNREFRESHED.mark(index)  # still unrefreshed: the next read tries again
            raise

    def pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                workers = max(4, self.bulk_writers)
                self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ragline-os")
            return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
        self.client.close()
