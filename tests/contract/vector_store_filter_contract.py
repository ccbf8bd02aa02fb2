"""The VectorStore contract for metadata filters and document ACLs: part of
:class:`~tests.contract.vector_store_contract.VectorStoreContract` (every backend runs it).

A store bound to a :class:`ReadView` serves exactly what :meth:`ReadView.admits` admits (the view's
filter narrowed by the query's own ``where``), inside the search: the generated test writes a random
corpus (attributes and readers per document), then for random views and query filters compares
every search mode, ``neighbors`` and ``count(doc)`` with a brute-force evaluation over the same
chunks — no missing hit, no extra hit. :func:`check_one_among_10000` is the k = 1 case at scale.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.adapters.embedded.bm25 import analyze
from ragline.domain.access import UserContext, document_readers
from ragline.domain.attributes import Attributes, normalise
from ragline.domain.filters import ReadView, parse_filter
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
from tests.support.filter_strategies import attribute_maps, raw_filters
from tests.support.vectors import bow_vector

_RUNS = itertools.count()
WORDS = ["amber", "basil", "cedar", "delta", "ember", "flint", "grove", "heron"]
USERS = ["ann", "bob"]
GROUPS = ["hr", "ops"]
EPS = 1e-4
"""Cosine tolerance between a store's scores and numpy's (float32 in both stores)."""


@dataclass(frozen=True)
class Doc:
    attributes: Attributes
    readers: tuple[str, ...]
    texts: tuple[str, ...]


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
docs = st.builds(
    lambda attrs, users, groups, chunk_texts: Doc(
        normalise(attrs, {})[0], document_readers(users, groups), tuple(chunk_texts)
    ),
    attribute_maps,
    st.lists(st.sampled_from(USERS), max_size=2, unique=True),
    st.lists(st.sampled_from(GROUPS), max_size=2, unique=True),
    st.lists(texts, min_size=1, max_size=3),
)
readers_of_view = st.one_of(
    st.none(),
    st.builds(
        lambda user, groups: UserContext.of(user, groups).reader_terms(),
        st.sampled_from([*USERS, "cat"]),
        st.lists(st.sampled_from([*GROUPS, "dev"]), max_size=2),
    ),
)
views = st.builds(
    lambda where, readers: ReadView(None if where is None else parse_filter(where), readers),
    st.one_of(st.none(), raw_filters),
    readers_of_view,
)
cases = st.tuples(views, st.one_of(st.none(), raw_filters.map(parse_filter)), st.sampled_from(WORDS))


def corpus_chunks(corpus: list[Doc]) -> list[Chunk]:
    return [
        Chunk(
            document_id=f"d{i}",
            sequence_number=seq,
            text=text,
            metadata=ChunkMetadata(filename=f"d{i}.txt", attributes=doc.attributes, readers=doc.readers),
            embedding=bow_vector(text),
        )
        for i, doc in enumerate(corpus)
        for seq, text in enumerate(doc.texts)
    ]


def _cosines(chunks: list[Chunk], query: str) -> dict[str, float]:
    q = np.asarray(bow_vector(query), dtype=np.float64)
    return {c.id: float(np.asarray(c.embedding, dtype=np.float64) @ q) for c in chunks}


def check_semantic(store: VectorStore, admitted: list[Chunk], query: str, k: int, f: MetadataFilter) -> None:
    """The hits are an exact top k by cosine among the admitted chunks (ties may pick either)."""
    hits = store.search(SemanticQuery(text=query, vector=bow_vector(query), k=k, filters=f))
    ids = [h.chunk.id for h in hits]
    cos = _cosines(admitted, query)
    assert len(ids) == len(set(ids)) == min(k, len(admitted)), (ids, sorted(cos))
    assert set(ids) <= cos.keys(), set(ids) - cos.keys()
    rest = [cos[c] for c in cos.keys() - set(ids)]
    if ids and rest:
        assert min(cos[i] for i in ids) >= max(rest) - EPS
    for h in hits:
        assert abs(h.score - cos[h.chunk.id]) < EPS


def check_keyword(store: VectorStore, admitted: list[Chunk], query: str, k: int, f: MetadataFilter) -> None:
    """Every admitted chunk sharing a term with the query, up to k; nothing else."""
    terms = set(analyze(query))
    matching = {c.id for c in admitted if terms & set(analyze(c.text))}
    ids = [h.chunk.id for h in store.search(KeywordQuery(text=query, k=k, filters=f))]
    assert len(ids) == len(set(ids)) == min(k, len(matching))
    assert set(ids) <= matching


def check_hybrid(store: VectorStore, admitted: list[Chunk], query: str, k: int, f: MetadataFilter) -> None:
    """Admitted chunks only, and as many as k allows (the semantic leg finds every admitted chunk)."""
    hits = store.search(HybridQuery(text=query, vector=bow_vector(query), k=k, filters=f))
    ids = [h.chunk.id for h in hits]
    allowed = {c.id: c for c in admitted}
    assert len(ids) == len(set(ids)) == min(k, len(admitted))
    assert set(ids) <= allowed.keys()
    for h in hits:  # the chunk comes back with its metadata
        assert h.chunk.metadata.attributes == allowed[h.chunk.id].metadata.attributes


def check_reads(
    provider: VectorStoreProvider, scope: TenantScope, chunks: list[Chunk], case: tuple[object, ...]
) -> None:
    view, where, query = case
    assert isinstance(view, ReadView) and isinstance(query, str)
    narrowed = view.narrowed(where)  # type: ignore[arg-type]
    admitted = [c for c in chunks if narrowed.admits(c.metadata.attributes, c.metadata.readers)]
    store = provider.scoped(scope, view)
    f = MetadataFilter(where=where)  # type: ignore[arg-type]
    for k in (1, 3, len(chunks)):
        check_semantic(store, admitted, query, k, f)
        check_keyword(store, admitted, query, k, f)
        check_hybrid(store, admitted, query, k, f)
    # neighbors and count(doc) see the view only (the query filter is a search's own)
    seen = [c for c in chunks if view.admits(c.metadata.attributes, c.metadata.readers)]
    for doc in sorted({c.document_id for c in chunks}):
        mine = [c.id for c in seen if c.document_id == doc]
        assert [c.id for c in store.neighbors(doc, 0, before=0, after=10)] == mine
        assert store.count(doc) == len(mine)
    assert store.count() == len(seen)  # every chunk is published: the scope's figure is the view's


class FilterContract:
    """Mixed into :class:`~tests.contract.vector_store_contract.VectorStoreContract`."""

    filter_examples = 25
    """Corpora per test run (each checked against several views); OpenSearch backends run fewer."""

    def _filter_scope(self) -> TenantScope:
        return TenantScope(tenant_id=f"flt{next(_RUNS)}", namespace_id="docs")

    def test_property_filtered_and_acl_reads_equal_brute_force(self, provider: VectorStoreProvider) -> None:
        @settings(
            max_examples=self.filter_examples,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(corpus=st.lists(docs, min_size=1, max_size=8), checks=st.lists(cases, min_size=1, max_size=6))
        def run(corpus: list[Doc], checks: list[tuple[object, ...]]) -> None:
            scope = self._filter_scope()
            chunks = corpus_chunks(corpus)
            provider.scoped(scope).upsert(chunks)
            for case in checks:
                check_reads(provider, scope, chunks, case)

        run()

    def test_a_query_filter_narrows_the_view_and_never_widens_it(self, provider: VectorStoreProvider) -> None:
        scope = self._filter_scope()
        corpus = [
            Doc({"team": "red", "year": 2023.0}, (), ("amber basil",)),
            Doc({"team": "red", "year": 2024.0}, ("g:hr",), ("amber cedar",)),
            Doc({"team": "blue", "year": 2024.0}, (), ("amber delta",)),
        ]
        provider.scoped(scope).upsert(corpus_chunks(corpus))
        red = ReadView(parse_filter({"equals": {"key": "team", "value": "red"}}))
        store = provider.scoped(scope, red)
        everything = HybridQuery(text="amber", vector=bow_vector("amber"), k=10)
        assert {h.chunk.document_id for h in store.search(everything)} == {"d0", "d1"}
        # a query filter that would admit the blue document outside the view adds nothing
        blue = MetadataFilter(where=parse_filter({"equals": {"key": "team", "value": "blue"}}))
        for q in (
            everything,
            KeywordQuery(text="amber", k=10),
            SemanticQuery(text="amber", vector=bow_vector("amber")),
        ):
            assert store.search(q.model_copy(update={"filters": blue})) == []
        # one inside the view narrows it
        recent = MetadataFilter(where=parse_filter({"greaterThanOrEquals": {"key": "year", "value": 2024}}))
        assert [
            h.chunk.document_id for h in store.search(everything.model_copy(update={"filters": recent}))
        ] == ["d1"]
        # and readers narrow too: a user outside hr sees the open red document only
        outsider = ReadView(red.where, UserContext.of("ann", ["ops"]).reader_terms())
        assert {h.chunk.document_id for h in provider.scoped(scope, outsider).search(everything)} == {"d0"}
        assert provider.scoped(scope, outsider).count("d1") == 0
        assert provider.scoped(scope, outsider).neighbors("d1", 0) == []


def ten_thousand(target: int = 4321) -> list[Chunk]:
    """10,000 chunks of one vocabulary; only ``target`` is tagged ``pick`` and readable by ``u:solo``,
    1 % are tagged ``some``; every other chunk is readable by group ``staff`` only."""
    out = []
    for i in range(10_000):
        text = f"common filler words number {i % 97} {WORDS[i % len(WORDS)]}"
        tag = "pick" if i == target else "some" if i % 100 == 7 else "rest"
        readers = document_readers(users=["solo"]) if i == target else document_readers(groups=["staff"])
        out.append(
            Chunk(
                document_id=f"doc{i}",
                sequence_number=0,
                text=text,
                metadata=ChunkMetadata(attributes={"tag": tag, "n": float(i)}, readers=readers),
                embedding=bow_vector(text),
            )
        )
    return out


def check_one_among_10000(provider: VectorStoreProvider, scope: TenantScope, target: int = 4321) -> None:
    """With 10,000 chunks written by ``ten_thousand``: k = 1 and a filter (or an ACL) matching one chunk
    finds it in every mode, and a 1 % filter fills k = 10."""
    far = "heron common filler words number 3"  # nearest to other chunks than the target
    queries = (
        lambda f: SemanticQuery(text=far, vector=bow_vector(far), k=1, filters=f),
        lambda f: KeywordQuery(text="common filler", k=1, filters=f),
        lambda f: HybridQuery(text=far, vector=bow_vector(far), k=1, filters=f),
    )
    pick = MetadataFilter(where=parse_filter({"equals": {"key": "tag", "value": "pick"}}))
    solo = provider.scoped(scope, ReadView(readers=UserContext.of("solo").reader_terms()))
    for make in queries:
        assert [h.chunk.document_id for h in provider.scoped(scope).search(make(pick))] == [f"doc{target}"]
        assert [h.chunk.document_id for h in solo.search(make(MetadataFilter()))] == [f"doc{target}"]
    some = ReadView(parse_filter({"equals": {"key": "tag", "value": "some"}}))
    store = provider.scoped(scope, some)
    for make in queries:
        q = make(MetadataFilter()).model_copy(update={"k": 10})
        hits = store.search(q)
        assert len(hits) == 10 and all(h.chunk.metadata.attributes["tag"] == "some" for h in hits)
