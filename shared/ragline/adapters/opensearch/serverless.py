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

import threading
from functools import partial
from typing import TYPE_CHECKING, Any

from ragline import errors
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch import serverless_requests as srq
from ragline.adapters.opensearch import term_stats
from ragline.adapters.opensearch.client import build_client, translate
from ragline.adapters.opensearch.fences import DynamoFences
from ragline.adapters.opensearch.filtering import ensure_fields
from ragline.adapters.opensearch.serverless_visibility import PENDING, Expectation, PendingWrites, wait_until
from ragline.config import Settings
from ragline.domain.filters import ReadView
from ragline.domain.models import TenantScope

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from ragline.adapters.opensearch.serverless_store import ServerlessVectorStore

__all__ = ["ServerlessVectorStoreProvider"]

VISIBILITY_TIMEOUT = 120.0
"""Seconds a read or a publish waits for writes to become searchable (AWS documented a 60 s refresh
interval for vector collections at launch)."""
BULK_RETRIES = 3
_BULK_FILTER = "items.*.status,items.*.error.type,items.*.error.reason"


class ServerlessVectorStoreProvider:
    def __init__(
        self,
        client: OpenSearch,
        fences: DynamoFences,
        *,
        index: str,
        dimension: int,
        hnsw: tuple[int, int] = rq.HNSW,
        knn_candidates: int = rq.KNN_CANDIDATES,
        visibility_timeout: float = VISIBILITY_TIMEOUT,
        pending: PendingWrites = PENDING,
    ) -> None:
        self.client = client
        self.fences = fences
        self.index = index
        self.dimension = dimension
        self.hnsw = hnsw
        self.knn_candidates = knn_candidates
        self.visibility_timeout = visibility_timeout
        self.pending = pending
        self._ready = False
        self.scope_stats: term_stats.ScopeStatistics | None = None
        """Keyword queries scored with each scope's statistics (:mod:`.term_stats`); None: an older index."""
        self._lock = threading.Lock()

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

    def ensure_index(self) -> None:
        if self._ready:
            return
        from opensearchpy.exceptions import RequestError

        with self._lock, translate("index creation"):
            if not self.client.indices.exists(index=self.index):
                body = srq.index_body(self.dimension, hnsw=self.hnsw)
                try:
                    try:
                        self.client.indices.create(index=self.index, body=body)
                    except RequestError as exc:
                        if exc.error == "resource_already_exists_exception" or "similarity" not in str(exc):
                            raise
                        # a collection refusing the scripted similarity: Lucene's BM25 (shard statistics)
                        self.client.indices.create(index=self.index, body=term_stats.without(body))
                except RequestError as exc:
                    if exc.error != "resource_already_exists_exception":
                        raise
            else:  # an index made before chunks carried filter fields gets them (see .filtering)
                ensure_fields(self.client, self.index)
            mappings = self.client.indices.get_mapping(index=self.index)
            if all(term_stats.supported(m["mappings"]) for m in mappings.values()):
                self.scope_stats = term_stats.ScopeStatistics(self.client, self.index)
            self._ready = True

    def drop(self) -> None:
        """Delete the chunk index (tests, benchmarks); the fences stay in their table."""
        with translate("index deletion"):
            self.client.indices.delete(index=self.index, ignore=404)
        self._ready = False

    def scoped(self, scope: TenantScope, view: ReadView | None = None) -> ServerlessVectorStore:
        from ragline.adapters.opensearch.serverless_store import ServerlessVectorStore

        self.ensure_index()
        return ServerlessVectorStore(self, scope, view)

    def purge_tenant(self, tenant_id: str) -> int:
        """The tenant's chunks in every namespace (searched, then deleted by ``_id``), then its fences."""
        self.ensure_index()
        self.settle()
        deleted = self.delete_ids([h["_id"] for h in self.list_chunks(srq.tenant_query(tenant_id))])
        self.settle()
        self.fences.purge_tenant(tenant_id)
        return deleted

    # -- visibility ---------------------------------------------------------------------------
    def expect(self, expectation: Expectation) -> None:
        self.pending.add(self.index, expectation)

    def settle(self) -> None:
        """Wait until every write and delete of this process is searchable (then run their sweeps)."""
        while batch := self.pending.take(self.index):
            for i, e in enumerate(batch):
                try:
                    wait_until(
                        partial(self._holds, e),
                        timeout=self.visibility_timeout,
                        what="a write",
                    )
                except errors.RaglineError:
                    # raised once; the others wait for the next read (this one may never hold:
                    # another writer's sweep can delete a chunk of a superseded write first)
                    self.pending.give_back(self.index, batch[i + 1 :])
                    raise
                if e.then is not None:
                    e.then()

    def _holds(self, expectation: Expectation) -> bool:
        if self.count(expectation.query) == expectation.count:
            return True
        return expectation.moot is not None and expectation.moot()

    # -- requests -----------------------------------------------------------------------------
    def count(self, query: dict[str, Any]) -> int:
        with translate("count"):
            resp = self.client.count(index=self.index, body={"query": query})
        return int(resp["count"])

    def search(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        with translate("search"):
            resp = self.client.search(index=self.index, body=body)
        hits: list[dict[str, Any]] = resp["hits"]["hits"]
        return hits

    def msearch(self, bodies: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        lines: list[dict[str, Any]] = []
        for body in bodies:
            lines += [{"index": self.index}, body]
        with translate("search"):
            resp = self.client.msearch(body=lines)
        out = []
        for item in resp["responses"]:
            if "error" in item:
                raise errors.DependencyFailed("OpenSearch rejected a search leg", status=item.get("status"))
            out.append(item["hits"]["hits"])
        return out

    def list_chunks(self, query: dict[str, Any], *, source: bool | list[str] = False) -> list[dict[str, Any]]:
        """Every searchable chunk ``query`` matches, highest sequence number first, a page at a time
        (``search_after``: a collection has no scroll)."""
        body = srq.listing(query, source=source)
        out: list[dict[str, Any]] = []
        while True:
            hits = self.search(body)
            out += hits
            if len(hits) < body["size"]:
                return out
            body = {**body, "search_after": hits[-1]["sort"]}

    def delete_ids(self, ids: list[str]) -> int:
        """Delete chunks by ``_id`` in the order given; this process's next read waits until they are
        gone from searches."""
        lines = srq.delete_lines(self.index, ids)
        deleted = sum(self.bulk(batch, gone_ok=True) for batch in rq.bulk_requests(lines, rq.BULK_BYTES))
        if ids:
            self.expect(Expectation(srq.ids_query(ids), 0))
        return deleted

    def bulk(self, lines: list[bytes], *, gone_ok: bool = False) -> int:
        """One ``_bulk`` request; chunks answered 429 are sent again after a backoff."""
        import time

        written = 0
        for attempt in range(BULK_RETRIES + 1):
            with translate("bulk indexing"):
                resp = self.client.bulk(body=b"".join(lines), filter_path=_BULK_FILTER)
            throttled = []
            for line, item in zip(lines, resp["items"], strict=True):
                result = next(iter(item.values()))
                status = result.get("status", 0)
                if status < 300:
                    written += 1
                elif status == 429:
                    throttled.append(line)
                elif not (gone_ok and status == 404):
                    raise errors.DependencyFailed(
                        "OpenSearch Serverless rejected a chunk",
                        status=status,
                        error=str(result.get("error"))[:300],
                    )
            if not throttled:
                return written
            if attempt < BULK_RETRIES:
                time.sleep(2**attempt)
            lines = throttled
        raise errors.Throttled("OpenSearch Serverless throttled bulk indexing")

    def close(self) -> None:
        self.client.close()
