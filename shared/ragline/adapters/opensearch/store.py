""":class:`~ragline.ports.VectorStore` on OpenSearch: lucene HNSW kNN + BM25, client-side RRF.

Requests are built by :mod:`ragline.adapters.opensearch.requests` (pure); this module only sends them
and translates vendor errors (:func:`translate`) into Ragline errors.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
from numpy.typing import NDArray

from ragline import errors
from ragline.adapters.opensearch import hybrid as node_fusion
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch import term_stats
from ragline.adapters.opensearch.client import build_client, translate
from ragline.adapters.opensearch.filtering import ensure_fields, vetted
from ragline.adapters.opensearch.growth import Growth, grow
from ragline.adapters.opensearch.hybrid import NORMALIZATION, Normalization
from ragline.adapters.opensearch.placement import Place, Placements
from ragline.adapters.opensearch.visibility import UNREFRESHED, Refresh
from ragline.config import Settings
from ragline.domain.filters import ReadView
from ragline.domain.fusion import fuse_query
from ragline.domain.models import (
    Chunk,
    ChunkMetadata,
    HybridQuery,
    KeywordQuery,
    ScoreBreakdown,
    SearchHit,
    SearchQuery,
    SemanticQuery,
    StoreCapabilities,
    TenantScope,
    chunk_id,
    neighbor_window,
)

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

__all__ = ["OpenSearchVectorStore", "OpenSearchVectorStoreProvider", "Refresh", "build_client", "translate"]

HybridStrategy = Literal["msearch", "concurrent", "query"]
"""How a hybrid search runs: both legs in one ``_msearch``, fused here (default); the legs as two
concurrent searches; or OpenSearch's own ``hybrid`` query fused on the node (:mod:`.hybrid`)."""
BULK_BYTES = rq.BULK_BYTES
SWEEP_DOCUMENTS = 500
"""Documents one sweep query covers (one ``bool`` clause each; the node allows 1,024)."""
BULK_RETRIES = 3
"""Resends of the chunks a bulk request answered 429 for, after 1, 2 and 4 s."""
_BULK_FILTER = "items.*.status,items.*.error.type,items.*._shards.successful"
WRITE_WAIT = 10.0
"""Seconds a replicated index's write waits for a second active copy of its shard before the node
answers it 503 (retryable): under the client's 30 s timeout, so the client never re-sends a write the
node still holds."""
OVERFETCH = 4
"""How many times ``k`` a single leg asks for when unpublished chunks crowded its first answer."""
FENCE_RETRIES = 3
"""Reads of a document retried because a publish moved its fence meanwhile."""
MOVE_RETRIES = 5
"""Runs of an operation whose tenant was moved meanwhile (each is re-placed before it runs again)."""
GROWTH_TENANTS = 10_000
"""Tenants whose last growth round a process remembers before it forgets those past the interval."""
_T = TypeVar("_T")
_log = logging.getLogger(__name__)


class OpenSearchVectorStoreProvider:
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
        knn_candidates: int = rq.KNN_CANDIDATES,
        replicas: int = 0,
        bulk_bytes: int = BULK_BYTES,
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
        """Seconds between a process's growth rounds for one tenant, run after it writes (:meth:`grow`;
        0: every write; None: never, e.g. a client whose chunks an operator places by hand)."""
        self._grown_at: dict[str, float] = {}
        """When each tenant's last round ran in this process (entries older than the interval pruned)."""
        self._pool_grown_at = float("-inf")

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
            shards=settings.opensearch_shards,
            routing_partition_size=settings.opensearch_routing_partition_size,
            placement_ttl=settings.opensearch_placement_ttl,
            max_shard_chunks=settings.opensearch_shard_max_chunks,
            growth_interval=settings.opensearch_growth_interval,
            silo_chunks=settings.opensearch_silo_chunks,
            silo_tenants=frozenset(settings.opensearch_silo_tenants),
        )

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

    def create_chunk_index(self, name: str, *, shards: int | None = None) -> None:
        """A chunk index of the model (a pool generation or a silo) under its alias, unless it exists:
        then it gets the filter fields an index made before them lacks (idempotent; its old chunks
        read as open to everyone, without attributes). The legacy index named as the alias is not
        aliased."""
        body = self.chunk_index_body(shards=shards)
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

    def chunk_index_body(self, *, shards: int | None = None) -> dict[str, Any]:
        """A new chunk index as this provider makes them: its shards (``shards``: a larger generation's
        instead), routing partition and graph."""
        return rq.index_body(
            self.dimension,
            shards=shards or self.shards,
            replicas=self.replicas,
            hnsw=self.hnsw,
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


class _Moved(Exception):
    """The tenant's placement changed under an operation: it runs again where the tenant lives now."""


def _placed_write(method: Callable[..., _T]) -> Callable[..., _T]:
    @functools.wraps(method)
    def run(self: OpenSearchVectorStore, *args: Any, **kwargs: Any) -> _T:
        return self._placed(lambda: method(self, *args, **kwargs), write=True)

    return run


def _placed_read(method: Callable[..., _T]) -> Callable[..., _T]:
    @functools.wraps(method)
    def run(self: OpenSearchVectorStore, *args: Any, **kwargs: Any) -> _T:
        return self._placed(lambda: method(self, *args, **kwargs), write=False)

    return run


class OpenSearchVectorStore:
    def __init__(
        self, provider: OpenSearchVectorStoreProvider, scope: TenantScope, view: ReadView | None = None
    ) -> None:
        self._p = provider
        self.scope = scope
        self.view = None if view is None or view.everything else view
        """Inside every read's query (:mod:`.filtering`); None: every chunk."""
        self._routing = scope.tenant_id
        self._place = provider.placements.cached(scope.tenant_id)
        """Where the tenant's chunks live, as last seen (:mod:`.placement`; checked on the way)."""

    @property
    def _index(self) -> str:
        return self._place.index

    def _placed(self, run: Callable[[], _T], *, write: bool) -> _T:
        """``run`` against the tenant's chunk index. A write reads the placement in real time (waiting
        out a move) and again after: moved meanwhile, it runs again where the tenant lives now (every
        write is idempotent: versioned chunks and fences). A read runs on the cached placement, which
        the fence read checks (:meth:`_fences_and_sources`) and :meth:`_check_place` otherwise: a
        changed one makes it read again."""
        placements = self._p.placements
        for _ in range(MOVE_RETRIES):
            if write:
                self._place = placements.for_write(self.scope.tenant_id)
            try:
                result = run()
                if write:
                    self._check_place()
            except _Moved:
                continue
            return result
        raise errors.Throttled("the tenant's chunks kept moving; retry", tenant_id=self.scope.tenant_id)

    def _check_place(self) -> None:
        """Raise :class:`_Moved` (and remember the new place) when the tenant's placement changed."""
        self._seen(self._p.placements.read(self.scope.tenant_id))

    def _seen(self, now: Place) -> None:
        if now != self._place:
            self._place = now
            raise _Moved

    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities()

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

    def _upsert(self, chunks: Sequence[Chunk], generation: int) -> int:
        for c in chunks:
            if c.embedding is None or len(c.embedding) != self._p.dimension:
                raise errors.EmbeddingMismatch(
                    "chunk embedding does not match the index dimension",
                    chunk_id=c.id,
                    expected=self._p.dimension,
                    got=None if c.embedding is None else len(c.embedding),
                )
        if not chunks:
            return 0
        for document_id, fence in self._fences({c.document_id for c in chunks}).items():
            if fence > generation:
                raise errors.Superseded(
                    "a newer version of the document was published",
                    document_id=document_id,
                    generation=generation,
                    published=fence,
                )
        lines = rq.bulk_lines(self.scope, self._index, chunks, generation)
        written = self._bulk_at_once(lines)
        self._p.wrote(self._index)
        return written

    def _bulk_at_once(self, lines: list[bytes]) -> int:
        """:meth:`_bulk` of ``lines`` cut into ``bulk_writers`` parts sent at once: chunk writes are
        independent of each other (unlike a sweep's ordered deletes), and nothing reads them before
        the publish that follows the whole upsert."""
        parts = min(self._p.bulk_writers, len(lines))
        if parts <= 1:
            return self._bulk(lines)
        size = -(-len(lines) // parts)
        pool = self._p.pool()
        futures = [pool.submit(self._bulk, lines[i : i + size]) for i in range(0, len(lines), size)]
        return sum(f.result() for f in futures)

    def _bulk(self, lines: list[bytes], *, gone_ok: bool = False) -> int:
        """Every line written (in order, by ``_bulk`` requests of at most ``bulk_bytes``): how many
        were applied. A 409 means a newer generation holds the chunk (the older write loses, by
        design); ``gone_ok``: deletes, where a 404 is a chunk already deleted."""
        refresh = "false" if self._p.lazy else self._p.refresh
        written = 0
        for batch in rq.bulk_requests(lines, self._p.bulk_bytes):
            for status, error in self._bulk_statuses(batch, refresh):
                if status < 300:
                    written += 1
                elif status == 429:
                    raise errors.Throttled("OpenSearch throttled bulk indexing")
                elif status >= 500:  # e.g. its shard without the copies the write waits for
                    raise errors.DependencyUnavailable("OpenSearch could not write a chunk", status=status)
                elif status != 409 and not (gone_ok and status == 404):
                    raise errors.DependencyFailed("OpenSearch rejected a chunk", status=status, error=error)
        return written

    def _bulk_statuses(self, lines: list[bytes], refresh: str) -> list[tuple[int, str]]:
        """One ``_bulk`` request, its actions applied in order: each line's status (and error type);
        lines answered 429 are sent again after a backoff of 1, 2 and 4 s (then left at 429). An
        action applied on fewer copies than the provider's ``copies`` (a replica failed during the
        write, which ``wait_for_active_shards`` checks only before it) is a 503: on one copy only."""
        copies = self._p.copies
        out: list[tuple[int, str]] = [(0, "")] * len(lines)
        todo = list(range(len(lines)))
        for attempt in range(BULK_RETRIES + 1):
            body = b"".join(lines[i] for i in todo)
            with translate("bulk indexing"):
                resp = self._p.client.bulk(
                    body=body, refresh=refresh, filter_path=_BULK_FILTER, **self._p.write_params
                )
            throttled = []
            for i, item in zip(todo, resp["items"], strict=True):
                result = next(iter(item.values()))
                out[i] = (result.get("status", 0), str(result.get("error"))[:300])
                if out[i][0] < 300 and result.get("_shards", {}).get("successful", copies) < copies:
                    out[i] = (503, f"written on {result['_shards']['successful']} of {copies} copies")
                if out[i][0] == 429:
                    throttled.append(i)
            if not throttled or attempt == BULK_RETRIES:
                return out
            time.sleep(2**attempt)
            todo = throttled
        return out

    def _fences(self, document_ids: set[str]) -> dict[str, int]:
        """The generation last published per document (0: none yet), in one request."""
        return self._fences_and_sources(document_ids, [])[0]

    def _fences_and_sources(
        self, document_ids: set[str], source_ids: list[str]
    ) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
        """The documents' fences (as :meth:`_fences`) and the chunks of ``source_ids`` (``_id``s, as
        :meth:`_mget`), in one ``_mget`` over both indexes: a hybrid search reads the sources its
        fusion will most likely keep in the round trip that reads the fences."""
        ids = sorted(document_ids)
        fences = rq.fences_index(self._p.index)
        placements = self._p.placements
        docs = [placements.doc_ref(self.scope.tenant_id)]  # checks the cached placement on the way
        docs += [{"_index": fences, "_id": rq.fence_id(self.scope, d), "_source": False} for d in ids]
        docs += rq.mget_body(self.scope, self._index, source_ids)["docs"]
        with translate("fence read"):
            resp = self._p.client.mget(body={"docs": docs})
        placed, *got = resp["docs"]
        self._seen(placements.remember(self.scope.tenant_id, placements.place_of(placed)))
        fenced = zip(ids, got[: len(ids)], strict=True)
        published = {d: int(doc["_version"]) if doc.get("found") else 0 for d, doc in fenced}
        return published, self._in_scope(got[len(ids) :])

    def _served(self, document_id: str) -> int:
        """The document's published generation (0 before any publish), read in real time."""
        return self._fences({document_id}).get(document_id, 0)

    def publish(self, document_id: str, *, generation: int) -> bool:
        """:meth:`publish_many` of one document."""
        outcome = self.publish_many({document_id: generation})[document_id]
        if isinstance(outcome, errors.RaglineError):
            raise outcome
        return outcome

    @_placed_write
    def publish_many(self, generations: Mapping[str, int]) -> dict[str, bool | errors.RaglineError]:
        """A fence is a document whose external version *is* the generation: OpenSearch refuses (409)
        to lower it, which makes each raise atomic, and readers read it in real time — raising it is
        the one switch that makes a version the served one. So the versions' chunks are made
        searchable *first* (one refresh for all), then the fences rise (one ``_bulk``: each action
        succeeds, is refused, or fails on its own — a 429 still there after the retries, a 5xx: that
        document's error), then the accepted documents' older generations are swept together. A
        ``_bulk`` whose answer is lost is settled by reading the fences back. Once this returns, every
        accepted version is served to every process."""
        if not generations:
            return {}
        if self._p.lazy:
            self._p.refresh_now(
                self._index
            )  # every chunk of these versions searchable before they are served
        docs = list(generations.items())
        lines = rq.fence_lines(
            rq.fences_index(self._p.index),
            [(rq.fence_id(self.scope, d), rq.fence_source(self.scope, d), g) for d, g in docs],
        )
        try:
            statuses = self._bulk_statuses(lines, "false")
        except errors.RaglineError as lost:  # applied in part, whole, or not at all: the fences tell
            outcome = self._read_back(generations, lost)
        else:
            outcome = {
                d: _fence_outcome(d, status, error)
                for (d, _), (status, error) in zip(docs, statuses, strict=True)
            }
        accepted = [(d, g) for d, g in docs if outcome[d] is True]
        try:
            for i in range(0, len(accepted), SWEEP_DOCUMENTS):
                self._delete_matching(rq.older_versions_query(self.scope, accepted[i : i + SWEEP_DOCUMENTS]))
        except errors.RaglineError:  # published all the same: older chunks stay unseen, swept next time
            _log.warning("sweep after publish failed", exc_info=True)
        return outcome

    def _read_back(
        self, generations: Mapping[str, int], lost: errors.RaglineError
    ) -> dict[str, bool | errors.RaglineError]:
        """Each document's outcome from its fence as read now: at its generation, published; above,
        refused; below, not published (``lost``). ``lost`` is raised when the fences cannot be read."""
        try:
            fences = self._fences(set(generations))
        except errors.RaglineError:
            raise lost from None
        return {
            d: True if fences[d] == g else False if fences[d] > g else lost for d, g in generations.items()
        }

    @_placed_write
    def discard(self, document_id: str, *, generation: int) -> int:
        if self._p.lazy:
            self._p.refresh_now(self._index)  # delete-by-query sees only refreshed chunks
        return self._delete_matching(rq.document_query(self.scope, document_id, generation=generation))

    @_placed_read
    def vectors(self, document_id: str) -> dict[str, NDArray[np.float32]]:
        from opensearchpy import helpers

        self._p.before_read(self._index)
        with translate("vectors"):
            found = {
                h["_source"]["text"]: np.asarray(h["_source"][rq.VECTOR_FIELD], dtype=np.float32)
                for h in helpers.scan(
                    self._p.client,
                    index=self._index,
                    query={"query": rq.document_query(self.scope, document_id)},
                    routing=self._routing,
                    _source=["text", rq.VECTOR_FIELD],
                    size=500,
                )
            }
        self._check_place()  # no fence read to check the placement on the way
        return found

    @_placed_write
    def delete_document(self, document_id: str, *, older_than: int | None = None) -> int:
        return self._delete_matching(rq.document_query(self.scope, document_id, older_than=older_than))

    def _delete_matching(self, query: dict[str, Any]) -> int:
        """The chunks ``query`` matches, deleted highest sequence number first by ordered bulk requests
        on the tenant's shard (not OpenSearch's ``_delete_by_query``, whose order is its scroll's): the
        node refreshes by itself every second, and a refresh in the middle of a sweep then shows a
        reader a document whose chunks run contiguously from 0, never one with a gap. Each delete
        carries the chunk's generation (``external_gte``), so a chunk a newer version rewrote meanwhile
        is kept (409)."""
        self._p.before_read(self._index)
        deleted = 0
        while True:
            body = {"size": rq.MAX_RESULT_WINDOW, "query": query, "_source": False, "version": True,
                    "sort": [{"sequence_number": "desc"}]}  # fmt: skip
            with translate("delete"):
                found = self._p.client.search(index=self._index, body=body, routing=self._routing)
            hits = found["hits"]["hits"]
            lines = [  # each delete routed as its chunk was found (in order: one line per hit)
                line
                for h in hits
                for line in rq.delete_lines(
                    self._index, h.get("_routing", self._routing), [(h["_id"], h["_version"])]
                )
            ]
            deleted += self._bulk(lines, gone_ok=True)
            if len(hits) < rq.MAX_RESULT_WINDOW:
                break
            self._p.refresh_now(
                self._index
            )  # a document of more chunks than one search returns: the rest next
        if deleted and self._p.refresh == "on_read":
            self._p.refresh_now(self._index)  # deletions are rare: visible everywhere when this returns
        return deleted

    @_placed_read
    def count(self, document_id: str | None = None) -> int:
        """A document's served chunks (at its published generation); the scope's every stored chunk
        (with a view: every stored chunk it admits)."""
        self._p.before_read(self._index)
        if document_id is None:
            counted = self._count({"bool": {"filter": rq.scope_filter(self.scope, view=self.view)}})
            self._check_place()  # no fence read to check the placement on the way
            return counted
        return self._at_served(
            document_id,
            lambda g: self._count(rq.document_query(self.scope, document_id, generation=g, view=self.view)),
        )

    def _count(self, query: dict[str, Any]) -> int:
        with translate("count"):
            resp = self._p.client.count(index=self._index, body={"query": query}, routing=self._routing)
        return int(resp["count"])

    @_placed_read
    def neighbors(
        self, document_id: str, sequence_number: int, *, before: int = 5, after: int = 5
    ) -> list[Chunk]:
        window = neighbor_window(sequence_number, before, after)
        if window is None:
            return []
        self._p.before_read(self._index)

        def read(generation: int) -> list[Chunk]:
            body = rq.neighbors_search(
                self.scope, document_id, sequence_number, *window, generation=generation, view=self.view
            )
            with translate("neighbors"):
                resp = self._p.client.search(index=self._index, body=body, routing=self._routing)
            return [_chunk(h["_source"]) for h in resp["hits"]["hits"]]

        return self._at_served(document_id, read)

    def _at_served(self, document_id: str, read: Callable[[int], _T]) -> _T:
        """``read`` at the document's published generation, the fence read before and after: when it
        held, every chunk of that generation was searchable before the read (publish refreshes before
        it raises the fence) and none was swept (a sweep takes only older ones). A publish in between
        makes it read again, a few times at most."""
        served = self._served(document_id)
        for _ in range(FENCE_RETRIES):
            result = read(served)
            now = self._served(document_id)
            if now == served:
                return result
            served = now
        return read(served)

    @_placed_read
    def search(self, query: SearchQuery) -> list[SearchHit]:
        """:meth:`_search`, each hit checked against the view once more as read (:func:`.vetted`)."""
        return vetted(self._search(query), self.view, query.filters.where)

    def _search(self, query: SearchQuery) -> list[SearchHit]:
        """Each leg's hits are kept only at their document's published generation (its fence, read
        in real time; 0 before any publish), so a version written beside the served one — in flight,
        or orphaned by a worker that died — is never seen, and never two versions at once. A hit
        *below* its fence means this view of the index predates a publish (whose chunks it refreshed
        before raising the fence): the search runs once more rather than show that document with
        nothing. A single leg that lost hits to another version and came back full asks for
        ``OVERFETCH`` times more, so such chunks do not leave fewer than ``k``."""
        self._p.before_read(self._index)
        if isinstance(query, HybridQuery) and self._p.hybrid == "query":
            return node_fusion.search(self, query)
        single = not isinstance(query, HybridQuery)
        size = query.candidates if isinstance(query, HybridQuery) else query.k
        stale_retried = overfetched = False
        for _ in range(3):  # at most one more for a stale view, one more for a crowded leg
            legs, stale, dropped, prefetched = self._visible_legs(query, size)
            if stale and not stale_retried:
                stale_retried = True
            elif single and dropped and len(legs[0]) < query.k and not overfetched:
                overfetched, size = True, query.k * OVERFETCH
            else:
                break
        if single:
            return self._hits(
                legs[0][: query.k], "semantic" if isinstance(query, SemanticQuery) else "keyword"
            )
        assert isinstance(query, HybridQuery)
        fused = fuse_query(query, *([(h.chunk_id, h.score) for h in leg] for leg in legs))
        hits = {h.chunk_id: h for leg in legs for h in leg}
        sources = {  # read with the fences, of the generation served
            cid: src
            for cid, _ in fused
            if (src := prefetched.get(cid)) is not None and src.get("generation", 0) == hits[cid].generation
        }
        sources.update(self._read([cid for cid, _ in fused if cid not in sources], hits))
        return [
            SearchHit(chunk=_chunk(sources[cid]), score=bd.fused_score or 0.0, breakdown=bd)
            for cid, bd in fused
            if cid in sources  # a chunk deleted between the legs and the read is simply gone
        ]

    def _visible_legs(
        self, query: SearchQuery, size: int
    ) -> tuple[list[list[_LegHit]], bool, bool, dict[str, dict[str, Any]]]:
        """The query's legs (``size`` hits each) as hits of published generations only; whether any
        hit was older than its fence; whether any was dropped; a hybrid query's likely survivors'
        sources, read with the fences (any generation: the caller keeps those of visible hits)."""
        if isinstance(query, SemanticQuery):
            legs = [_leg_hits(self._send(self._knn(query.vector, size, query)), "semantic")]
        elif isinstance(query, KeywordQuery):
            legs = [_leg_hits(self._send(self.keyword_body(query.text, size, query)), "keyword")]
        else:
            assert isinstance(query, HybridQuery)
            knn = rq.ids_only(self._knn(query.vector, size, query))
            stats = self._p.scope_stats
            if self._p.hybrid == "msearch" and stats is not None and not self._alone(stats):
                # the scope's statistics ride with the kNN leg; the keyword leg, which needs them, follows
                with translate("keyword statistics"):
                    terms, reads = stats.reads(self.scope, query.text, self._index)
                sem, *got = self._msearch([knn, *reads])
                scored = stats.scored(terms, got)
                kw = self._send(
                    rq.ids_only(
                        rq.bm25_search(self.scope, query.text, size, query.filters, self.view, scored=scored)
                    )
                )
            elif self._p.hybrid == "msearch":
                sem, kw = self._msearch([knn, rq.ids_only(self.keyword_body(query.text, size, query))])
            else:
                bm25 = rq.ids_only(self.keyword_body(query.text, size, query))
                futures = [self._p.pool().submit(self._send, body) for body in (knn, bm25)]
                sem, kw = (f.result() for f in futures)
            legs = [_leg_hits(sem, "semantic"), _leg_hits(kw, "keyword")]
        likely: list[str] = []  # the survivors if every hit is published (the common case)
        if isinstance(query, HybridQuery):
            hits = {h.chunk_id: h for leg in legs for h in leg}
            guess = fuse_query(query, *([(h.chunk_id, h.score) for h in leg] for leg in legs))
            likely = [rq.doc_id(self.scope, cid, hits[cid].generation) for cid, _ in guess]
        published, sources = self._fences_and_sources({h.document_id for leg in legs for h in leg}, likely)
        stale = any(h.generation < published[h.document_id] for leg in legs for h in leg)
        visible = [[h for h in leg if h.generation == published[h.document_id]] for leg in legs]
        return visible, stale, sum(map(len, visible)) < sum(map(len, legs)), sources

    def _read(self, chunk_ids: list[str], hits: dict[str, _LegHit]) -> dict[str, dict[str, Any]]:
        """The fused survivors' sources, by their versioned ``_id``; a chunk of an index written before
        versions were kept apart is found under its plain id instead."""
        if not chunk_ids:
            return {}
        out = self._mget([rq.doc_id(self.scope, cid, hits[cid].generation) for cid in chunk_ids])
        missing = [cid for cid in chunk_ids if cid not in out and hits[cid].generation]
        if missing:
            out.update(self._mget([rq.doc_id(self.scope, cid) for cid in missing]))
        return out

    def _mget(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        with translate("read"):
            resp = self._p.client.mget(body=rq.mget_body(self.scope, self._index, ids))
        return self._in_scope(resp["docs"])

    def _in_scope(self, docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Found chunks of an ``_mget`` answer by chunk id; the scope is checked again on the way out,
        not only in the query."""
        out: dict[str, dict[str, Any]] = {}
        for doc in docs:
            src = doc.get("_source")
            if (
                doc.get("found")
                and src
                and (src["tenant_id"], src["namespace_id"])
                == (
                    self.scope.tenant_id,
                    self.scope.namespace_id,
                )
            ):
                out[chunk_id(src["document_id"], src["sequence_number"])] = src
        return out

    def keyword_body(self, text: str, k: int, query: KeywordQuery | HybridQuery) -> dict[str, Any]:
        """The keyword leg, scored with the scope's own statistics where the index keeps them."""
        scored = None
        stats = self._p.scope_stats
        if stats is not None and self._alone(stats):
            scored = term_stats.own_query(text)
        elif stats is not None:
            with translate("keyword statistics"):
                scored = stats.query(self.scope, text, self._routing, self._index)
        return rq.bm25_search(self.scope, text, k, query.filters, self.view, scored=scored)

    def _alone(self, stats: term_stats.ScopeStatistics) -> bool:
        """The scope is the only one on its shard, and all of it is there: the shard's own statistics
        are the scope's (a scope spread over a routing partition of shards never is)."""
        if self._p.routing_partition_size > 1:
            return False
        with translate("keyword statistics"):
            return stats.alone(self.scope, self._index, self._routing)

    def _knn(self, vector: Sequence[float], k: int, query: SemanticQuery | HybridQuery) -> dict[str, Any]:
        if len(vector) != self._p.dimension:
            raise errors.EmbeddingMismatch(
                "query vector does not match the index dimension", expected=self._p.dimension, got=len(vector)
            )
        return rq.knn_search(
            self.scope, vector, k, query.filters, candidates=self._p.knn_candidates, view=self.view
        )

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        with translate("search"):
            resp: dict[str, Any] = self._p.client.search(index=self._index, body=body, routing=self._routing)
        return resp

    def _msearch(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        lines: list[dict[str, Any]] = []
        for body in bodies:
            lines += [{"index": self._index, "routing": self._routing}, body]
        with translate("search"):
            resp = self._p.client.msearch(body=lines)
        out: list[dict[str, Any]] = []
        for item in resp["responses"]:
            if "error" in item:
                raise errors.DependencyFailed("OpenSearch rejected a search leg", status=item.get("status"))
            out.append(item)
        return out

    @staticmethod
    def _hits(leg_hits: list[_LegHit], leg: Literal["semantic", "keyword"]) -> list[SearchHit]:
        hits = []
        for rank, h in enumerate(leg_hits, start=1):
            assert h.source is not None  # single legs fetch their sources
            breakdown = (
                ScoreBreakdown(semantic_rank=rank, semantic_score=h.score)
                if leg == "semantic"
                else ScoreBreakdown(keyword_rank=rank, keyword_score=h.score)
            )
            hits.append(SearchHit(chunk=_chunk(h.source), score=h.score, breakdown=breakdown))
        return hits


@dataclass(frozen=True, slots=True)
class _LegHit:
    """One hit of a leg: which chunk of which generation, its leg's score, and its source if fetched."""

    chunk_id: str
    document_id: str
    generation: int
    score: float
    source: dict[str, Any] | None


def _leg_hits(resp: dict[str, Any], leg: Literal["semantic", "keyword"]) -> list[_LegHit]:
    out = []
    for h in resp["hits"]["hits"]:
        src = h.get("_source")
        if src:
            doc, seq, gen = src["document_id"], src["sequence_number"], src.get("generation", 0)
        else:  # an ids-only leg: the keyword doc values
            fields = h["fields"]
            doc, seq = fields["document_id"][0], fields["sequence_number"][0]
            gen = fields.get("generation", [0])[0]
        raw = float(h["_score"])
        # lucene cosinesimil scores are (1 + cos) / 2; report the cosine like the embedded store.
        score = 2 * raw - 1 if leg == "semantic" else raw
        out.append(_LegHit(chunk_id(doc, seq), doc, int(gen), score, src))
    return out


def _fence_outcome(document_id: str, status: int, error: str) -> bool | errors.RaglineError:
    """A fence action's answer: raised (2xx), refused (409: a newer generation holds it), or this
    document's own failure, by status as :func:`translate` maps a whole request's."""
    if status < 300 or status == 409:
        return status < 300
    details = {"document_id": document_id, "status": status, "error": error}
    if status == 429:
        return errors.Throttled("OpenSearch throttled the publish of the document", **details)
    if status >= 500:
        return errors.DependencyUnavailable("OpenSearch failed to publish the document", **details)
    return errors.DependencyFailed("OpenSearch refused the document's fence", **details)


def _chunk(src: dict[str, Any]) -> Chunk:
    return Chunk(
        document_id=src["document_id"],
        sequence_number=src["sequence_number"],
        text=src["text"],
        metadata=ChunkMetadata.model_validate(src.get("metadata") or {}),
    )
