"""The OpenSearch index stores each vector once (issue 39): not also as JSON in the stored ``_source``,
and re-ingest reuse still reads it back — exactly, on new indexes and on ones written before."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider
from ragline.domain.models import Chunk, TenantScope
from ragline.services.embedding_run import EmbeddingRun
from tests.contract.test_opensearch_store import _provider
from tests.support.fakes import CountingEmbedder
from tests.support.vectors import DIM

pytestmark = [pytest.mark.contract, pytest.mark.opensearch]
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
CHUNKS = 400


@pytest.fixture
def provider(opensearch_url: str) -> Iterator[OpenSearchVectorStoreProvider]:
    p = _provider(opensearch_url)
    yield p
    p.drop()
    p.close()


def dense_chunks(doc: str, n: int) -> list[Chunk]:
    """Unit vectors of random components: what an embedder writes (nothing for compression to find)."""
    vectors = np.random.default_rng(3).standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [
        Chunk(document_id=doc, sequence_number=i, text=f"chunk {i} of {doc}", embedding=tuple(map(float, v)))
        for i, v in enumerate(vectors)
    ]


def stored_field_bytes(p: OpenSearchVectorStoreProvider) -> int:
    """Bytes of the index's stored fields (Lucene's ``.fdt``: ``_source`` and ``_id``), flushed."""
    p.client.indices.flush(index=p.index)
    stats = p.client.indices.stats(index=p.index, metric="segments", include_segment_file_sizes=True)
    return int(stats["_all"]["primaries"]["segments"]["file_sizes"]["fdt"]["size_in_bytes"])


def write_and_read_back(p: OpenSearchVectorStoreProvider) -> tuple[list[Chunk], int]:
    """``CHUNKS`` chunks written and published; each vector read back (``vectors()``) exactly as
    written, at float32; the stored-field bytes per chunk."""
    store = p.scoped(SCOPE)
    chunks = dense_chunks("dense", CHUNKS)
    store.upsert(chunks, generation=1)
    assert store.publish("dense", generation=1)
    got = store.vectors("dense")
    assert got.keys() == {c.text for c in chunks}
    for c in chunks:
        assert np.array_equal(got[c.text], np.asarray(c.embedding, dtype=np.float32))
    return chunks, stored_field_bytes(p) // CHUNKS


def test_the_vector_is_not_in_the_stored_source_yet_reads_back_exactly(
    provider: OpenSearchVectorStoreProvider,
) -> None:
    """A chunk's stored fields hold less than its vector's own float32 bytes: the JSON vector (~12
    bytes a component) is not among them; ``vectors()`` (re-ingest reuse) still gets every vector."""
    _, per_chunk = write_and_read_back(provider)
    assert per_chunk < DIM * 4, f"{per_chunk} stored bytes per chunk: the vector is in _source again"


def test_an_index_keeping_vectors_in_its_source_still_serves_them(
    provider: OpenSearchVectorStoreProvider,
) -> None:
    """An index created before issue 39 (no derived source: the JSON vector stored in ``_source``)
    is read as before; its stored fields do hold the vectors (what the test above tells apart)."""
    body = rq.index_body(DIM)
    del body["settings"]["index"][rq.DERIVED_SOURCE]
    provider.client.indices.create(index=provider.index, body=body)
    _, per_chunk = write_and_read_back(provider)
    assert per_chunk > DIM * 4


def test_a_reingest_embeds_only_the_changed_texts_and_reuses_the_stored_vectors(
    provider: OpenSearchVectorStoreProvider,
) -> None:
    """The reuse contract on OpenSearch, as ingestion runs it: version 2 of a document embeds only its
    new text; its unchanged chunks carry the vectors version 1 stored."""
    store = provider.scoped(SCOPE)
    texts = ["Bees make honey.", "Wasps do not.", "Both can sting."]
    first = CountingEmbedder()
    v1 = [c for b in EmbeddingRun(first, {}, batch_size=2).batches(_chunks(texts)) for c in b]
    store.upsert(v1, generation=1)
    assert store.publish("bees", generation=1)
    again = CountingEmbedder()
    run = EmbeddingRun(again, store.vectors("bees"), batch_size=2)
    v2 = [c for b in run.batches(_chunks([*texts[:2], "Only bees die after."])) for c in b]
    assert again.embedded == ["Only bees die after."] == run.embedded
    assert [c.embedding for c in v2[:2]] == [c.embedding for c in v1[:2]]


def _chunks(texts: list[str]) -> list[Chunk]:
    return [Chunk(document_id="bees", sequence_number=i, text=t) for i, t in enumerate(texts)]
