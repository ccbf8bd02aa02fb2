"""NDJSON bodies of ``_bulk`` requests — chunk writes, fence raises, ordered deletes — and how many
bytes and requests a write sends at once (pure, unit-tested without a cluster). Chunk writes are the
store's costliest requests, which is why their bodies are spelt by hand, as bytes."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import lru_cache

from ragline.adapters.opensearch.filtering import chunk_fields
from ragline.adapters.opensearch.schema import VECTOR_FIELD, doc_id
from ragline.domain.models import Chunk, TenantScope

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
