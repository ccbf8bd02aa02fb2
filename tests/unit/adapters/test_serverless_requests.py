"""The OpenSearch Serverless mode's request builders and fence keys, as plain dicts (no service)."""

from __future__ import annotations

import json

import pytest

from ragline.adapters.opensearch import serverless_requests as srq
from ragline.adapters.opensearch.fences import DynamoFences
from ragline.domain.models import Chunk, ChunkMetadata, TenantScope

pytestmark = pytest.mark.unit
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")


def test_the_index_asks_only_for_what_a_vector_collection_accepts() -> None:
    body = srq.index_body(4)
    assert body["settings"]["index"] == {"knn": True}  # no shard, replica or refresh settings
    assert "_routing" not in body["mappings"]
    props = body["mappings"]["properties"]
    assert props["embedding"]["method"]["engine"] == "faiss"  # collections do not support Lucene
    assert props["stamp"] == {"type": "long"}


def test_chunks_are_written_without_id_version_or_routing_and_carry_generation_and_stamp() -> None:
    chunk = Chunk(
        document_id="d",
        sequence_number=2,
        text="t",
        metadata=ChunkMetadata(filename="d.txt"),
        embedding=(0.5, 0.25),
    )
    (line,) = srq.bulk_lines(SCOPE, "chunks", [chunk], generation=7, stamp=3)
    action, source = (json.loads(part) for part in line.decode().splitlines())
    assert action == {"index": {"_index": "chunks"}}
    assert (source["generation"], source["stamp"], source["embedding"]) == (7, 3, [0.5, 0.25])


def test_fence_keys_cannot_meet_document_records_and_one_query_finds_a_tenants_fences() -> None:
    fences = DynamoFences("docs", "chunks-idx", client=object())
    key = fences.key(SCOPE, "manual#1.md")
    assert key == {"pk": {"S": "VSFENCE#chunks-idx#acme"}, "sk": {"S": "docs#manual#1.md"}}
    assert not key["pk"]["S"].startswith("DOC#")
