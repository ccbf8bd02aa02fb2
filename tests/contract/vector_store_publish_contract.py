"""The VectorStore contract for ``publish_many``: part of :class:`VectorStoreContract` (which every
backend subclasses), kept apart because it is long.

``publish_many`` must mean, per document, exactly what ``publish`` means; the generated test checks it
against a model of the contract over sequences of upserts, publishes, discards and publish-manys of the
same few documents, and after every step that each document serves exactly one whole published version.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from contextlib import AbstractContextManager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline import errors
from ragline.domain.models import Chunk, ChunkMetadata, KeywordQuery, TenantScope
from ragline.ports import VectorStore, VectorStoreProvider
from tests.support.vectors import bow_vector

_RUNS = itertools.count()

PublishFault = Callable[[VectorStoreProvider, VectorStore, str, int], AbstractContextManager[VectorStore]]
"""``fault(provider, store, doc, generation)``: while it is entered, a store of ``store``'s scope (the
one it yields) whose publish of ``doc`` at ``generation`` fails in the backend itself — a failure of
that document alone."""


def _chunks(doc: str, generation: int, n: int) -> list[Chunk]:
    return [
        Chunk(
            document_id=doc,
            sequence_number=i,
            text=f"tok{doc} gen{generation} part{i}",
            metadata=ChunkMetadata(filename=f"{doc}.txt"),
            embedding=bow_vector(f"tok{doc} gen{generation} part{i}"),
        )
        for i in range(n)
    ]


def _served(store: VectorStore, doc: str) -> list[str]:
    return [c.text for c in store.neighbors(doc, 0, before=0, after=20)]


DOC = st.sampled_from(["a", "b", "c"])
GEN = st.integers(min_value=1, max_value=4)
STEP = st.one_of(
    st.tuples(st.just("upsert"), DOC, GEN, st.integers(min_value=1, max_value=3)),
    st.tuples(st.just("publish"), DOC, GEN),
    st.tuples(st.just("discard"), DOC, GEN),
    st.tuples(st.just("publish_many"), st.dictionaries(DOC, GEN, min_size=1, max_size=3)),
)


class PublishManyContract:
    """Mixed into :class:`~tests.contract.vector_store_contract.VectorStoreContract`."""

    @pytest.fixture
    def publish_fault(self) -> PublishFault:
        raise NotImplementedError

    def _fresh(self, provider: VectorStoreProvider) -> VectorStore:
        return provider.scoped(TenantScope(tenant_id=f"pm{next(_RUNS)}", namespace_id="docs"))

    def test_publish_many_fails_only_the_document_whose_publish_failed(
        self, provider: VectorStoreProvider, publish_fault: PublishFault
    ) -> None:
        """What ``publish_many`` reports is what is served: a failure of one document's publish is that
        document's outcome alone, never an error for the lot after the others' fences rose."""
        store = self._fresh(provider)
        # Given a, b, c served at 1 and their new versions written at 2
        store.upsert(_chunks("a", 1, 1) + _chunks("b", 1, 1) + _chunks("c", 1, 1), generation=1)
        assert store.publish_many({"a": 1, "b": 1, "c": 1}) == {"a": True, "b": True, "c": True}
        store.upsert(_chunks("a", 2, 2) + _chunks("b", 2, 2) + _chunks("c", 2, 2), generation=2)
        # When they are published together and the store fails b's publish alone
        with publish_fault(provider, store, "b", 2) as faulty:
            published = faulty.publish_many({"a": 2, "b": 2, "c": 2})
        # Then a and c are published and serve their new versions; b reports its error, serves its old one
        assert published["a"] is True and published["c"] is True, published
        assert isinstance(published["b"], errors.RaglineError), published
        assert _served(store, "a") == ["toka gen2 part0", "toka gen2 part1"]
        assert _served(store, "c") == ["tokc gen2 part0", "tokc gen2 part1"]
        assert _served(store, "b") == ["tokb gen1 part0"]
        # and b's version is published by the next try
        assert store.publish_many({"b": 2}) == {"b": True}
        assert _served(store, "b") == ["tokb gen2 part0", "tokb gen2 part1"]

    def test_publish_many_serves_every_document_and_sweeps_each_older_version(
        self, provider: VectorStoreProvider
    ) -> None:
        store = self._fresh(provider)
        # Given a, b published at 1 and new versions of a, b (shorter) and c written, unpublished
        store.upsert(_chunks("a", 1, 3) + _chunks("b", 1, 2), generation=1)
        assert store.publish_many({"a": 1, "b": 1}) == {"a": True, "b": True}
        store.upsert(_chunks("a", 2, 1) + _chunks("b", 2, 1), generation=2)
        store.upsert(_chunks("c", 5, 2), generation=5)
        assert _served(store, "c") == []
        # When they are published together
        assert store.publish_many({"a": 2, "b": 2, "c": 5}) == {"a": True, "b": True, "c": True}
        # Then each serves its new version alone and the old ones are gone from storage too
        assert _served(store, "a") == ["toka gen2 part0"]
        assert _served(store, "b") == ["tokb gen2 part0"]
        assert _served(store, "c") == ["tokc gen5 part0", "tokc gen5 part1"]
        assert store.count() == 4
        assert store.publish_many({}) == {}

    def test_publish_many_refuses_only_the_documents_whose_fence_is_higher(
        self, provider: VectorStoreProvider
    ) -> None:
        store = self._fresh(provider)
        # Given b already published at 4 (a newer worker), and a, b, c written at 3
        store.upsert(_chunks("b", 4, 1), generation=4)
        assert store.publish("b", generation=4)
        for doc in "ac":
            store.upsert(_chunks(doc, 3, 2), generation=3)
        with pytest.raises(errors.Superseded):
            store.upsert(_chunks("b", 3, 2), generation=3)
        # When all three publish at 3: b alone is refused, the others are served
        assert store.publish_many({"a": 3, "b": 3, "c": 3}) == {"a": True, "b": False, "c": True}
        assert _served(store, "b") == ["tokb gen4 part0"]
        assert _served(store, "a") == ["toka gen3 part0", "toka gen3 part1"]
        # and publishing the served generations again changes nothing served
        assert store.publish_many({"a": 3, "b": 4}) == {"a": True, "b": True}
        assert _served(store, "a") == ["toka gen3 part0", "toka gen3 part1"]
        assert _served(store, "b") == ["tokb gen4 part0"]

    def test_publish_many_of_a_generation_without_chunks_deletes_the_document(
        self, provider: VectorStoreProvider
    ) -> None:
        store = self._fresh(provider)
        store.upsert(_chunks("a", 1, 2) + _chunks("b", 1, 1), generation=1)
        assert store.publish_many({"a": 1, "b": 1}) == {"a": True, "b": True}
        assert store.publish_many({"a": 2}) == {"a": True}  # a delete: nothing written at 2
        assert _served(store, "a") == [] and store.count("a") == 0
        with pytest.raises(errors.Superseded):
            store.upsert(_chunks("a", 1, 1), generation=1)
        assert _served(store, "b") == ["tokb gen1 part0"]

    # Every backend subclass runs this same method (a different "executor" to hypothesis, by design);
    # each example works in a fresh scope.
    @settings(
        max_examples=15,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.differing_executors],
    )
    @given(steps=st.lists(STEP, min_size=1, max_size=8))
    def test_property_publish_many_interleaved_with_single_writes_serves_one_whole_version(
        self, provider: VectorStoreProvider, steps: list[tuple[object, ...]]
    ) -> None:
        store = self._fresh(provider)
        fence = {d: 0 for d in "abc"}
        written: dict[tuple[str, int], dict[int, str]] = {}  # (doc, generation) -> seq -> text

        def publish(doc: str, gen: int) -> bool:
            if fence[doc] > gen:
                return False
            fence[doc] = gen
            for key in [k for k in written if k[0] == doc and k[1] < gen]:
                del written[key]
            return True

        for step in steps:
            if step[0] == "upsert":
                _, doc, gen, n = step
                assert isinstance(doc, str) and isinstance(gen, int) and isinstance(n, int)
                if gen < fence[doc]:
                    with pytest.raises(errors.Superseded):
                        store.upsert(_chunks(doc, gen, n), generation=gen)
                else:
                    store.upsert(_chunks(doc, gen, n), generation=gen)
                    written.setdefault((doc, gen), {}).update(
                        {c.sequence_number: c.text for c in _chunks(doc, gen, n)}
                    )
            elif step[0] == "publish":
                _, doc, gen = step
                assert isinstance(doc, str) and isinstance(gen, int)
                assert store.publish(doc, generation=gen) is publish(doc, gen)
            elif step[0] == "discard":
                _, doc, gen = step
                assert isinstance(doc, str) and isinstance(gen, int)
                store.discard(doc, generation=gen)
                written.pop((doc, gen), None)
            else:
                gens = step[1]
                assert isinstance(gens, dict)
                assert store.publish_many(gens) == {d: publish(d, g) for d, g in gens.items()}
            # Then every document serves exactly its published version, whole, and nothing else
            for doc in "abc":
                served = [t for _, t in sorted(written.get((doc, fence[doc]), {}).items())]
                assert _served(store, doc) == served, (step, doc)
                assert store.count(doc) == len(served)
                hits = store.search(KeywordQuery(text=f"tok{doc}", k=50))
                assert sorted(h.chunk.text for h in hits) == sorted(served)
