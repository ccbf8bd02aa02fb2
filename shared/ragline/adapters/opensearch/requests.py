"""Pure request builders for the OpenSearch store's reads and sweeps: plain dicts, unit-tested
without a cluster.

Tenant and namespace filters come only from the bound :class:`TenantScope` and are placed inside the
kNN ``filter`` (efficient filtered search: the filter restricts HNSW candidates, it is not a
post-filter that could return fewer than k hits).

What indexes look like and each stored document's ``_id`` are :mod:`.schema`'s, the ``_bulk`` bodies
:mod:`.bulk`'s; both stay importable from here, where callers have always found them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragline.adapters.opensearch.bulk import (
    BULK_BYTES,
    BULK_WRITERS_PER_SHARD,
    bulk_lines,
    bulk_requests,
    bulk_writers,
    chunk_line,
    delete_lines,
    fence_lines,
    vector_json,
)
from ragline.adapters.opensearch.filtering import view_clauses
from ragline.adapters.opensearch.schema import (
    DERIVED_SOURCE,
    FAISS_GRAPH_THRESHOLD,
    FAISS_THRESHOLD_SETTING,
    HNSW,
    MAX_ID_BYTES,
    SOURCE_EXCLUDES,
    VECTOR_FIELD,
    Engine,
    doc_id,
    fence_id,
    fence_source,
    fences_body,
    fences_index,
    index_body,
    index_name,
)
from ragline.domain.filters import ReadView
from ragline.domain.models import MetadataFilter, TenantScope

__all__ = [  # this module's own builders, and those of .schema and .bulk callers import from here
    "BULK_BYTES",
    "BULK_WRITERS_PER_SHARD",
    "DERIVED_SOURCE",
    "FAISS_GRAPH_THRESHOLD",
    "FAISS_THRESHOLD_SETTING",
    "HNSW",
    "ID_FIELDS",
    "KNN_CANDIDATES",
    "MAX_ID_BYTES",
    "MAX_RESULT_WINDOW",
    "SOURCE_EXCLUDES",
    "VECTOR_FIELD",
    "Engine",
    "bm25_search",
    "bulk_lines",
    "bulk_requests",
    "bulk_writers",
    "chunk_line",
    "delete_lines",
    "doc_id",
    "document_query",
    "fence_id",
    "fence_lines",
    "fence_source",
    "fences_body",
    "fences_index",
    "ids_only",
    "index_body",
    "index_name",
    "knn_search",
    "mget_body",
    "neighbors_search",
    "older_versions_query",
    "scope_filter",
    "vector_json",
]

ID_FIELDS = ["document_id", "sequence_number", "generation"]
MAX_RESULT_WINDOW = 10_000
"""OpenSearch's default ``index.max_result_window``: a larger ``size`` is a 400."""
KNN_CANDIDATES = 100
"""The fewest graph candidates a kNN query explores (its ``k``; Lucene's search beam), however few hits
it returns (``size``): with ``k`` = 10 the HNSW search misses about one true top-10 neighbour in 20
(docs/benchmarks.md, "kNN candidates")."""


def ids_only(body: dict[str, Any]) -> dict[str, Any]:
    """A hybrid leg fetches only what fusion needs, two doc values per hit; the survivors are read
    afterwards. ``stored_fields: _none_`` skips even ``_id``: loading it decompresses the hit's
    stored-fields block (vectors included, on an index without :data:`.schema.DERIVED_SOURCE`), which
    was three quarters of a leg's time on 100k chunks."""
    return {**body, "_source": False, "stored_fields": "_none_", "docvalue_fields": ID_FIELDS}


def mget_body(scope: TenantScope, index: str, ids: Sequence[str]) -> dict[str, Any]:
    """Chunks by ``_id`` (see :func:`.schema.doc_id`), on the tenant's shard, without their vectors."""
    return {
        "docs": [
            {"_index": index, "_id": i, "routing": scope.tenant_id, "_source": {"excludes": SOURCE_EXCLUDES}}
            for i in ids
        ]
    }


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


if __name__ == "__main__":  # regenerate infra/opensearch/chunks-index.json
    import json
    import sys

    json.dump(index_body(384), sys.stdout, indent=2)
    sys.stdout.write("\n")
