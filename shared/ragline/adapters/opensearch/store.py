""":class:`~ragline.ports.VectorStore` on OpenSearch: lucene HNSW kNN + BM25, client-side RRF.

Requests are built by :mod:`ragline.adapters.opensearch.requests` (pure); this module only sends them
and translates vendor errors (:func:`translate`) into Ragline errors.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from ragline import errors
from ragline.adapters.opensearch import requests as rq
from ragline.config import Settings
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

Refresh = Literal["false", "true", "wait_for"]
HybridStrategy = Literal["msearch", "concurrent"]


@contextmanager
def translate(action: str) -> Iterator[None]:
    """Vendor errors → Ragline errors, by exception type and HTTP status, never by message text."""
    from opensearchpy import exceptions as ex
    from opensearchpy.helpers import BulkIndexError

    try:
        yield
    except (ex.ConnectionTimeout, ex.ConnectionError) as exc:
        raise errors.DependencyUnavailable(f"OpenSearch unreachable during {action}") from exc
    except BulkIndexError as exc:
        statuses = {next(iter(e.values())).get("status") for e in exc.errors}
        if statuses & {429}:
            raise errors.Throttled(f"OpenSearch throttled {action}") from exc
        raise errors.DependencyFailed(f"OpenSearch rejected {action}", failed=len(exc.errors)) from exc
    except ex.NotFoundError as exc:
        raise errors.NotFound(f"OpenSearch: not found during {action}") from exc
    except ex.TransportError as exc:
        status = exc.status_code if isinstance(exc.status_code, int) else 0
        if status == 429:
            raise errors.Throttled(f"OpenSearch throttled {action}") from exc
        if status >= 500 or status == 0:
            raise errors.DependencyUnavailable(f"OpenSearch failed during {action}", status=status) from exc
        raise errors.DependencyFailed(f"OpenSearch rejected {action}", status=status) from exc


def build_client(settings: Settings) -> OpenSearch:
    from opensearchpy import OpenSearch, Urllib3HttpConnection

    if not settings.opensearch_url:
        raise errors.ConfigurationError("RAGLINE_OPENSEARCH_URL is required for the OpenSearch store")
    kwargs: dict[str, Any] = {
        "hosts": [settings.opensearch_url],
        "connection_class": Urllib3HttpConnection,
        "timeout": 30,
        "max_retries": 3,
        "retry_on_timeout": True,
        "retry_on_status": (502, 503, 504),
        "http_compress": True,
    }
    if settings.opensearch_auth == "basic":
        kwargs["http_auth"] = (settings.opensearch_username, settings.opensearch_password.get_secret_value())
    elif settings.opensearch_auth == "sigv4":
        import boto3
        from opensearchpy import Urllib3AWSV4SignerAuth

        credentials = boto3.Session().get_credentials()
        kwargs["http_auth"] = Urllib3AWSV4SignerAuth(
            credentials, settings.aws_region, settings.opensearch_service
        )
    return OpenSearch(**kwargs)


class OpenSearchVectorStoreProvider:
    def __init__(
        self,
        client: OpenSearch,
        *,
        index: str,
        dimension: int,
        refresh: Refresh = "true",
        hybrid: HybridStrategy = "msearch",
    ) -> None:
        self.client = client
        self.index = index
        self.dimension = dimension
        self.refresh = refresh
        self.hybrid = hybrid
        self._ready = False
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    @classmethod
    def from_settings(
        cls, settings: Settings, *, dimension: int, model_id: str
    ) -> OpenSearchVectorStoreProvider:
        return cls(
            build_client(settings),
            index=rq.index_name(settings.opensearch_index_prefix, model_id, dimension),
            dimension=dimension,
            refresh=settings.opensearch_refresh,
        )

    def ensure_index(self) -> None:
        """Create the pooled index on first use (idempotent; a concurrent creator is fine)."""
        if self._ready:
            return
        from opensearchpy.exceptions import RequestError

        with self._lock, translate("index creation"):
            for name, body in (
                (self.index, rq.index_body(self.dimension)),
                (rq.fences_index(self.index), rq.FENCES_BODY),
            ):
                if not self.client.indices.exists(index=name):
                    try:
                        self.client.indices.create(index=name, body=body)
                    except RequestError as exc:
                        if exc.error != "resource_already_exists_exception":
                            raise
            self._ready = True

    def drop(self) -> None:
        """Delete the chunk and fence indexes (tests, benchmarks); gone ones are ignored."""
        with translate("index deletion"):
            indexes = [self.index, rq.fences_index(self.index)]
            self.client.indices.delete(index=indexes, ignore_unavailable=True)
        self._ready = False

    def scoped(self, scope: TenantScope) -> OpenSearchVectorStore:
        self.ensure_index()
        return OpenSearchVectorStore(self, scope)

    def purge_tenant(self, tenant_id: str) -> int:
        """The tenant's chunks (one routed delete-by-query over every namespace), then its fences."""
        self.ensure_index()
        query = {"query": {"term": {"tenant_id": tenant_id}}}
        with translate("tenant purge"):
            self.client.indices.refresh(index=[self.index, rq.fences_index(self.index)])
            chunks = self.client.delete_by_query(
                index=self.index, body=query, routing=tenant_id, refresh=True, conflicts="proceed"
            )
            self.client.delete_by_query(
                index=rq.fences_index(self.index), body=query, refresh=True, conflicts="proceed"
            )
        return int(chunks.get("deleted", 0))

    def pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ragline-os")
            return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
        self.client.close()


class OpenSearchVectorStore:
    def __init__(self, provider: OpenSearchVectorStoreProvider, scope: TenantScope) -> None:
        self._p = provider
        self.scope = scope
        self._routing = scope.tenant_id

    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities()

    def upsert(self, chunks: Sequence[Chunk], *, generation: int = 0) -> int:
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
        from opensearchpy import helpers

        for document_id in {c.document_id for c in chunks}:
            fence = self._fence(document_id)
            if fence > generation:
                raise errors.Superseded(
                    "a newer version of the document was published",
                    document_id=document_id,
                    generation=generation,
                    published=fence,
                )
        written = 0
        with translate("bulk indexing"):
            for ok, item in helpers.streaming_bulk(
                self._p.client,
                rq.bulk_actions(self.scope, self._p.index, chunks, generation),
                refresh=self._p.refresh,
                chunk_size=500,
                max_retries=3,
                initial_backoff=1,
                raise_on_error=False,
            ):
                status = next(iter(item.values())).get("status", 0)
                if ok:
                    written += 1
                elif status == 409:
                    continue  # a newer generation holds this chunk: the older write loses, by design
                elif status == 429:
                    raise errors.Throttled("OpenSearch throttled bulk indexing")
                else:
                    raise errors.DependencyFailed(
                        "OpenSearch rejected a chunk", status=status, item=str(item)[:300]
                    )
        return written

    def _fence(self, document_id: str) -> int:
        with translate("fence read"):
            resp = self._p.client.get(
                index=rq.fences_index(self._p.index),
                id=rq.fence_id(self.scope, document_id),
                _source=False,
                ignore=404,  # no fence yet (and no warning logged for it)
            )
        return int(resp["_version"]) if resp.get("found") else 0

    def publish(self, document_id: str, *, generation: int) -> bool:
        """The fence is a document whose external version *is* the generation: OpenSearch refuses (409)
        to lower it, which makes the raise atomic; then older generations' chunks are swept."""
        from opensearchpy.exceptions import ConflictError

        with translate("publish"):
            try:
                self._p.client.index(
                    index=rq.fences_index(self._p.index),
                    id=rq.fence_id(self.scope, document_id),
                    body=rq.fence_source(self.scope, document_id),
                    version=generation,
                    version_type="external_gte",
                )
            except ConflictError:
                return False
        self._refresh_if_lazy()
        self.delete_document(document_id, older_than=generation)
        return True

    def discard(self, document_id: str, *, generation: int) -> int:
        self._refresh_if_lazy()
        return self._delete_by_query(rq.document_query(self.scope, document_id, generation=generation))

    def _refresh_if_lazy(self) -> None:
        """Delete-by-query sees only refreshed chunks; with lazy bulk refresh, refresh first."""
        if self._p.refresh == "false":
            with translate("refresh"):
                self._p.client.indices.refresh(index=self._p.index)

    def vectors(self, document_id: str) -> dict[str, NDArray[np.float32]]:
        from opensearchpy import helpers

        with translate("vectors"):
            return {
                h["_source"]["text"]: np.asarray(h["_source"][rq.VECTOR_FIELD], dtype=np.float32)
                for h in helpers.scan(
                    self._p.client,
                    index=self._p.index,
                    query={"query": rq.document_query(self.scope, document_id)},
                    routing=self._routing,
                    _source=["text", rq.VECTOR_FIELD],
                    size=500,
                )
            }

    def delete_document(self, document_id: str, *, older_than: int | None = None) -> int:
        return self._delete_by_query(rq.document_query(self.scope, document_id, older_than=older_than))

    def _delete_by_query(self, query: dict[str, Any]) -> int:
        body = {"query": query}
        with translate("delete"):
            resp = self._p.client.delete_by_query(
                index=self._p.index,
                body=body,
                routing=self._routing,
                refresh=self._p.refresh != "false",
                conflicts="proceed",
            )
        return int(resp.get("deleted", 0))

    def count(self, document_id: str | None = None) -> int:
        query = (
            rq.document_query(self.scope, document_id)
            if document_id is not None
            else {"bool": {"filter": rq.scope_filter(self.scope)}}
        )
        with translate("count"):
            resp = self._p.client.count(index=self._p.index, body={"query": query}, routing=self._routing)
        return int(resp["count"])

    def neighbors(
        self, document_id: str, sequence_number: int, *, before: int = 5, after: int = 5
    ) -> list[Chunk]:
        window = neighbor_window(sequence_number, before, after)
        if window is None:
            return []
        body = rq.neighbors_search(self.scope, document_id, sequence_number, *window)
        with translate("neighbors"):
            resp = self._p.client.search(index=self._p.index, body=body, routing=self._routing)
        return [_chunk(h["_source"]) for h in resp["hits"]["hits"]]

    def search(self, query: SearchQuery) -> list[SearchHit]:
        if isinstance(query, SemanticQuery):
            return self._hits(self._send(self._knn(query.vector, query.k, query)), "semantic")
        if isinstance(query, KeywordQuery):
            return self._hits(
                self._send(rq.bm25_search(self.scope, query.text, query.k, query.filters)), "keyword"
            )
        assert isinstance(query, HybridQuery)
        knn = rq.ids_only(self._knn(query.vector, query.candidates, query))
        bm25 = rq.ids_only(rq.bm25_search(self.scope, query.text, query.candidates, query.filters))
        if self._p.hybrid == "msearch":
            sem, kw = self._msearch([knn, bm25])
        else:
            futures = [self._p.pool().submit(self._send, body) for body in (knn, bm25)]
            sem, kw = (f.result() for f in futures)
        fused = fuse_query(query, _ranked(sem, "semantic", {}), _ranked(kw, "keyword", {}))
        sources = self._read([cid for cid, _ in fused])
        return [
            SearchHit(chunk=_chunk(sources[cid]), score=bd.fused_score or 0.0, breakdown=bd)
            for cid, bd in fused
            if cid in sources  # a chunk deleted between the legs and the read is simply gone
        ]

    def _read(self, chunk_ids: list[str]) -> dict[str, dict[str, Any]]:
        if not chunk_ids:
            return {}
        with translate("read"):
            resp = self._p.client.mget(body=rq.mget_body(self.scope, self._p.index, chunk_ids))
        out: dict[str, dict[str, Any]] = {}
        for doc in resp["docs"]:
            src = doc.get("_source")
            # The scope is checked again on the way out, not only in the query.
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

    def _knn(self, vector: Sequence[float], k: int, query: SemanticQuery | HybridQuery) -> dict[str, Any]:
        if len(vector) != self._p.dimension:
            raise errors.EmbeddingMismatch(
                "query vector does not match the index dimension", expected=self._p.dimension, got=len(vector)
            )
        return rq.knn_search(self.scope, vector, k, query.filters)

    def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        with translate("search"):
            resp: dict[str, Any] = self._p.client.search(
                index=self._p.index, body=body, routing=self._routing
            )
        return resp

    def _msearch(self, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
        lines: list[dict[str, Any]] = []
        for body in bodies:
            lines += [{"index": self._p.index, "routing": self._routing}, body]
        with translate("search"):
            resp = self._p.client.msearch(body=lines)
        out: list[dict[str, Any]] = []
        for item in resp["responses"]:
            if "error" in item:
                raise errors.DependencyFailed("OpenSearch rejected a search leg", status=item.get("status"))
            out.append(item)
        return out

    @staticmethod
    def _hits(resp: dict[str, Any], leg: Literal["semantic", "keyword"]) -> list[SearchHit]:
        sources: dict[str, dict[str, Any]] = {}
        hits = []
        for rank, (cid, score) in enumerate(_ranked(resp, leg, sources), start=1):
            breakdown = (
                ScoreBreakdown(semantic_rank=rank, semantic_score=score)
                if leg == "semantic"
                else ScoreBreakdown(keyword_rank=rank, keyword_score=score)
            )
            hits.append(SearchHit(chunk=_chunk(sources[cid]), score=score, breakdown=breakdown))
        return hits


def _ranked(
    resp: dict[str, Any], leg: Literal["semantic", "keyword"], sources: dict[str, dict[str, Any]]
) -> list[tuple[str, float]]:
    """A leg as (chunk id, score) pairs; ``_source`` kept aside so only survivors become chunks."""
    out = []
    for h in resp["hits"]["hits"]:
        src = h.get("_source")
        if src:
            cid = chunk_id(src["document_id"], src["sequence_number"])
            sources[cid] = src
        else:  # an ids-only leg: the two keyword doc values
            fields = h["fields"]
            cid = chunk_id(fields["document_id"][0], fields["sequence_number"][0])
        raw = float(h["_score"])
        # lucene cosinesimil scores are (1 + cos) / 2; report the cosine like the embedded store.
        out.append((cid, 2 * raw - 1 if leg == "semantic" else raw))
    return out


def _chunk(src: dict[str, Any]) -> Chunk:
    return Chunk(
        document_id=src["document_id"],
        sequence_number=src["sequence_number"],
        text=src["text"],
        metadata=ChunkMetadata.model_validate(src.get("metadata") or {}),
    )
