"""Pure request builders for the OpenSearch store: plain dicts, unit-tested without a cluster.

Tenant and namespace filters come only from the bound :class:`TenantScope` and are placed inside the
kNN ``filter`` (efficient filtered search: the filter restricts HNSW candidates, it is not a
post-filter that could return fewer than k hits).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

from ragline.adapters.opensearch import term_stats
from ragline.adapters.opensearch.filtering import FIELDS, chunk_fields, view_clauses
from ragline.domain.filters import ReadView
from ragline.domain.models import Chunk, MetadataFilter, TenantScope

VECTOR_FIELD = "embedding"
SOURCE_EXCLUDES = [VECTOR_FIELD]
DERIVED_SOURCE = "knn.derived_source.enabled"
"""k-NN's derived source (an index setting, static): the stored ``_source`` keeps every field but the
vector, which the node puts back into ``_source`` on reads (get, mget, search, scan) from the vector
values the graph is built on — at float32, as written (:func:`vector_json`). So the vector is stored
once, not also as JSON (which was the largest part of the stored fields), and re-ingest reuse
(``vectors()``) reads it as before. An index created without it keeps its vectors in ``_source`` and
reads the same (docs/benchmarks.md, "A cheaper write (issue 39)")."""
ID_FIELDS = ["document_id", "sequence_number", "generation"]
MAX_ID_BYTES = 512
"""OpenSearch's limit on ``_id``."""
MAX_RESULT_WINDOW = 10_000
"""OpenSearch's default ``index.max_result_window``: a larger ``size`` is a 400."""
BULK_BYTES = 4 * 1024 * 1024
"""Bytes per ``_bulk`` request (~700 chunks of 384-d; a line over it goes alone): see
docs/benchmarks.md, "OpenSearch bulk write path (issue 28)"; far under ``http.max_content_length``."""
BULK_WRITERS_PER_SHARD = 1
"""``_bulk`` requests one upsert keeps in flight per primary shard it writes to. Measured 1, 2 and 4 on
the local node (one shard, 2 cores shared with the client): a second request in flight cost more node
CPU per chunk (1.05–1.35 ms against 0.91–1.00) for no more chunks/s, so one per shard; several
primaries get one each (docs/benchmarks.md, "A cheaper write (issue 39)"). See :func:`bulk_writers`."""


def bulk_writers(primaries: int = 1) -> int:
    """Concurrent ``_bulk`` requests for writes that land on ``primaries`` primary shards (1 with plain
    tenant routing; the shards a tenant's routing partition spans, or the index's primaries, when
    its chunks spread): ``BULK_WRITERS_PER_SHARD`` each."""
    return BULK_WRITERS_PER_SHARD * max(1, primaries)


HNSW = (16, 64)
"""The graph's ``m`` and ``ef_construction``: at 100k chunks ef_construction 64 kept recall@10 ≥ 0.98
with the kNN query's 100 candidates and cost the node up to half the CPU per written chunk of 128,
never more (docs/benchmarks.md, "OpenSearch bulk write path (issue 28)"). Float32 vectors on the lucene
engine: its scalar quantizer (``encoder: sq``, 7 bits in k-NN 2.19) kept recall@10 at 0.96–0.97, under
0.98 (docs/benchmarks.md, "A cheaper write (issue 39)")."""
KNN_CANDIDATES = 100
"""The fewest graph candidates a kNN query explores (its ``k``; Lucene's search beam), however few hits
it returns (``size``): with ``k`` = 10 the HNSW search misses about one true top-10 neighbour in 20
(docs/benchmarks.md, "kNN candidates")."""


def ids_only(body: dict[str, Any]) -> dict[str, Any]:
    """A hybrid leg fetches only what fusion needs, two doc values per hit; the survivors are read
    afterwards. ``stored_fields: _none_`` skips even ``_id``: loading it decompresses the hit's
    stored-fields block (vectors included, on an index without :data:`DERIVED_SOURCE`), which was three
    quarters of a leg's time on 100k chunks."""
    return {**body, "_source": False, "stored_fields": "_none_", "docvalue_fields": ID_FIELDS}


def mget_body(scope: TenantScope, index: str, ids: Sequence[str]) -> dict[str, Any]:
    """Chunks by ``_id`` (see :func:`doc_id`), on the tenant's shard, without their vectors."""
    return {
        "docs": [
            {"_index": index, "_id": i, "routing": scope.tenant_id, "_source": {"excludes": SOURCE_EXCLUDES}}
            for i in ids
        ]
    }


def index_name(prefix: str, model_id: str, dimension: int) -> str:
    """One pooled index per embedding space (model + dimension); tenants share it, routed by tenant."""
    slug = re.sub(r"[^a-z0-9]+", "-", model_id.lower()).strip("-")
    return f"{prefix}-{slug}-{dimension}"


def index_body(
    dimension: int,
    *,
    shards: int = 1,
    replicas: int = 0,
    hnsw: tuple[int, int] = HNSW,
    routing_partition_size: int = 1,
) -> dict[str, Any]:
    """A chunk index of ``shards`` primaries, every chunk routed by its tenant (``_routing`` required):
    a tenant lives on one shard, or on ``routing_partition_size`` of them (OpenSearch adds a hash of
    the ``_id`` to the routing's, so a large tenant spreads while its searches still touch only those
    shards). Both are fixed at creation, and OpenSearch computes every route from them, so a route
    never changes under an index's chunks. A partition needs ``number_of_routing_shards`` equal to
    the shards: with the node's default (a multiple kept for ``_split``) consecutive partition offsets
    fall on the same shard, and a partition of 2 spread nothing (measured on 2.19: 100 chunks, all on
    one shard of 4). Growth makes a new index instead of splitting one."""
    index: dict[str, Any] = {
        "knn": True,
        DERIVED_SOURCE: True,
        "number_of_shards": shards,
        "number_of_replicas": replicas,
    }
    if routing_partition_size > 1:
        index["routing_partition_size"] = routing_partition_size
        index["number_of_routing_shards"] = shards
    return {
        "settings": {
            # refresh_interval and the merge policy stay the node's defaults (1 s, tiered): measured no
            # better at 100k chunks (docs/benchmarks.md, "OpenSearch bulk write path (issue 28)")
            "index": index,
            "analysis": {
                "analyzer": {
                    "ragline_text": {
                        "type": "custom",
                        "tokenizer": "standard",
                        "filter": ["lowercase", "english_possessive", "english_stop", "porter_stem"],
                    }
                },
                "filter": {
                    "english_possessive": {"type": "stemmer", "language": "possessive_english"},
                    "english_stop": {"type": "stop", "stopwords": "_english_"},
                },
            },
            "similarity": term_stats.similarity_settings(),  # per-scope BM25 (:mod:`.term_stats`)
        },
        "mappings": {
            "_routing": {"required": True},
            "dynamic": "strict",
            "properties": {
                "tenant_id": {"type": "keyword"},
                "namespace_id": {"type": "keyword"},
                "document_id": {"type": "keyword"},
                "sequence_number": {"type": "integer"},
                "generation": {"type": "long"},
                "filename": {"type": "keyword"},
                "text": term_stats.text_mapping(),
                "metadata": {"type": "object", "enabled": False},
                **FIELDS,
                VECTOR_FIELD: {
                    "type": "knn_vector",
                    "dimension": dimension,
                    "method": {
                        "name": "hnsw",
                        "engine": "lucene",
                        "space_type": "cosinesimil",
                        "parameters": {"m": hnsw[0], "ef_construction": hnsw[1]},
                    },
                },
            },
        },
    }


def fences_index(index: str) -> str:
    """Where each document's fence lives: the generation last published (see ``VectorStore.publish``)."""
    return f"{index}-fences"


def fences_body(*, replicas: int = 0) -> dict[str, Any]:
    """The fences index: one small shard, replicated as the chunks are (a lost fence would serve
    an unpublished generation)."""
    return {
        "settings": {"index": {"number_of_shards": 1, "number_of_replicas": replicas}},
        "mappings": {
            "dynamic": "strict",
            "properties": {
                "tenant_id": {"type": "keyword"},
                "namespace_id": {"type": "keyword"},
                "document_id": {"type": "keyword"},
            },
        },
    }


def fence_id(scope: TenantScope, document_id: str) -> str:
    """A fixed-length ``_id`` (a document id may be 240 bytes; ``_id`` allows 512)."""
    key = f"{scope.tenant_id}\0{scope.namespace_id}\0{document_id}".encode()
    return hashlib.sha256(key).hexdigest()


def fence_source(scope: TenantScope, document_id: str) -> dict[str, str]:
    return {"tenant_id": scope.tenant_id, "namespace_id": scope.namespace_id, "document_id": document_id}


def doc_id(scope: TenantScope, chunk_id: str, generation: int = 0) -> str:
    """A chunk's ``_id`` *per generation*: a new version is written beside the served one, never over
    it (see :meth:`~ragline.adapters.opensearch.store.OpenSearchVectorStore.search` for which one
    readers see). Generation 0 keeps the plain ``<tenant>/<namespace>/<chunk id>``, as every chunk of
    an index written before versions were kept apart has; an id past 512 bytes is hashed."""
    base = f"{scope.tenant_id}/{scope.namespace_id}/{chunk_id}"
    if not generation:
        return base
    versioned = f"{base}@{generation}"
    if len(versioned.encode()) <= MAX_ID_BYTES:
        return versioned
    return f"{hashlib.sha256(base.encode()).hexdigest()}@{generation}"


def scope_filter(
    scope: TenantScope, filters: MetadataFilter | None = None, view: ReadView | None = None
) -> list[dict[str, Any]]:
    """The scope, a query's ``filters`` and what a bound ``view`` admits (:mod:`.filtering`)."""
    clauses: list[dict[str, Any]] = [
        {"term": {"tenant_id": scope.tenant_id}},
        {"term": {"namespace_id": scope.namespace_id}},
    ]
    if filters and filters.document_ids:
        clauses.append({"terms": {"document_id": list(filters.document_ids)}})
    if filters and filters.filenames:
        clauses.append({"terms": {"filename": list(filters.filenames)}})
    clauses += view_clauses(view, filters.where if filters else None)
    return clauses


def knn_search(
    scope: TenantScope,
    vector: Sequence[float],
    k: int,
    filters: MetadataFilter,
    candidates: int = 0,
    view: ReadView | None = None,
) -> dict[str, Any]:
    """The ``k`` nearest chunks of the scope, found among at least ``candidates`` graph candidates."""
    return {
        "size": k,
        "_source": {"excludes": SOURCE_EXCLUDES},
        "query": {
            "knn": {
                VECTOR_FIELD: {
                    "vector": [float(x) for x in vector],
                    "k": max(k, candidates),
                    "filter": {"bool": {"filter": scope_filter(scope, filters, view)}},
                }
            }
        },
    }


def bm25_search(
    scope: TenantScope,
    text: str,
    k: int,
    filters: MetadataFilter,
    view: ReadView | None = None,
    *,
    scored: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The scope's ``k`` best chunks for ``text``: ``scored`` is the scoring clause built with the
    scope's own statistics (:func:`.term_stats.keyword_query`); without it, a ``match`` (the shard's)."""
    return {
        "size": k,
        "_source": {"excludes": SOURCE_EXCLUDES},
        "query": {
            "bool": {
                "must": [scored or {"match": {"text": {"query": text}}}],
                "filter": scope_filter(scope, filters, view),
            }
        },
        "sort": ["_score", {"sequence_number": "asc"}, {"document_id": "asc"}],
        "track_scores": True,
    }


def document_query(
    scope: TenantScope,
    document_id: str,
    *,
    seq_from: int | None = None,
    seq_to: int | None = None,
    older_than: int | None = None,
    generation: int | None = None,
    view: ReadView | None = None,
) -> dict[str, Any]:
    clauses = [*scope_filter(scope, view=view), {"term": {"document_id": document_id}}]
    if generation is not None:
        clauses.append({"term": {"generation": generation}})
    if seq_from is not None or seq_to is not None:
        bounds: dict[str, int] = {}
        if seq_from is not None:
            bounds["gte"] = seq_from
        if seq_to is not None:
            bounds["lte"] = seq_to
        clauses.append({"range": {"sequence_number": bounds}})
    if older_than is not None:
        clauses.append({"range": {"generation": {"lt": older_than}}})
    return {"bool": {"filter": clauses}}


def older_versions_query(scope: TenantScope, generations: Sequence[tuple[str, int]]) -> dict[str, Any]:
    """Chunks of each ``(document, generation)`` below that generation: a publish's sweep, for many
    documents in one query (one ``should`` clause each: keep ``generations`` under the node's
    ``indices.query.bool.max_clause_count``, 1,024 by default)."""
    return {
        "bool": {
            "filter": scope_filter(scope),
            "should": [
                {"bool": {"filter": [{"term": {"document_id": d}}, {"range": {"generation": {"lt": g}}}]}}
                for d, g in generations
            ],
            "minimum_should_match": 1,
        }
    }


def neighbors_search(
    scope: TenantScope,
    document_id: str,
    seq: int,
    before: int,
    after: int,
    *,
    generation: int | None = None,
    view: ReadView | None = None,
) -> dict[str, Any]:
    return {
        "size": min(before + after + 1, MAX_RESULT_WINDOW),
        "_source": {"excludes": SOURCE_EXCLUDES},
        "query": document_query(
            scope,
            document_id,
            seq_from=max(0, seq - before),
            seq_to=seq + after,
            generation=generation,
            view=view,
        ),
        "sort": [{"sequence_number": "asc"}],
    }


def bulk_lines(scope: TenantScope, index: str, chunks: Sequence[Chunk], generation: int = 0) -> list[bytes]:
    """One NDJSON ``index`` action and its source per chunk, versioned by generation (``external_gte``:
    an older writer's chunk is refused). Built as bytes here, not by the client's bulk helper: the
    vector is most of every line, and :func:`vector_json` writes it at float32 precision."""
    lines = []
    for c in chunks:
        action = {
            "index": {
                "_index": index,
                "_id": doc_id(scope, c.id, generation),
                "routing": scope.tenant_id,
                "version": generation,
                "version_type": "external_gte",
            }
        }
        lines.append(chunk_line(json.dumps(action), scope, c, generation=generation))
    return lines


def chunk_line(action: str, scope: TenantScope, chunk: Chunk, **extra: int) -> bytes:
    """An NDJSON action line and the chunk's source (``extra`` fields beside its own, the vector last,
    written by :func:`vector_json`): the one place a chunk's stored form is spelt, for both modes."""
    source = {
        "tenant_id": scope.tenant_id,
        "namespace_id": scope.namespace_id,
        "document_id": chunk.document_id,
        "sequence_number": chunk.sequence_number,
        **extra,
        "filename": chunk.metadata.filename,
        "text": chunk.text,
        "metadata": chunk.metadata.model_dump(mode="json"),
        **chunk_fields(chunk.metadata),
    }
    head = json.dumps(source, ensure_ascii=False, separators=(",", ":"))[:-1]
    return f'{action}\n{head},"{VECTOR_FIELD}":{vector_json(chunk.embedding or ())}}}\n'.encode()


def bulk_requests(lines: Sequence[bytes], max_bytes: int) -> Iterator[list[bytes]]:
    """``lines`` cut, in order, into ``_bulk`` bodies of at most ``max_bytes`` each (a request's cost
    and the node's memory follow its bytes, not its action count: a 384-d chunk is ~6 KB, a delete
    ~150 B). A line larger than ``max_bytes`` on its own goes alone."""
    batch: list[bytes] = []
    size = 0
    for line in lines:
        if batch and size + len(line) > max_bytes:
            yield batch
            batch, size = [], 0
        batch.append(line)
        size += len(line)
    if batch:
        yield batch


def fence_lines(index: str, fences: Sequence[tuple[str, dict[str, str], int]]) -> list[bytes]:
    """One NDJSON ``index`` action per fence ``(id, source, generation)``: the generation is the
    fence's external version (``external_gte``: a 409 when the fence is already higher)."""
    return [
        (json.dumps({"index": {"_index": index, "_id": i, "version": g, "version_type": "external_gte"}})
         + "\n" + json.dumps(source) + "\n").encode()
        for i, source, g in fences
    ]  # fmt: skip


def delete_lines(index: str, routing: str, versioned_ids: Sequence[tuple[str, int]]) -> list[bytes]:
    """One NDJSON ``delete`` action per chunk, in the order given, each at the chunk's generation
    (``external_gte``: refused with 409 if a newer generation has rewritten the chunk since)."""
    return [
        (json.dumps({"delete": {"_index": index, "_id": i, "routing": routing, "version": v,
                                "version_type": "external_gte"}}) + "\n").encode()
        for i, v in versioned_ids
    ]  # fmt: skip


@lru_cache(maxsize=8)
def _vector_format(dimension: int) -> str:
    return "[" + ",".join(["%.9g"] * dimension) + "]"


def vector_json(vector: Sequence[float]) -> str:
    """A vector as a JSON array at float32 precision, exactly: nine significant digits round-trip
    every float32 (what the index stores), where ``json.dumps`` writes up to 17 digits per float.
    One C-level format call per vector: ~3x faster than ``json.dumps`` and ~40 % fewer bytes."""
    values = tuple(vector)
    return _vector_format(len(values)) % values if values else "[]"


if __name__ == "__main__":  # regenerate infra/opensearch/chunks-index.json
    import json
    import sys

    json.dump(index_body(384), sys.stdout, indent=2)
    sys.stdout.write("\n")
