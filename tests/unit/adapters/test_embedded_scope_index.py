"""The embedded store's per-scope structures follow writes without being rebuilt, and always equal
what reading the scope afresh would build: the same rows in the same order, the same vectors, the
same BM25 scores to the last bit."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragline.adapters.embedded.bm25 import MAX_SEGMENTS, Bm25Index
from ragline.adapters.embedded.store import LOG_PRUNE_EVERY, SqliteVectorStore, SqliteVectorStoreProvider
from ragline.domain.models import Chunk, ChunkMetadata, KeywordQuery, SemanticQuery, TenantScope
from tests.support.vectors import DIM, bow_vector

pytestmark = pytest.mark.unit

SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
WORDS = "bees honey pollen hive queen drone wax nectar solar panel silicon running runs ran the of a".split()
QUERIES = ["bees", "honey bees", "running queen", "the", "wax nectar pollen", "unknown", "runs ran"]


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12))).capitalize() + "."


def chunks(rng: random.Random, document_id: str, n: int) -> list[Chunk]:
    texts = [text(rng) for _ in range(n)]
    filename = f"{document_id}.txt"
    return [
        Chunk(
            document_id=document_id,
            sequence_number=i,
            text=t,
            metadata=ChunkMetadata(filename=filename),
            embedding=bow_vector(t),
        )
        for i, t in enumerate(texts)
    ]


def assert_same_as_a_fresh_read(provider: SqliteVectorStoreProvider) -> None:
    """Given the provider's cached structures, a new provider reading the file builds equal ones."""
    held = provider.matrix(SCOPE)
    fresh_provider = SqliteVectorStoreProvider(provider.path, dimension=DIM)
    try:
        fresh = fresh_provider.matrix(SCOPE)
        assert np.array_equal(held.rowids, fresh.rowids)
        assert np.array_equal(provider.vectors(held), fresh_provider.vectors(fresh))
        assert held.document_ids.tolist() == fresh.document_ids.tolist()
        assert held.filenames.tolist() == fresh.filenames.tolist()
        assert held.chunk_ids.tolist() == fresh.chunk_ids.tolist()
        held_bm25, fresh_bm25 = provider.bm25(SCOPE, held), fresh_provider.bm25(SCOPE, fresh)
        for query in QUERIES:
            assert np.array_equal(held_bm25.scores(query), fresh_bm25.scores(query)), query
            for search in (
                KeywordQuery(text=query, k=50),
                SemanticQuery(text=query, vector=bow_vector(query), k=50),
            ):
                assert provider.scoped(SCOPE).search(search) == fresh_provider.scoped(SCOPE).search(search)
    finally:
        fresh_provider.close()


def random_write(rng: random.Random, store: SqliteVectorStore, versions: dict[str, int]) -> None:
    """A new document, a new version of one (longer or shorter), a deletion or a discarded write."""
    roll = rng.random()
    if roll < 0.4 or not versions:
        document_id = f"d{len(versions)}"
        versions[document_id] = 1
        store.upsert(chunks(rng, document_id, rng.randint(1, 6)), generation=1)
        store.publish(document_id, generation=1)
        return
    document_id = rng.choice(sorted(versions))
    if roll < 0.75:
        versions[document_id] += 1
        generation = versions[document_id]
        store.upsert(chunks(rng, document_id, rng.randint(1, 6)), generation=generation)
        store.publish(document_id, generation=generation)
    elif roll < 0.9:
        store.delete_document(document_id)
    else:
        versions[document_id] += 1
        store.upsert(chunks(rng, document_id, 2), generation=versions[document_id])
        store.discard(document_id, generation=versions[document_id])


@pytest.mark.parametrize("seed", range(4))
def test_given_a_warm_reader_when_documents_are_written_then_it_equals_a_fresh_read(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    provider = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    store = provider.scoped(SCOPE)
    versions: dict[str, int] = {}
    try:
        for _ in range(40):
            random_write(rng, store, versions)
            assert_same_as_a_fresh_read(provider)  # warms the BM25 index too, so it is carried along
    finally:
        provider.close()


def test_given_writes_from_another_process_when_read_then_only_their_documents_are_read(
    tmp_path: Path,
) -> None:
    rng = random.Random(7)
    reader = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    writer = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    versions: dict[str, int] = {}
    try:
        for _ in range(10):
            random_write(rng, writer.scoped(SCOPE), versions)
        assert_same_as_a_fresh_read(reader)
        before = reader.matrix(SCOPE)
        for _ in range(5):
            random_write(rng, writer.scoped(SCOPE), versions)
        after = reader.matrix(SCOPE)
        assert after is not before and after.bm25 is not None  # updated, not read whole
        assert_same_as_a_fresh_read(reader)
    finally:
        reader.close()
        writer.close()


def test_given_a_write_the_change_record_misses_when_read_then_the_scope_is_read_whole(
    tmp_path: Path,
) -> None:
    """A writer that keeps no record (an older version on the same file) still never goes unseen."""
    rng = random.Random(3)
    provider = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    versions: dict[str, int] = {}
    try:
        for _ in range(6):
            random_write(rng, provider.scoped(SCOPE), versions)
        assert_same_as_a_fresh_read(provider)
        raw = sqlite3.connect(tmp_path / "s.sqlite")
        with raw:
            raw.execute(
                "UPDATE chunks SET text='queen queen queen' WHERE rowid=(SELECT min(rowid) FROM chunks)"
            )
            raw.execute("UPDATE scopes SET generation=generation+1")
        raw.close()

        current = provider.matrix(SCOPE)

        assert current.bm25 is None  # read whole: the BM25 index is built again on demand
        assert_same_as_a_fresh_read(provider)
    finally:
        provider.close()


def test_given_a_purged_tenant_written_again_when_read_then_nothing_old_remains(tmp_path: Path) -> None:
    rng = random.Random(5)
    reader = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    writer = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    try:
        versions: dict[str, int] = {}
        for _ in range(8):
            random_write(rng, writer.scoped(SCOPE), versions)
        assert_same_as_a_fresh_read(reader)
        writer.purge_tenant(SCOPE.tenant_id)
        versions = {}
        for _ in range(12):
            random_write(rng, writer.scoped(SCOPE), versions)

        assert_same_as_a_fresh_read(reader)
    finally:
        reader.close()
        writer.close()


def test_given_new_documents_when_read_then_vectors_are_appended_without_copying(tmp_path: Path) -> None:
    rng = random.Random(1)
    provider = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    store = provider.scoped(SCOPE)
    try:
        store.upsert(chunks(rng, "a", 5))
        first = provider.vectors(provider.matrix(SCOPE))
        held = first.copy()
        store.upsert(chunks(rng, "b", 3))
        second = provider.vectors(provider.matrix(SCOPE))
        store.upsert(chunks(rng, "c", 3))
        third = provider.vectors(provider.matrix(SCOPE))

        assert np.array_equal(first, held)  # an older snapshot's matrix never changes
        assert np.shares_memory(first, third) and np.shares_memory(second, third)  # only appended
        assert len(third) == 11
        assert_same_as_a_fresh_read(provider)
    finally:
        provider.close()


# -- the index alone ------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=1, max_value=40))
def test_property_an_updated_index_scores_like_one_built_afresh(seed: int, writes: int) -> None:
    rng = random.Random(seed)
    texts = [text(rng) for _ in range(rng.randint(0, 30))]
    rowids = list(range(len(texts)))
    index = Bm25Index.build(texts)
    for _ in range(writes):
        # Given a write that drops some rows and adds others: new rowids, or reused ones (in place)
        kept = np.array([rng.random() > 0.2 for _ in texts], dtype=bool)
        free = [r for r, k in zip(rowids, kept, strict=True) if not k]
        added = [text(rng) for _ in range(rng.randint(0, 6))]
        added_rowids = [free.pop() if free and rng.random() < 0.5 else max(rowids, default=-1) + 1 + i
                        for i in range(len(added))]  # fmt: skip
        merged = [r for r, k in zip(rowids, kept, strict=True) if k] + added_rowids
        merged_texts = [t for t, k in zip(texts, kept, strict=True) if k] + added
        order = np.argsort(np.array(merged, dtype=np.int64), kind="stable")
        rowids = [merged[i] for i in order]
        texts = [merged_texts[i] for i in order]
        # When the index is updated
        index = index.updated(kept, added, order)
        # Then it scores every query exactly like an index built from the rows as they now are
        fresh = Bm25Index.build(texts)
        for query in QUERIES:
            assert np.array_equal(index.scores(query), fresh.scores(query))
    assert len(index.segments) <= MAX_SEGMENTS + 1


def test_given_many_writes_when_the_log_is_pruned_then_readers_still_see_every_change(tmp_path: Path) -> None:
    # Given a reader that last looked at generation 2, and 600 more writes cycling over five documents
    rng = random.Random(11)
    provider = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    stale = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    store = provider.scoped(SCOPE)
    try:
        for generation in range(1, 121):
            for document_id in ("a", "b", "c", "d", "e"):
                store.upsert(chunks(rng, document_id, rng.randint(1, 3)), generation=generation)
                store.publish(document_id, generation=generation)
            if generation == 1:
                stale.matrix(SCOPE)
                stale.bm25(SCOPE, stale.matrix(SCOPE))
        # When the log is read
        conn = provider.connection()
        (rows,) = conn.execute("SELECT count(*) FROM scope_log").fetchone()
        (generation,) = conn.execute("SELECT generation FROM scopes").fetchone()
        # Then the last prune left a row per document, and every write since logged one more
        assert generation > LOG_PRUNE_EVERY
        assert rows <= 5 + generation % LOG_PRUNE_EVERY
        # And both readers, the warm one and the one at generation 2, equal a fresh read
        assert_same_as_a_fresh_read(provider)
        assert_same_as_a_fresh_read(stale)
    finally:
        provider.close()
        stale.close()
