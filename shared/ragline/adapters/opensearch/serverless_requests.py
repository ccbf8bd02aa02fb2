"""Pure request builders of the OpenSearch Serverless mode: the domain mode's builders
(:mod:`ragline.adapters.opensearch.requests`) cut to what a vector-search collection accepts.

Chunks are written without ``_id`` (the collection assigns one), without ``version`` and without
``routing``; each carries its ``generation`` and a ``stamp`` (see ``fences.py``) instead.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from typing import Any

from ragline.adapters.opensearch import requests as rq
from ragline.domain.filters import ReadView
from ragline.domain.models import Chunk, TenantScope

ENGINE = "faiss"
"""Vector-search collections do not support the Lucene engine (AWS, "Working with vector search
collections", Limitations); Faiss HNSW supports the same cosine space and efficient filtering."""
SOURCE_FIELDS = ["tenant_id", "namespace_id", "document_id", "sequence_number", "generation", "stamp",
                 "filename", "text", "metadata"]  # fmt: skip


PAGE = rq.MAX_RESULT_WINDOW
"""Chunks per page of a listing (``search_after`` pages: a collection has no scroll)."""


def index_body(dimension: int, *, hnsw: tuple[int, int] = rq.HNSW) -> dict[str, Any]:
    """The domain mode's index without what a collection refuses or fixes itself (shard and replica
    counts, the required ``_routing``), on Faiss, with the ``stamp`` field."""
    body = copy.deepcopy(rq.index_body(dimension, hnsw=hnsw))
    body["settings"]["index"] = {"knn": True}
    mappings = body["mappings"]
    mappings.pop("_routing", None)
    mappings["properties"]["stamp"] = {"type": "long"}
    mappings["properties"][rq.VECTOR_FIELD]["method"]["engine"] = ENGINE
    return body


def bulk_lines(
    scope: TenantScope, index: str, chunks: Sequence[Chunk], generation: int, stamp: int
) -> list[bytes]:
    """One NDJSON ``index`` action (no ``_id``: the collection assigns it) and its source per chunk."""
    action = json.dumps({"index": {"_index": index}})
    return [rq.chunk_line(action, scope, c, generation=generation, stamp=stamp) for c in chunks]


def delete_lines(index: str, ids: Sequence[str]) -> list[bytes]:
    """One NDJSON ``delete`` action per chunk, by the ``_id`` the collection assigned, in order."""
    return [(json.dumps({"delete": {"_index": index, "_id": i}}) + "\n").encode() for i in ids]


def chunk_query(
    scope: TenantScope,
    document_id: str | None = None,
    *,
    generation: int | None = None,
    older_than: int | None = None,
    stamp: int | None = None,
    stamp_below: int | None = None,
    seqs: Sequence[int] | None = None,
    view: ReadView | None = None,
) -> dict[str, Any]:
    """The scope's chunks (of one document), narrowed by generation, stamp, sequence numbers and
    what a bound ``view`` admits."""
    if document_id is None:
        query: dict[str, Any] = {"bool": {"filter": rq.scope_filter(scope, view=view)}}
    else:
        query = rq.document_query(scope, document_id, generation=generation, older_than=older_than, view=view)
    clauses: list[dict[str, Any]] = query["bool"]["filter"]
    if stamp is not None:
        clauses.append({"term": {"stamp": stamp}})
    if stamp_below is not None:
        clauses.append({"range": {"stamp": {"lt": stamp_below}}})
    if seqs is not None:
        clauses.append({"terms": {"sequence_number": sorted(set(seqs))}})
    return query


def tenant_query(tenant_id: str) -> dict[str, Any]:
    return {"bool": {"filter": [{"term": {"tenant_id": tenant_id}}]}}


def ids_query(ids: Sequence[str]) -> dict[str, Any]:
    return {"ids": {"values": list(ids)}}


def listing(query: dict[str, Any], *, source: bool | list[str] = False) -> dict[str, Any]:
    """A page of the chunks matching ``query`` (their ``_id``, generation, stamp and sequence
    number), highest sequence number first (the order sweeps delete in), newest copy first."""
    return {
        "size": PAGE,
        "query": query,
        "_source": source,
        "docvalue_fields": ["sequence_number", "generation", "stamp", "document_id"],
        "sort": [{"sequence_number": "desc"}, {"stamp": "desc"}, {"generation": "desc"}],
    }
