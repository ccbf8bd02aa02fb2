"""The stores ``bench/peers.py`` compares, behind one small interface: chunks in, document ids out.

Every store gets the same rows (id, tenant, title + text, MiniLM vector) in the same batches and is
asked for one tenant's top k. Ragline binds the tenant when a store is scoped; the peers keep every
tenant in one table/collection with a ``tenant`` field and filter on it in every query, as a pooled
multi-tenant deployment of them would. Each store's SDK is imported only when that store is built, so
the worker process that measures one store loads no other.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

TENANT = "bench"
NAMESPACE = "scifact"
CANDIDATES = 100  # per leg of a hybrid query, as Ragline's HybridQuery default
RRF_K = 60


@dataclass
class Batch:
    ids: list[str]
    tenants: list[str]
    texts: list[str]
    vectors: NDArray[np.float32]


class PeerStore(Protocol):
    """``add`` batches, ``finish`` until searchable, ``maintain`` optional (merge/compact); ids out."""

    modes: tuple[str, ...]

    def add(self, batch: Batch) -> None: ...

    def finish(self) -> None: ...

    def maintain(self) -> None: ...

    def search(self, mode: str, text: str, vector: NDArray[np.float32], k: int) -> list[str]: ...

    def close(self) -> None: ...


class RaglineStore:
    """Ragline's ``VectorStoreProvider`` (embedded SQLite or OpenSearch), one scope per tenant."""

    modes = ("keyword", "semantic", "hybrid:convex", "hybrid:rrf")

    def __init__(self, provider: Any, opensearch: bool) -> None:
        from ragline.domain.models import TenantScope

        self.provider = provider
        self.opensearch = opensearch
        self.writers = int(os.environ.get("RAGLINE_BENCH_OPENSEARCH_WRITERS", "1")) if opensearch else 1
        self.store = provider.scoped(TenantScope(tenant_id=TENANT, namespace_id=NAMESPACE))

    @classmethod
    def embedded(cls, workdir: Path, dim: int) -> RaglineStore:
        from ragline.adapters.embedded.store import SqliteVectorStoreProvider

        return cls(SqliteVectorStoreProvider(workdir / "ragline.sqlite", dimension=dim), opensearch=False)

    @classmethod
    def on_opensearch(cls, url: str, dim: int) -> RaglineStore:
        from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
        from ragline.config import Settings

        provider = OpenSearchVectorStoreProvider(
            build_client(Settings(opensearch_url=url)),
            index=f"bench-peers-{uuid.uuid4().hex[:8]}",
            dimension=dim,
            refresh="false",
        )
        return cls(provider, opensearch=True)

    def add(self, batch: Batch) -> None:
        from ragline.domain.models import Chunk, ChunkMetadata, TenantScope

        by_tenant: dict[str, list[Chunk]] = {}
        for i, (doc, tenant) in enumerate(zip(batch.ids, batch.tenants, strict=True)):
            by_tenant.setdefault(tenant, []).append(
                Chunk(
                    document_id=doc,
                    sequence_number=0,
                    text=batch.texts[i],
                    metadata=ChunkMetadata(filename=doc),
                    embedding=tuple(batch.vectors[i].tolist()),
                )
            )

        def write(tenant: str) -> int:
            scope = TenantScope(tenant_id=tenant, namespace_id=NAMESPACE)
            return int(self.provider.scoped(scope).upsert(by_tenant[tenant]))

        if self.writers > 1:  # OpenSearch is a server: ingestion workers write to it side by side
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(self.writers) as pool:
                list(pool.map(write, by_tenant))
        else:
            for tenant in by_tenant:
                write(tenant)

    def finish(self) -> None:
        if self.opensearch:
            self.provider.client.indices.refresh(index=self.provider.index)

    def maintain(self) -> None:
        """Nothing by default: ingestion never force-merges, so neither does the bench (the index is
        measured with the segments its merge policy left). ``RAGLINE_BENCH_FORCE_MERGE=1`` merges
        OpenSearch's index into one segment first, as the runs before issue 28 did."""
        if self.opensearch and os.environ.get("RAGLINE_BENCH_FORCE_MERGE") == "1":
            self.provider.client.indices.forcemerge(
                index=self.provider.index, max_num_segments=1, request_timeout=3600
            )

    def stats(self) -> dict[str, Any]:
        """OpenSearch's index as it is queried: its segments and its size on the node's disk."""
        if not self.opensearch:
            return {}
        got = self.provider.client.indices.stats(index=self.provider.index, metric="store,segments")
        primaries = got["_all"]["primaries"]
        return {
            "segments": primaries["segments"]["count"],
            "index_bytes": primaries["store"]["size_in_bytes"],
        }

    def search(self, mode: str, text: str, vector: NDArray[np.float32], k: int) -> list[str]:
        from ragline.domain.models import HybridQuery, KeywordQuery, SemanticQuery

        v = tuple(vector.tolist())
        if mode == "keyword":
            q: Any = KeywordQuery(text=text, k=k)
        elif mode == "semantic":
            q = SemanticQuery(text=text, k=k, vector=v)
        else:
            fusion = mode.split(":")[1]
            q = HybridQuery(text=text, k=k, vector=v, candidates=CANDIDATES, fusion=fusion, rrf_k=RRF_K)
        return [h.chunk.document_id for h in self.store.search(q)]

    def close(self) -> None:
        if not self.opensearch:
            self.provider.close()
            return
        try:  # a busy node may take longer than its 30 s cluster-event timeout to delete a big index
            self.provider.client.indices.delete(
                index=[  # the alias's chunk indexes, the fences and the placement registry
                    *self.provider.placements.indexes(),
                    f"{self.provider.index}-fences",
                    self.provider.placements.registry,
                ],
                ignore_unavailable=True,
                master_timeout="5m",
                request_timeout=330,
            )
        except Exception as exc:  # the measurements are taken; say what is left behind
            print(f"could not delete {self.provider.index}: {exc}", file=sys.stderr)


class MilvusLiteStore:
    """Milvus Lite through pymilvus: dense FLAT (exact) + BM25 function, ``hybrid_search`` with RRF."""

    modes = ("keyword", "semantic", "hybrid:rrf")
    collection = "chunks"

    def __init__(self, workdir: Path, dim: int) -> None:
        from pymilvus import DataType, Function, FunctionType, MilvusClient

        from ragline.adapters.embedded.bm25 import STOPWORDS

        self.client = MilvusClient(str(workdir / "milvus.db"))
        schema = MilvusClient.create_schema(auto_id=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("tenant", DataType.VARCHAR, max_length=64)
        # Milvus Lite's analyzers are `standard` (\w+, lowercase) and `jieba`: no `english` analyzer,
        # so no stemmer; Lucene's English stop words (what Milvus's `english` analyzer drops) are given.
        analyzer = {"tokenizer": "standard", "filter": [{"type": "stop", "stop_words": sorted(STOPWORDS)}]}
        schema.add_field(
            "text", DataType.VARCHAR, max_length=65535, enable_analyzer=True, analyzer_params=analyzer
        )
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_function(
            Function(
                name="bm25",
                function_type=FunctionType.BM25,
                input_field_names=["text"],
                output_field_names=["sparse"],
            )
        )
        index = self.client.prepare_index_params()
        index.add_index("dense", index_type="FLAT", metric_type="COSINE")
        index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        index.add_index("tenant", index_type="INVERTED")
        self.client.create_collection(self.collection, schema=schema, index_params=index)
        self.filter = f'tenant == "{TENANT}"'

    def add(self, batch: Batch) -> None:
        rows = [
            {"id": d, "tenant": t, "text": x, "dense": v}
            for d, t, x, v in zip(batch.ids, batch.tenants, batch.texts, batch.vectors.tolist(), strict=True)
        ]
        self.client.insert(self.collection, rows)

    def finish(self) -> None:
        self.client.flush(self.collection)
        self.client.load_collection(self.collection)

    def maintain(self) -> None:
        pass

    def search(self, mode: str, text: str, vector: NDArray[np.float32], k: int) -> list[str]:
        from pymilvus import AnnSearchRequest, RRFRanker

        out = ["id", "text"]
        if mode == "keyword":
            res = self.client.search(
                self.collection, [text], anns_field="sparse", filter=self.filter, limit=k, output_fields=out
            )
        elif mode == "semantic":
            res = self.client.search(
                self.collection,
                [vector.tolist()],
                anns_field="dense",
                filter=self.filter,
                limit=k,
                output_fields=out,
                search_params={"metric_type": "COSINE"},
            )
        else:
            legs = [
                AnnSearchRequest(
                    [vector.tolist()], "dense", {"metric_type": "COSINE"}, CANDIDATES, self.filter
                ),
                AnnSearchRequest([text], "sparse", {"metric_type": "BM25"}, CANDIDATES, self.filter),
            ]
            res = self.client.hybrid_search(
                self.collection, legs, RRFRanker(RRF_K), limit=k, output_fields=out
            )
        return [str(hit["id"]) for hit in res[0]]

    def close(self) -> None:
        self.client.drop_collection(self.collection)
        self.client.close()


class LanceDbStore:
    """LanceDB (embedded): flat (exact) cosine kNN, native FTS (English: stemming, stop words), RRF."""

    modes = ("keyword", "semantic", "hybrid:rrf")

    def __init__(self, workdir: Path, dim: int) -> None:
        # Every hybrid leg logs a deprecation warning about its score column, 1,600 lines a pass.
        os.environ.setdefault("LANCEDB_LOG", "error")
        import lancedb
        import pyarrow as pa

        self.pa = pa
        self.db = lancedb.connect(str(workdir / "lancedb"))
        self.schema = pa.schema(
            [
                pa.field("id", pa.string()),
                pa.field("tenant", pa.string()),
                pa.field("text", pa.string()),
                pa.field("vector", pa.list_(pa.float32(), dim)),
            ]
        )
        self.table = self.db.create_table("chunks", schema=self.schema)
        self.where = f"tenant = '{TENANT}'"

    def add(self, batch: Batch) -> None:
        pa = self.pa
        vectors = pa.FixedSizeListArray.from_arrays(
            pa.array(np.ascontiguousarray(batch.vectors).reshape(-1)), batch.vectors.shape[1]
        )
        self.table.add(
            pa.Table.from_arrays(
                [pa.array(batch.ids), pa.array(batch.tenants), pa.array(batch.texts), vectors],
                schema=self.schema,
            )
        )

    def finish(self) -> None:
        from lancedb.index import FTS

        self.table.create_index("text", config=FTS())  # defaults: English, stemming, stop words
        self.table.create_scalar_index("tenant", index_type="BITMAP")

    def maintain(self) -> None:
        self.table.optimize()  # compacts the fragments the batched adds left

    def search(self, mode: str, text: str, vector: NDArray[np.float32], k: int) -> list[str]:
        from lancedb.rerankers import RRFReranker

        if mode == "keyword":
            q: Any = self.table.search(text, query_type="fts", fts_columns="text")
        elif mode == "semantic":
            q = self.table.search(vector, query_type="vector").distance_type("cosine")
        else:
            # Each leg fetches `limit` rows: ask for CANDIDATES, as the other stores' legs do, keep k.
            q = (
                self.table.search(query_type="hybrid", fts_columns="text")
                .vector(vector)
                .text(text)
                .distance_type("cosine")
                .rerank(RRFReranker(K=RRF_K))
            )
        limit = max(k, CANDIDATES) if mode.startswith("hybrid") else k
        rows = q.where(self.where, prefilter=True).select(["id", "text"]).limit(limit).to_arrow()
        return rows.column("id").to_pylist()[:k]

    def close(self) -> None:
        self.db.drop_table("chunks")


def build(name: str, workdir: Path, dim: int, opensearch_url: str) -> PeerStore:
    if name == "ragline":
        return RaglineStore.embedded(workdir, dim)
    if name == "ragline-opensearch":
        return RaglineStore.on_opensearch(opensearch_url, dim)
    if name == "milvus-lite":
        return MilvusLiteStore(workdir, dim)
    if name == "lancedb":
        return LanceDbStore(workdir, dim)
    raise ValueError(f"unknown store {name!r}")


def versions(name: str) -> str:
    from importlib.metadata import version

    packages: Sequence[str] = {
        "milvus-lite": ("pymilvus", "milvus-lite"),
        "lancedb": ("lancedb", "pyarrow"),
        "ragline-opensearch": ("opensearch-py",),
    }.get(name, ("numpy",))
    return ", ".join(f"{p} {version(p)}" for p in packages)
