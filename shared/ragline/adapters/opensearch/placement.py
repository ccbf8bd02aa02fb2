"""Where each tenant's chunks live: the placement registry of one embedding model's chunk indexes.

The name :func:`~ragline.adapters.opensearch.requests.index_name` gives is an *alias* over the model's
concrete chunk indexes: the pool's generations ``<name>-g<N>`` (tenants routed by id, several
primaries each; a larger one made when a shard fills, see :mod:`.growth`) and silos ``<name>-s-<hash>``
(one tenant's own index). An index created under the plain name before generations existed is kept as
the pool's generation 0 (an index cannot be renamed; the alias is then not made).

The registry is an OpenSearch index beside the fences, ``<name>-placement``, one small shard
replicated as the chunks are:

- ``layout``: ``{"pool": <the generation new tenants are placed in>, "indexes": [every chunk index]}``;
- ``t:<tenant>``: ``{"tenant_id", "index": <where its chunks live>, "moving": <target or null>}``,
  written when the tenant first writes (so a new pool generation never strands its chunks) and by a
  move. Its ``_version`` changes with every placement change.

Readers cache a tenant's placement (:attr:`Placements.ttl`) and check it on the way: the read of the
fences that every search, neighbour and count already makes (one ``_mget``) carries the placement
document too, and a read whose placement changed meanwhile runs again where the tenant lives now, so a
stale cache costs one more read, never a wrong one. Writers read it in real time and wait while the
tenant is being moved (:meth:`Placements.for_write`).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragline import errors
from ragline.adapters.opensearch.client import translate

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

LAYOUT_ID = "layout"
MOVE_WAIT = 60.0
"""Seconds a write waits for a move of its tenant to finish before a retryable error."""
MOVE_LEASE = 900.0
"""Seconds a move may take: a move older is taken as abandoned (its mover died — a Lambda lives 15
minutes at most) and undone by the next write. Undoing it is safe: until the flip the source is
where the tenant lives, whole; the mover's flip then fails its compare-and-set."""
_POLL = 0.05


@dataclass(frozen=True, slots=True)
class Place:
    """A tenant's placement: its chunk index, the registry document's version (0: none, the pool's
    current generation) and the index it is being moved to (writes wait meanwhile)."""

    index: str
    version: int
    moving: str | None = None
    since: float = 0.0
    """When the move began (epoch s)."""


def registry_index(name: str) -> str:
    return f"{name}-placement"


def generation_index(name: str, generation: int) -> str:
    return f"{name}-g{generation}"


def silo_index(name: str, tenant_id: str) -> str:
    """A tenant's own index (hashed: a tenant id may hold characters an index name may not)."""
    return f"{name}-s-{hashlib.sha256(tenant_id.encode()).hexdigest()[:16]}"


def tenant_doc_id(tenant_id: str) -> str:
    return f"t:{tenant_id}"


def registry_body(*, replicas: int = 0) -> dict[str, Any]:
    return {
        "settings": {"index": {"number_of_shards": 1, "number_of_replicas": replicas}},
        "mappings": {
            "dynamic": "strict",
            "properties": {
                "tenant_id": {"type": "keyword"},
                "index": {"type": "keyword"},
                "moving": {"type": "keyword"},
                "since": {"type": "double"},
                "pool": {"type": "keyword"},
                "indexes": {"type": "keyword"},
                "retired": {"type": "keyword"},
            },
        },
    }


class Placements:
    """The placement registry of the chunk indexes under alias ``name`` (see the module)."""

    def __init__(self, client: OpenSearch, name: str, *, ttl: float = 30.0) -> None:
        self.client = client
        self.name = name
        self.registry = registry_index(name)
        self.ttl = ttl
        self._cache: dict[str, tuple[float, Place]] = {}
        self._pool: str | None = None
        self._pool_at = 0.0
        self._lock = threading.Lock()

    # -- the layout ----------------------------------------------------------------------------------
    def ensure(self, create_chunk_index: Callable[[str], None], *, replicas: int = 0) -> str:
        """The registry, and the pool's first generation (or the legacy index under ``name``) as the
        layout's pool; returns the pool. Idempotent; concurrent callers agree on one layout."""
        from opensearchpy.exceptions import RequestError

        with translate("placement registry"):
            if not self.client.indices.exists(index=self.registry):
                try:
                    self.client.indices.create(index=self.registry, body=registry_body(replicas=replicas))
                except RequestError as exc:
                    if exc.error != "resource_already_exists_exception":
                        raise
            layout = self._layout()
            if layout is None:
                legacy = self.client.indices.exists(index=self.name) and not self.client.indices.exists_alias(
                    name=self.name
                )
                pool = self.name if legacy else generation_index(self.name, 1)
                create_chunk_index(pool)
                # a concurrent creator's layout stands
                with contextlib.suppress(errors.Conflict), translate("placement layout"):
                    self.client.index(
                        index=self.registry,
                        id=LAYOUT_ID,
                        body={"pool": pool, "indexes": [pool]},
                        op_type="create",
                        refresh="true",
                    )
                layout = self._layout()
                assert layout is not None
            create_chunk_index(str(layout["_source"]["pool"]))
            return self.pool(fresh=True) or ""

    def _layout(self) -> dict[str, Any] | None:
        with translate("placement read"):
            doc: dict[str, Any] = self.client.get(index=self.registry, id=LAYOUT_ID, ignore=404)
        return doc if doc.get("found") else None

    def pool(self, *, fresh: bool = False) -> str | None:
        """The generation new tenants are placed in (None before :meth:`ensure`); cached for
        :attr:`ttl` (a tenant's first write pins it where :meth:`for_write` reads it in real time)."""
        now = time.monotonic()
        if self._pool is not None and not fresh and now - self._pool_at < self.ttl:
            return self._pool
        layout = self._layout()
        if layout is None:
            return None
        self._pool, self._pool_at = str(layout["_source"]["pool"]), now
        return self._pool

    def indexes(self) -> list[str]:
        """Every concrete chunk index of the model, read in real time."""
        layout = self._layout()
        return sorted(layout["_source"].get("indexes", [])) if layout else []

    def add_index(self, index: str, *, pool: bool = False) -> None:
        """Record a new chunk index (made by the caller) in the layout; ``pool``: new tenants go there
        from now on. Compare-and-set, retried on a concurrent change."""
        while True:
            layout = self._layout()
            if layout is None:
                raise errors.DependencyFailed("the placement registry has no layout", index=self.registry)
            src = layout["_source"]
            body = {
                "pool": index if pool else src["pool"],
                "indexes": sorted({*src.get("indexes", []), index}),
            }
            try:
                with translate("placement write"):
                    self.client.index(
                        index=self.registry,
                        id=LAYOUT_ID,
                        body=body,
                        if_seq_no=layout["_seq_no"],
                        if_primary_term=layout["_primary_term"],
                        refresh="true",
                    )
            except errors.Conflict:
                continue  # a concurrent change of the layout: read it again
            if pool:
                self._pool, self._pool_at = index, time.monotonic()
            return

    # -- a tenant's place ----------------------------------------------------------------------------
    def cached(self, tenant_id: str) -> Place:
        """The tenant's place as cached (at most :attr:`ttl` old; readers check it, see the module)."""
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(tenant_id)
        if hit and now - hit[0] < self.ttl:
            return hit[1]
        return self.read(tenant_id)

    def read(self, tenant_id: str) -> Place:
        """The tenant's place, read in real time (and cached)."""
        with translate("placement read"):
            doc = self.client.get(index=self.registry, id=tenant_doc_id(tenant_id), ignore=404)
        return self.remember(tenant_id, self.place_of(doc))

    def doc_ref(self, tenant_id: str) -> dict[str, Any]:
        """The tenant's placement document as an ``_mget`` entry (read beside the fences)."""
        return {"_index": self.registry, "_id": tenant_doc_id(tenant_id)}

    def place_of(self, doc: dict[str, Any]) -> Place:
        """A place from a ``get``/``_mget`` answer of the tenant's document (none: the current pool)."""
        if not doc.get("found"):
            pool = self.pool()
            if pool is None:
                raise errors.DependencyFailed("the placement registry has no layout", index=self.registry)
            return Place(pool, 0)
        src = doc["_source"]
        return Place(str(src["index"]), int(doc["_version"]), src.get("moving"), src.get("since") or 0.0)

    def remember(self, tenant_id: str, place: Place) -> Place:
        with self._lock:
            self._cache[tenant_id] = (time.monotonic(), place)
        return place

    def for_write(self, tenant_id: str, *, wait: float = MOVE_WAIT) -> Place:
        """Where the tenant's writes go, read in real time: its document, made on its first write (so
        a later pool generation never strands its chunks); while it is being moved, waits for the
        move (up to ``wait`` s, then :class:`~ragline.errors.Throttled`: retryable)."""
        deadline = time.monotonic() + wait
        while True:
            place = self.read(tenant_id)
            if place.version == 0:
                with contextlib.suppress(errors.Conflict), translate("placement write"):
                    self.client.index(  # a concurrent first write made it: theirs stands
                        index=self.registry,
                        id=tenant_doc_id(tenant_id),
                        body={"tenant_id": tenant_id, "index": self.pool(fresh=True), "moving": None},
                        op_type="create",
                    )
                continue
            if place.moving is None:
                return place
            if time.time() - place.since > MOVE_LEASE:  # abandoned: undone (see MOVE_LEASE)
                with contextlib.suppress(errors.Conflict):
                    self.write(tenant_id, place, index=place.index, moving=None)
                continue
            if time.monotonic() > deadline:
                raise errors.Throttled("the tenant's chunks are being moved; retry", tenant_id=tenant_id)
            time.sleep(_POLL)

    def write(self, tenant_id: str, place: Place, *, index: str, moving: str | None) -> Place:
        """Change the tenant's place if it is still ``place`` (compare-and-set on its version: a
        concurrent change raises :class:`~ragline.errors.Conflict`)."""
        since = time.time() if moving else None
        with translate("placement read"):
            current = self.client.get(index=self.registry, id=tenant_doc_id(tenant_id))
        if int(current["_version"]) != place.version:
            raise errors.Conflict("the tenant's placement changed meanwhile", tenant_id=tenant_id)
        try:
            with translate("placement write"):
                resp = self.client.index(
                    index=self.registry,
                    id=tenant_doc_id(tenant_id),
                    body={**current["_source"], "index": index, "moving": moving, "since": since},
                    if_seq_no=current["_seq_no"],
                    if_primary_term=current["_primary_term"],
                )
        except errors.Conflict as exc:
            raise errors.Conflict("the tenant's placement changed meanwhile", tenant_id=tenant_id) from exc
        return self.remember(tenant_id, Place(index, int(resp["_version"]), moving, since or 0.0))

    # -- retired copies (a move's source, deleted after a grace period: see .growth) -----------------
    def retire(self, tenant_id: str, index: str, after: float) -> None:
        """Record the tenant's copy in ``index`` as retired, to be deleted after ``after`` (epoch s)."""
        self._update_retired(tenant_id, lambda entries: [*entries, f"{after:.3f}@{index}"])

    def forget_retired(self, tenant_id: str, index: str) -> None:
        self._update_retired(tenant_id, lambda entries: [e for e in entries if e.split("@", 1)[1] != index])

    def retired(self) -> list[tuple[str, str, float]]:
        """Every retired copy: (tenant, index, deletable after)."""
        with translate("placement read"):
            self.client.indices.refresh(index=self.registry)
            found = self.client.search(
                index=self.registry, body={"size": 10_000, "query": {"exists": {"field": "retired"}}}
            )
        out = []
        for hit in found["hits"]["hits"]:
            for entry in hit["_source"].get("retired") or []:
                after, index = entry.split("@", 1)
                out.append((hit["_source"]["tenant_id"], index, float(after)))
        return out

    def _update_retired(self, tenant_id: str, change: Callable[[list[str]], list[str]]) -> None:
        while True:
            with translate("placement read"):
                current = self.client.get(index=self.registry, id=tenant_doc_id(tenant_id))
            src = current["_source"]
            try:
                with translate("placement write"):
                    self.client.index(
                        index=self.registry,
                        id=tenant_doc_id(tenant_id),
                        body={**src, "retired": change(list(src.get("retired") or []))},
                        if_seq_no=current["_seq_no"],
                        if_primary_term=current["_primary_term"],
                    )
            except errors.Conflict:
                continue  # a concurrent change of the tenant's document: read it again
            return
