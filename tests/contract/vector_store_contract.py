"""The VectorStore contract: every backend subclasses :class:`VectorStoreContract` with one fixture.

Given a ``provider`` (a :class:`~ragline.ports.VectorStoreProvider` over a fresh, empty physical
store of dimension ``DIM``), every test here must pass unchanged.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline import errors
from ragline.domain.models import (
    Chunk,
    ChunkMetadata,
    HybridQuery,
    KeywordQuery,
    MetadataFilter,
    SemanticQuery,
    TenantScope,
)
from ragline.ports import VectorStore, VectorStoreProvider
from tests.contract.vector_store_chunking_contract import ChunkingContract
from tests.contract.vector_store_filter_contract import FilterContract
from tests.contract.vector_store_publish_contract import PublishManyContract
from tests.support.vectors import bow_vector

DOCS = {
    "solar": ["Solar panels convert sunlight into electricity.", "Photovoltaic cells are made of silicon."],
    "bees": [
        "Honey bees pollinate flowering plants.",
        "A bee colony has one queen.",
        "Workers gather nectar.",
    ],
    "rust": ["Iron rusts when exposed to oxygen and water."],
}


def make_chunks(doc: str, texts: list[str], filename: str | None = None) -> list[Chunk]:
    return [
        Chunk(
            document_id=doc,
            sequence_number=i,
            text=t,
            metadata=ChunkMetadata(filename=filename or f"{doc}.txt", page=1, heading_path=("Intro",)),
            embedding=bow_vector(t),
        )
        for i, t in enumerate(texts)
    ]


def semantic(text: str, k: int = 10, **kw: object) -> SemanticQuery:
    return SemanticQuery(text=text, vector=bow_vector(text), k=k, **kw)  # type: ignore[arg-type]


def hybrid(text: str, k: int = 10, **kw: object) -> HybridQuery:
    return HybridQuery(text=text, vector=bow_vector(text), k=k, **kw)  # type: ignore[arg-type]


class VectorStoreContract(PublishManyContract, FilterContract, ChunkingContract):
    """Subclasses provide the ``provider`` fixture."""

    @pytest.fixture
    def provider(self) -> VectorStoreProvider:
        raise NotImplementedError

    @pytest.fixture
    def store(self, provider: VectorStoreProvider) -> VectorStore:
        s = provider.scoped(TenantScope(tenant_id="acme", namespace_id="docs"))
        for doc, texts in DOCS.items():
            s.upsert(make_chunks(doc, texts))
        return s

    # -- writes -------------------------------------------------------------------------------
    def test_given_chunks_when_upserted_then_counted_per_document(self, store: VectorStore) -> None:
        assert store.count() == 6
        assert store.count("bees") == 3

    def test_given_same_ids_when_upserted_again_then_replaced_not_duplicated(
        self, store: VectorStore
    ) -> None:
        store.upsert(make_chunks("rust", ["Copper turns green with patina."]))
        assert store.count("rust") == 1
        hits = store.search(KeywordQuery(text="patina copper"))
        assert [h.chunk.id for h in hits] == ["rust#0"]
        assert store.search(KeywordQuery(text="iron oxygen")) == []

    def test_given_document_when_deleted_then_its_chunks_are_gone(self, store: VectorStore) -> None:
        assert store.delete_document("bees") == 3
        assert store.count() == 3
        assert all(h.chunk.document_id != "bees" for h in store.search(semantic("bee colony queen")))
        assert store.delete_document("bees") == 0

    def test_given_new_version_written_when_not_yet_published_then_readers_see_only_the_old_one(
        self, store: VectorStore
    ) -> None:
        # Given bees published at 1 (three chunks) and a shorter version 2 written but not published
        store.upsert(make_chunks("bees", DOCS["bees"]), generation=1)
        assert store.publish("bees", generation=1) is True
        assert store.upsert(make_chunks("bees", ["Bumblebees are fuzzy."]), generation=2) == 1
        # Then every read serves version 1 whole: not a chunk of version 2, none of version 1 lost
        assert [c.text for c in store.neighbors("bees", 1)] == DOCS["bees"]
        assert store.count("bees") == 3
        assert store.search(KeywordQuery(text="bumblebees fuzzy")) == []
        served = {t for texts in DOCS.values() for t in texts}
        assert {h.chunk.text for h in store.search(hybrid("bee queen fuzzy bumblebees"))} <= served
        # When version 2 is published, it is served alone
        assert store.publish("bees", generation=2) is True
        assert [c.text for c in store.neighbors("bees", 0)] == ["Bumblebees are fuzzy."]
        hits = store.search(semantic("bee colony queen fuzzy"))
        assert [h.chunk.text for h in hits if h.chunk.document_id == "bees"] == ["Bumblebees are fuzzy."]

    def test_given_writer_dies_before_publish_then_orphans_stay_invisible_until_the_next_attempt(
        self, store: VectorStore
    ) -> None:
        store.upsert(make_chunks("rust", DOCS["rust"]), generation=1)
        assert store.publish("rust", generation=1) is True
        # A worker writes version 2 (longer) and dies: no publish, no discard
        store.upsert(make_chunks("rust", ["Orphan zero.", "Orphan one.", "Orphan two."]), generation=2)
        assert [c.text for c in store.neighbors("rust", 0)] == DOCS["rust"]
        assert store.search(KeywordQuery(text="orphan")) == []
        # The next attempt (a new claim, generation 3) writes and publishes: the orphans are gone
        store.upsert(make_chunks("rust", ["Third attempt."]), generation=3)
        assert store.publish("rust", generation=3) is True
        assert [c.text for c in store.neighbors("rust", 0)] == ["Third attempt."]
        assert store.vectors("rust").keys() == {"Third attempt."}
        assert store.search(KeywordQuery(text="orphan")) == []

    def test_unpublished_chunks_never_leave_a_search_with_fewer_than_k_hits(self, store: VectorStore) -> None:
        # Given a new version of bees, unpublished, whose chunks are all nearer the query than any served one
        staged = [f"Bee colony queen number {i}." for i in range(8)]
        store.upsert(make_chunks("bees", staged), generation=2)
        words = "bee colony queen number plants nectar sunlight"  # four served chunks match a word
        for query in (semantic(words, k=3), KeywordQuery(text=words, k=3), hybrid(words, k=3)):
            hits = store.search(query)
            assert len(hits) == 3 and not {h.chunk.text for h in hits} & set(staged)

    def test_a_write_at_the_published_generation_is_served_at_once(self, store: VectorStore) -> None:
        assert store.publish("rust", generation=2) is True
        store.upsert(make_chunks("rust", ["Written at the served generation."]), generation=2)
        assert [c.text for c in store.neighbors("rust", 0)] == ["Written at the served generation."]

    def test_given_newer_generation_staged_when_older_writer_publishes_first_then_newer_still_wins(
        self, store: VectorStore
    ) -> None:
        store.upsert(make_chunks("rust", ["Version five text."]), generation=5)
        store.upsert(make_chunks("rust", ["Stale version three.", "Stale extra chunk."]), generation=3)
        assert store.publish("rust", generation=3) is True
        assert [c.text for c in store.neighbors("rust", 0)] == ["Stale version three.", "Stale extra chunk."]
        assert store.publish("rust", generation=5) is True
        assert [c.text for c in store.neighbors("rust", 0)] == ["Version five text."]
        assert store.search(KeywordQuery(text="stale")) == []

    # -- a tenant's deletion -------------------------------------------------------------------
    def test_purging_a_tenant_removes_its_chunks_and_fences_in_every_namespace_and_nothing_else(
        self, provider: VectorStoreProvider, store: VectorStore
    ) -> None:
        old = provider.scoped(TenantScope(tenant_id="acme", namespace_id="old"))
        old.upsert(make_chunks("bees", DOCS["bees"]), generation=3)
        assert old.publish("bees", generation=3) is True
        assert store.publish("rust", generation=2) is True  # a fence over a document with no chunks
        other = provider.scoped(TenantScope(tenant_id="globex", namespace_id="docs"))
        other.upsert(make_chunks("bees", DOCS["bees"]), generation=3)
        assert other.publish("bees", generation=3) is True

        assert provider.purge_tenant("acme") == 6 + 3 - 1  # acme/docs lost "rust" to its publish

        assert store.count() == 0 and old.count() == 0
        assert store.search(hybrid("bee colony queen")) == [] and old.search(semantic("bee")) == []
        assert old.vectors("bees") == {} and old.neighbors("bees", 1) == []
        # Another tenant keeps everything, its fence included (the fences' removal is checked on
        # each backend's own rows by tests/e2e/test_tenant_deletion.py)
        assert other.count() == 3
        with pytest.raises(errors.Superseded):
            other.upsert(make_chunks("bees", ["Stale."]), generation=2)
        assert provider.purge_tenant("acme") == 0  # idempotent

    # -- versions: publish, fence, discard ----------------------------------------------------
    def test_given_new_version_when_published_then_older_generations_are_swept(
        self, store: VectorStore
    ) -> None:
        store.upsert(make_chunks("bees", ["Bumblebees are fuzzy."]), generation=2)
        assert store.publish("bees", generation=2) is True
        assert [c.text for c in store.neighbors("bees", 0)] == ["Bumblebees are fuzzy."]
        assert store.count("bees") == 1

    def test_given_published_delete_when_older_writer_upserts_then_refused_and_nothing_resurrects(
        self, store: VectorStore
    ) -> None:
        assert store.publish("bees", generation=4) is True  # a delete: nothing written at 4
        assert store.count("bees") == 0
        with pytest.raises(errors.Superseded):
            store.upsert(make_chunks("bees", ["Resurrected bee text."]), generation=3)
        assert store.count("bees") == 0
        assert store.search(KeywordQuery(text="resurrected")) == []
        assert store.publish("bees", generation=3) is False

    def test_given_newer_fence_when_older_version_publishes_then_refused_and_it_discards_its_own(
        self, store: VectorStore
    ) -> None:
        store.upsert(make_chunks("rust", ["Slow writer chunk zero.", "Slow writer chunk one."]), generation=2)
        store.upsert(make_chunks("rust", ["Fast version."]), generation=3)
        assert store.publish("rust", generation=3) is True
        assert store.publish("rust", generation=2) is False
        assert store.discard("rust", generation=2) == 0  # the sweep at 3 already took chunk one
        assert [c.text for c in store.neighbors("rust", 0)] == ["Fast version."]

    def test_discard_removes_only_chunks_still_at_that_generation(self, store: VectorStore) -> None:
        store.upsert(make_chunks("rust", ["Gen two zero.", "Gen two one."]), generation=2)
        store.upsert(make_chunks("rust", ["Gen three zero."]), generation=3)
        assert store.discard("rust", generation=2) == 2
        assert store.publish("rust", generation=3) is True
        assert [c.text for c in store.neighbors("rust", 0)] == ["Gen three zero."]

    def test_publish_is_idempotent_and_fences_are_per_document(self, store: VectorStore) -> None:
        assert store.publish("rust", generation=5) and store.publish("rust", generation=5)
        store.upsert(make_chunks("bees", ["Still writable at generation one."]), generation=1)
        assert store.count("bees") == 3
        assert store.count("rust") == 0

    def test_vectors_map_each_stored_text_to_its_embedding(self, store: VectorStore) -> None:
        vectors = store.vectors("bees")
        assert set(vectors) == set(DOCS["bees"])
        for text, vec in vectors.items():
            assert vec == pytest.approx(bow_vector(text), abs=1e-6)
        assert store.vectors("nothing") == {}

    def test_given_wrong_dimension_when_upserted_then_refused_and_nothing_stored(
        self, store: VectorStore
    ) -> None:
        bad = Chunk(document_id="x", sequence_number=0, text="t", embedding=(1.0, 0.0))
        good = make_chunks("y", ["fine"])[0]
        with pytest.raises(errors.EmbeddingMismatch):
            store.upsert([good, bad])
        assert store.count("y") == 0 and store.count("x") == 0

    # -- the three modes ----------------------------------------------------------------------
    def test_semantic_ranks_nearest_vector_first_with_breakdown(self, store: VectorStore) -> None:
        hits = store.search(semantic("Honey bees pollinate flowering plants.", k=3))
        assert hits[0].chunk.id == "bees#0"
        assert len(hits) == 3
        assert [h.breakdown.semantic_rank for h in hits] == [1, 2, 3]
        assert hits[0].breakdown.semantic_score == pytest.approx(1.0, abs=1e-3)
        assert hits[0].breakdown.keyword_rank is None
        assert hits[0].score >= hits[1].score >= hits[2].score

    def test_keyword_matches_terms_with_bm25_breakdown(self, store: VectorStore) -> None:
        hits = store.search(KeywordQuery(text="silicon photovoltaic", k=5))
        assert hits[0].chunk.id == "solar#1"
        assert hits[0].breakdown.keyword_rank == 1
        assert hits[0].breakdown.keyword_score is not None and hits[0].breakdown.keyword_score > 0
        assert hits[0].breakdown.semantic_rank is None
        assert hits[0].chunk.metadata.filename == "solar.txt"

    def test_keyword_with_no_matching_term_returns_nothing(self, store: VectorStore) -> None:
        assert store.search(KeywordQuery(text="zeppelin")) == []

    def test_hybrid_fuses_both_legs_with_rrf(self, store: VectorStore) -> None:
        hits = store.search(hybrid("queen colony", k=4, fusion="rrf", rrf_k=60))
        top = hits[0]
        assert top.chunk.id == "bees#1"
        assert top.breakdown.semantic_rank is not None and top.breakdown.keyword_rank is not None
        expected = 1 / (60 + top.breakdown.semantic_rank) + 1 / (60 + top.breakdown.keyword_rank)
        assert top.breakdown.fused_score == pytest.approx(expected)
        assert top.score == pytest.approx(expected)
        assert len(hits) <= 4

    def test_hybrid_gives_a_legs_only_hit_full_weight(self, store: VectorStore) -> None:
        # Given a term only one chunk holds: the keyword leg's only hit, the semantic leg's best
        hits = store.search(hybrid("silicon", k=4))
        top = hits[0]
        assert top.chunk.id == "solar#1" and top.breakdown.keyword_rank == 1
        assert [h for h in hits if h.breakdown.keyword_rank is not None] == [top]
        # Then convex fusion counts it in full in both legs (min-max scored a leg's only hit 0)
        assert top.breakdown.fused_score == pytest.approx(1.0) and top.score == pytest.approx(1.0)
        assert all(h.score < 0.5 for h in hits[1:])  # the rest: semantic evidence only

    def test_k_limits_results(self, store: VectorStore) -> None:
        assert len(store.search(semantic("anything at all", k=2))) == 2

    # -- neighbours and filters ---------------------------------------------------------------
    def test_neighbors_are_ordered_and_bounded(self, provider: VectorStoreProvider) -> None:
        s = provider.scoped(TenantScope(tenant_id="acme", namespace_id="long"))
        s.upsert(make_chunks("book", [f"Sentence number {i}." for i in range(20)]))
        got = s.neighbors("book", 10, before=5, after=5)
        assert [c.sequence_number for c in got] == list(range(5, 16))
        assert [c.sequence_number for c in s.neighbors("book", 1)] == list(range(0, 7))
        assert s.neighbors("missing", 3) == []

    def test_neighbors_bound_their_input(self, provider: VectorStoreProvider) -> None:
        """A sequence number or window past what a store holds is clamped, never sent (2^70 once
        overflowed SQLite); a negative window is the caller's bug."""
        s = provider.scoped(TenantScope(tenant_id="acme", namespace_id="long"))
        s.upsert(make_chunks("book", [f"Sentence number {i}." for i in range(5)]))
        assert s.neighbors("book", 2**70) == [] and s.neighbors("book", -1) == []
        whole = s.neighbors("book", 2, before=2**70, after=2**70)
        assert [c.sequence_number for c in whole] == list(range(5))
        with pytest.raises(errors.InvalidRequest):
            s.neighbors("book", 2, before=-1)

    def test_filters_narrow_every_mode(self, store: VectorStore) -> None:
        f = MetadataFilter(document_ids=("bees",))
        for q in (
            semantic("sunlight", filters=f),
            KeywordQuery(text="bee sunlight", filters=f),
            hybrid("sun bee", filters=f),
        ):
            hits = store.search(q)
            assert hits and {h.chunk.document_id for h in hits} == {"bees"}
        by_name = store.search(semantic("sunlight", filters=MetadataFilter(filenames=("rust.txt",))))
        assert [h.chunk.id for h in by_name] == ["rust#0"]

    def test_metadata_round_trips(self, store: VectorStore) -> None:
        c = store.neighbors("solar", 0, before=0, after=0)[0]
        assert c.metadata.page == 1 and c.metadata.heading_path == ("Intro",)
        assert c.id == "solar#0"

    # -- isolation ----------------------------------------------------------------------------
    def test_other_tenant_and_namespace_never_see_chunks(self, provider: VectorStoreProvider) -> None:
        a = provider.scoped(TenantScope(tenant_id="acme", namespace_id="docs"))
        b = provider.scoped(TenantScope(tenant_id="globex", namespace_id="docs"))
        c = provider.scoped(TenantScope(tenant_id="acme", namespace_id="other"))
        a.upsert(make_chunks("shared-id", ["Secret plans of acme about rockets."]))
        b.upsert(make_chunks("shared-id", ["Globex gardening notes about tulips."]))
        for store, own in ((a, "rockets"), (b, "tulips")):
            for q in (
                semantic("rockets tulips"),
                KeywordQuery(text="rockets tulips"),
                hybrid("rockets tulips"),
            ):
                assert [own in h.chunk.text for h in store.search(q)] == [True]
        for q in (semantic("rockets"), KeywordQuery(text="rockets acme"), hybrid("rockets")):
            assert c.search(q) == []
        assert c.neighbors("shared-id", 0) == [] and c.count() == 0
        assert b.delete_document("shared-id") == 1
        assert a.count("shared-id") == 1

    # Every backend subclass runs this same method (a different "executor" to hypothesis, by design);
    # each example writes under fresh tenant ids, so examples cannot leak into one another.
    @settings(
        max_examples=15,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
    )
    @given(
        data=st.lists(
            st.tuples(
                st.sampled_from(["t1", "t2", "t3"]),
                st.sampled_from(["n1", "n2"]),
                st.text(alphabet=string.ascii_lowercase + " ", min_size=3, max_size=30),
            ),
            min_size=1,
            max_size=8,
        ),
        query=st.text(alphabet=string.ascii_lowercase + " ", min_size=1, max_size=20).filter(str.strip),
    )
    def test_property_no_hit_ever_crosses_a_scope(
        self, provider: VectorStoreProvider, data: list[tuple[str, str, str]], query: str
    ) -> None:
        # Every document text is tagged with its own scope; a hit must carry the searcher's tag.
        run = f"r{abs(hash((tuple(data), query))) % 10**8}"
        for i, (t, n, text) in enumerate(data):
            provider.scoped(TenantScope(tenant_id=f"{run}{t}", namespace_id=n)).upsert(
                make_chunks(f"d{i}", [f"{text} {query} tag{t}{n}"])
            )
        for t in ("t1", "t2", "t3"):
            for n in ("n1", "n2"):
                s = provider.scoped(TenantScope(tenant_id=f"{run}{t}", namespace_id=n))
                for q in (semantic(query, k=50), KeywordQuery(text=query, k=50), hybrid(query, k=50)):
                    for h in s.search(q):
                        assert h.chunk.text.endswith(f"tag{t}{n}")
