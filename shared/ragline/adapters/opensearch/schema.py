"""How chunks and fences are stored on a domain: the indexes' settings and mappings, and the ``_id``
each stored document gets (pure: plain dicts and strings, unit-tested without a cluster).

The query side reads what is defined here (:mod:`.requests`), and so do the ``_bulk`` bodies
(:mod:`.bulk`); ``python -m ragline.adapters.opensearch.requests`` prints :func:`index_body` for
infra/opensearch/chunks-index.json.
"""

from __future__ import annotations

import copy
import hashlib
import re
from typing import Any, Literal

from ragline.adapters.opensearch import term_stats
from ragline.adapters.opensearch.filtering import FIELDS
from ragline.domain.models import TenantScope

VECTOR_FIELD = "embedding"
SOURCE_EXCLUDES = [VECTOR_FIELD]
DERIVED_SOURCE = "knn.derived_source.enabled"
"""k-NN's derived source (an index setting, static): the stored ``_source`` keeps every field but the
vector, which the node puts back into ``_source`` on reads (get, mget, search, scan) from the vector
values the graph is built on — at float32, as written (:func:`.bulk.vector_json`). So the vector is stored
once, not also as JSON (which was the largest part of the stored fields), and re-ingest reuse
(``vectors()``) reads it as before. An index created without it keeps its vectors in ``_source`` and
reads the same (docs/benchmarks.md, "A cheaper write (issue 39)")."""
MAX_ID_BYTES = 512
"""OpenSearch's limit on ``_id``."""

HNSW = (16, 64)
"""The graph's ``m`` and ``ef_construction``: at 100k chunks ef_construction 64 kept recall@10 ≥ 0.98
with the kNN query's 100 candidates and cost the node up to half the CPU per written chunk of 128,
never more (docs/benchmarks.md, "OpenSearch bulk write path (issue 28)"). Float32 vectors on the lucene
engine: its scalar quantizer (``encoder: sq``, 7 bits in k-NN 2.19) kept recall@10 at 0.96–0.97, under
0.98 (docs/benchmarks.md, "A cheaper write (issue 39)")."""


Engine = Literal["lucene", "faiss"]
FAISS_THRESHOLD_SETTING = "knn.advanced.approximate_threshold"
FAISS_GRAPH_THRESHOLD = 15_000
"""A faiss index's ``FAISS_THRESHOLD_SETTING``: a segment gets its graph once it holds this many
chunks (a flush or a merge), and is searched exactly until then. The graph is then built once per
large segment, by the native library, not on every flush and again by every merge, in Java, as
Lucene's is: at 100k chunks the node's CPU per written chunk was 0.61 ms against Lucene's 1.41 ms in
the same run (0.89 ms with a graph on every segment, in an earlier one), recall@10 0.992, the same
search latency (docs/benchmarks.md, "Faiss on a domain")."""
FAISS_ENCODER = {"name": "sq", "parameters": {"type": "fp16"}}
"""Faiss's 16-bit scalar quantizer: the graph's vectors in half the memory (the float32 values stay
stored, for exact search, derived source and reuse), at the same recall@10 as float32 (0.992 at 100k)."""


def vector_method(engine: Engine, hnsw: tuple[int, int]) -> dict[str, Any]:
    """The vector field's HNSW method on ``engine`` (cosine either way: the same scores)."""
    parameters: dict[str, Any] = {"m": hnsw[0], "ef_construction": hnsw[1]}
    if engine == "faiss":
        parameters["encoder"] = copy.deepcopy(FAISS_ENCODER)  # its nested parameters too
    return {"name": "hnsw", "engine": engine, "space_type": "cosinesimil", "parameters": parameters}


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
    engine: Engine = "lucene",
    silo: bool = False,
) -> dict[str, Any]:
    """A chunk index of ``shards`` primaries, every chunk routed by its tenant (``_routing`` required):
    a tenant lives on one shard, or on ``routing_partition_size`` of them (OpenSearch adds a hash of
    the ``_id`` to the routing's, so a large tenant spreads while its searches still touch only those
    shards). Both are fixed at creation, and OpenSearch computes every route from them, so a route
    never changes under an index's chunks. A partition needs ``number_of_routing_shards`` equal to
    the shards: with the node's default (a multiple kept for ``_split``) consecutive partition offsets
    fall on the same shard, and a partition of 2 spread nothing (measured on 2.19: 100 chunks, all on
    one shard of 4). Growth makes a new index instead of splitting one. On faiss a pool's segment gets
    its graph at ``FAISS_GRAPH_THRESHOLD`` chunks (its tenants' filtered few in a smaller one are scored
    exactly, cheaply); a ``silo``'s every segment gets one, since its one tenant's search would score a
    small segment whole."""
    index: dict[str, Any] = {
        "knn": True,
        DERIVED_SOURCE: True,
        "number_of_shards": shards,
        "number_of_replicas": replicas,
    }
    if routing_partition_size > 1:
        index["routing_partition_size"] = routing_partition_size
        index["number_of_routing_shards"] = shards
    if engine == "faiss":
        index[FAISS_THRESHOLD_SETTING] = 0 if silo else FAISS_GRAPH_THRESHOLD
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
                    "method": vector_method(engine, hnsw),
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
