"""A model's chunk index on an OpenSearch Serverless collection as its provider keeps it: creation, the
requests its stores send (what a collection allows of the API), and the waits until writes are
searchable (:mod:`.serverless_visibility`).

:class:`ServerlessCollection` is all of ``ServerlessVectorStoreProvider`` (:mod:`.serverless`, which
explains the mode) but the scoped stores it hands out: :mod:`.serverless_store` sees its provider as
this class, and so imports no module that imports it.
"""

from __future__ import annotations

import threading
from functools import partial
from typing import TYPE_CHECKING, Any

from ragline import errors
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch import serverless_requests as srq
from ragline.adapters.opensearch import term_stats
from ragline.adapters.opensearch.client import translate
from ragline.adapters.opensearch.fences import DynamoFences
from ragline.adapters.opensearch.filtering import ensure_fields
from ragline.adapters.opensearch.serverless_visibility import PENDING, Expectation, PendingWrites, wait_until

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

VISIBILITY_TIMEOUT = 120.0
"""Seconds a read or a publish waits for writes to become searchable (AWS documented a 60 s refresh
interval for vector collections at launch)."""
BULK_RETRIES = 3
_BULK_FILTER = "items.*.status,items.*.error.type,items.*.error.reason"


class ServerlessCollection:
    """One embedding model's chunk index on a collection, shared by every scope's store (see the
    module); its fences live in DynamoDB (:class:`~.fences.DynamoFences`)."""

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
