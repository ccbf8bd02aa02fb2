"""Automated growth of a model's pooled chunk indexes: a larger generation once a shard fills, and
tenants moved between indexes without a read gap and without a mix.

**When.** :meth:`Growth.check` compares the chunks of the pool's fullest primary shard with
``max_shard_chunks`` (``RAGLINE_OPENSEARCH_SHARD_MAX_CHUNKS``; by default :func:`max_shard_chunks_for`:
:data:`SHARD_CHUNKS`, 1M, chosen by search latency, capped at 40 GiB of chunks at the ~18.8 KB on
disk per 1,024-d chunk measured in docs/deploy.md "Capacity" — AWS's upper guidance for a search shard
is 50 GiB, the margin is the merges' room). Chunks, not the shard's bytes: the node reports a shard's
bytes only as flushed (a small index stays at its empty size for minutes), its chunks exactly once
refreshed, and every publish refreshes. Past it, a generation of twice the primaries becomes the
pool: new tenants go there.

**Moving a tenant** (:meth:`Growth.move`), in this order, each step the condition of the next:

1. its placement is marked *moving* (compare-and-set): its writes now wait (``Placements.for_write``),
   and a write already under way sees the change when it checks after writing and runs again at the
   target once the move is done (every write is idempotent: versioned chunks, fences);
2. the source is refreshed, so the copy sees every write acknowledged before step 1;
3. the tenant's chunks are copied (``_reindex``, keeping each chunk's routing and its generation as
   the external version) and the target refreshed: the copy is complete and searchable;
4. the placement flips to the target (compare-and-set): readers that read it go there; a reader with
   the old placement cached finds out in its fence read and reads again there (``.placement``);
5. the old copy is *retired*: deleted by :meth:`Growth.reap` once ``grace`` has passed (longer than
   readers cache placements), never before the flip.

Fences live in one index per model and never move: a document's published generation is the same on
both sides of a move. Readers see the source, complete, until step 4 and the target, complete, after.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from typing import TYPE_CHECKING, Any, Protocol

from ragline import errors
from ragline.adapters.opensearch import placement as pl
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.client import translate

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

GIB = 1024**3
SHARD_BYTES = 40 * GIB
CHUNK_BYTES_1024 = 18.8 * 1024
"""On-disk bytes of a 1,024-d chunk with ~1 KB of text (docs/deploy.md, "Capacity")."""
SHARD_CHUNKS = 1_000_000
"""The most chunks a pooled primary holds by default, whatever the dimension: a routed search walks
its whole shard's postings and graph under the tenant's filter, so the shard's size is what every
pooled tenant's search pays — on the 1M-chunk shard of docs/benchmarks.md ("OpenSearch at scale") a
100-chunk tenant's hybrid p95 was 24.7 ms, at the 25 ms target. Bytes bind first only past ~2,400 d."""
SILO_SHARE = 20
"""A tenant holding a twentieth of a full shard (50,000 chunks at :data:`SHARD_CHUNKS`) gets an index
of its own: in a pooled 1M-chunk shard a 100,000-chunk tenant's hybrid p95 was 134 ms (its filtered
kNN walks a graph nine tenths of which is others', its BM25 the pool's postings), in an index of its
own 18 ms (docs/benchmarks.md, "At 1M again"). Each silo is one more shard (and its replica) on the
domain: 10M chunks make at most 200 silos at this share."""
MAX_SHARDS = 64
"""The most primaries a new generation gets (each doubles the last)."""
_log = logging.getLogger(__name__)


class Provider(Protocol):
    """What growth needs of the provider whose pool it grows (``OpenSearchVectorStoreProvider``): its
    client and placements, the model's alias (``index``, which every chunk index of the pool is under)
    and dimension, and chunk indexes made as it makes them (idempotent). Named here, so growth imports
    no store module and the provider, which runs growth, may import this one."""

    @property
    def client(self) -> OpenSearch: ...

    @property
    def placements(self) -> pl.Placements: ...

    @property
    def index(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def create_chunk_index(self, name: str, *, shards: int | None = None, silo: bool = False) -> None: ...


class Growth:
    """Growth of ``provider``'s pool (see the module)."""

    def __init__(
        self,
        provider: Provider,
        *,
        max_shard_chunks: int,
        grace: float,
        silo_chunks: int = 0,
        silo_tenants: frozenset[str] = frozenset(),
    ) -> None:
        self.p = provider
        self.placements = provider.placements
        self.max_shard_chunks = max_shard_chunks or max_shard_chunks_for(provider.dimension)
        self.grace = grace
        self.silo_chunks = silo_chunks or self.max_shard_chunks // SILO_SHARE
        """A pooled tenant with this many chunks is moved to an index of its own."""
        if self.silo_chunks >= self.max_shard_chunks:
            raise errors.ConfigurationError(
                "a tenant must leave the pool for an index of its own before it fills a pool shard",
                silo_chunks=self.silo_chunks,
                shard_max_chunks=self.max_shard_chunks,
            )
        self.silo_tenants = silo_tenants
        """Tenants placed in an index of their own whatever their size (a setting)."""
        self.legacy_warned = False
        """Whether this process said once that its legacy layout cannot grow."""

    # -- when ----------------------------------------------------------------------------------------
    def shard_chunks(self, index: str) -> dict[int, int]:
        """Each primary shard's searchable chunks, by shard number."""
        with translate("shard sizes"):
            stats = self.p.client.indices.stats(index=index, metric="docs", level="shards")
        shards = stats["indices"][index]["shards"]
        return {
            int(n): max(c["docs"]["count"] for c in copies if c["routing"]["primary"])
            for n, copies in shards.items()
        }

    def full(self, index: str, tenant_id: str | None = None) -> bool:
        """Whether ``index``'s largest primary (or the shard ``tenant_id`` is routed to) passed the
        threshold."""
        sizes = self.shard_chunks(index)
        if tenant_id is not None:
            with translate("shard of a tenant"):
                found = self.p.client.search_shards(index=index, routing=tenant_id)
            sizes = {int(group[0]["shard"]): sizes[int(group[0]["shard"])] for group in found["shards"]}
        return max(sizes.values(), default=0) >= self.max_shard_chunks

    def check(self) -> str | None:
        """A new, larger generation made the pool when the pool's largest primary passed the
        threshold; which one (None: no growth needed)."""
        pool = self.placements.pool(fresh=True)
        if pool is None or not self.full(pool):
            return None
        number = _generation(self.p.index, pool) + 1
        settings = self.p.client.indices.get_settings(index=pool)[pool]["settings"]["index"]
        shards = int(settings["number_of_shards"])
        target = pl.generation_index(self.p.index, number)
        self.p.create_chunk_index(target, shards=min(2 * shards, MAX_SHARDS))
        self.placements.add_index(target, pool=True)
        return target

    def silo_due(self, tenant_id: str, index: str) -> bool:
        """Whether the tenant, living in the pool's ``index``, belongs in an index of its own: named
        by the setting, or holding ``silo_chunks`` chunks there."""
        if tenant_id in self.silo_tenants:
            return True
        with translate("tenant size"):
            found = self.p.client.count(
                index=index, body={"query": {"term": {"tenant_id": tenant_id}}}, routing=tenant_id
            )
        return int(found["count"]) >= self.silo_chunks

    # -- moving a tenant -----------------------------------------------------------------------------
    def move(self, tenant_id: str, target: str) -> int:
        """Move the tenant's chunks to ``target`` (a chunk index of the model) in the module's order;
        how many were copied. The target must exist; a tenant already there is left alone."""
        place = self.placements.for_write(tenant_id)
        if place.index == target:
            return 0
        source = place.index
        place = self.placements.write(tenant_id, place, index=source, moving=target)  # 1. writes wait
        try:
            with translate("tenant move"):
                self.p.client.indices.refresh(index=source)  # 2. every acknowledged write
                copied = self.p.client.reindex(  # 3. the copy, complete and searchable
                    body={
                        "source": {"index": source, "query": {"term": {"tenant_id": tenant_id}}},
                        # the routing named, not kept from each hit: k-NN's derived source drops a
                        # hit's _routing when it puts the vector back into _source (store.purge_tenant)
                        "dest": {"index": target, "version_type": "external", "routing": f"={tenant_id}"},
                        "conflicts": "proceed",
                    },
                    refresh=True,
                    wait_for_completion=True,
                    request_timeout=3600,
                )
            if copied.get("failures"):
                failures = str(copied["failures"])[:300]
                raise errors.DependencyFailed("the tenant's copy failed", failures=failures)
        except BaseException:
            with contextlib.suppress(errors.RaglineError):  # stays where it was (or a writer undid it)
                self.placements.write(tenant_id, place, index=source, moving=None)
            raise
        self.placements.write(tenant_id, place, index=target, moving=None)  # 4. the flip
        self.placements.retire(tenant_id, source, time.time() + self.grace)  # 5. deleted after grace
        return int(copied.get("created", 0)) + int(copied.get("updated", 0))

    def reap(self, *, now: float | None = None) -> int:
        """Delete the retired copies whose grace has passed; how many chunks were deleted."""
        now = time.time() if now is None else now
        deleted = 0
        for tenant_id, index, after in self.placements.retired():
            if after > now:
                continue
            if self.placements.read(tenant_id).index == index:  # moved back since: not a copy
                self.placements.forget_retired(tenant_id, index)
                continue
            with translate("retired copy deletion"):
                resp = self.p.client.delete_by_query(
                    index=index,
                    body={"query": {"term": {"tenant_id": tenant_id}}},
                    routing=tenant_id,
                    conflicts="proceed",
                    refresh=True,
                    _source_excludes=rq.SOURCE_EXCLUDES,  # keeps each hit's _routing (store.purge_tenant)
                )
            deleted += int(resp.get("deleted", 0))
            self.placements.forget_retired(tenant_id, index)
        return deleted


def max_shard_chunks_for(dimension: int) -> int:
    """The default threshold: :data:`SHARD_CHUNKS`, or fewer where that many chunks of ``dimension``
    would pass 40 GiB (AWS's upper guidance for a search shard is 50 GiB)."""
    return min(SHARD_CHUNKS, int(SHARD_BYTES / (CHUNK_BYTES_1024 * dimension / 1024)))


def _generation(name: str, index: str) -> int:
    """The generation number of a pool index (0: the legacy index under the alias's name)."""
    found = re.fullmatch(re.escape(name) + r"-g(\d+)", index)
    return int(found.group(1)) if found else 0


def grow(provider: Provider, growth: Growth, tenant_id: str, *, pool_wide: bool = True) -> dict[str, Any]:
    """One round of growth as a writer of ``tenant_id`` runs it (:meth:`OpenSearchVectorStoreProvider
    .grow`): with ``pool_wide``, a new generation if the pool filled and retired copies past their grace
    deleted; the tenant moved to an index of its own if it is a silo tenant (by setting, or past
    ``silo_chunks``), else to the pool if its shard is full elsewhere."""
    pool = provider.placements.pool(fresh=True)
    if pool == provider.index:  # the legacy index holds the alias's name: nothing can join it
        if not growth.legacy_warned:
            growth.legacy_warned = True
            _log.warning(
                "%s is an index made before generations: it cannot grow or give a tenant an index of "
                "its own (docs/deploy.md, 'Shards, placement and growth')",
                provider.index,
            )
        return {"grown": None, "moved": 0, "reaped": 0}
    grown = growth.check() if pool_wide else None
    if grown is not None:
        pool = provider.placements.pool(fresh=True)
    place = provider.placements.read(tenant_id)
    silo = pl.silo_index(provider.index, tenant_id)
    moved = 0
    settled = bool(place.version) and place.moving is None  # written, and not being moved
    if settled and place.index != silo and growth.silo_due(tenant_id, place.index):
        provider.create_chunk_index(silo, shards=1, silo=True)
        provider.placements.add_index(silo)
        moved = growth.move(tenant_id, silo)
    elif (
        settled
        and pool is not None
        and place.index not in (silo, pool)
        and growth.full(place.index, tenant_id)
    ):
        moved = growth.move(tenant_id, pool)
    return {"grown": grown, "moved": moved, "reaped": growth.reap() if pool_wide else 0}
