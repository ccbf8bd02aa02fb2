"""The VectorStore contract against a real OpenSearch node (lucene HNSW), one fresh index per test."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.models import TenantScope
from ragline.ports import VectorStore, VectorStoreProvider
from tests.contract.vector_store_contract import DOCS, VectorStoreContract, hybrid, make_chunks
from tests.contract.vector_store_filter_contract import check_one_among_10000, ten_thousand
from tests.contract.vector_store_publish_contract import PublishFault
from tests.support.bulk_faults import BulkFaults
from tests.support.vectors import DIM

pytestmark = [pytest.mark.contract, pytest.mark.opensearch]


def _provider(url: str, **kw: object) -> OpenSearchVectorStoreProvider:
    client = build_client(Settings(opensearch_url=url))
    return OpenSearchVectorStoreProvider(client, index=f"test-{uuid.uuid4().hex[:12]}", dimension=DIM, **kw)  # type: ignore[arg-type]


class TestOpenSearchVectorStore(VectorStoreContract):
    filter_examples = 6  # the shared node: each corpus is checked against up to six views

    @pytest.fixture(params=["msearch", "query", "msearch-3-shards"])
    def provider(
        self, opensearch_url: str, request: pytest.FixtureRequest
    ) -> Iterator[OpenSearchVectorStoreProvider]:
        """Both hybrid strategies: the legs fused here (default) and the node's own ``hybrid`` query;
        and a pooled index of three primaries, each tenant routed to one of them."""
        strategy, _, sharded = request.param.partition("-")
        p = _provider(opensearch_url, hybrid=strategy, shards=3 if sharded else 1)
        yield p
        p.drop()
        p.close()

    @pytest.fixture
    def publish_fault(self, bulk_faults: BulkFaults) -> PublishFault:
        """The node answers the document's fence action 503 (its shard unavailable), the rest applied."""

        @contextmanager
        def fault(
            provider: VectorStoreProvider, store: VectorStore, doc: str, generation: int
        ) -> Iterator[VectorStore]:
            assert isinstance(provider, OpenSearchVectorStoreProvider)
            client = build_client(Settings(opensearch_url=bulk_faults.url))
            through = OpenSearchVectorStoreProvider(client, index=provider.index, dimension=DIM)
            bulk_faults.refuse[rq.fence_id(store.scope, doc)] = 503
            try:
                yield through.scoped(store.scope)
            finally:
                bulk_faults.heal()
                through.close()

        return fault


@pytest.fixture(scope="module")
def bulk_faults(opensearch_url: str) -> Iterator[BulkFaults]:
    proxy = BulkFaults(opensearch_url).start()
    yield proxy
    proxy.stop()


@pytest.fixture(scope="module")
def ten_thousand_chunks(opensearch_url: str) -> Iterator[tuple[OpenSearchVectorStoreProvider, TenantScope]]:
    """One index of 10,000 chunks for the module (written in one upsert), among other tenants' chunks."""
    p = _provider(opensearch_url)
    scope = TenantScope(tenant_id="acme", namespace_id="big")
    p.scoped(scope).upsert(ten_thousand())
    p.scoped(TenantScope(tenant_id="other", namespace_id="big")).upsert(ten_thousand()[:200])
    yield p, scope
    p.drop()
    p.close()


@pytest.mark.parametrize("strategy", ["msearch", "query"])
def test_k1_with_a_filter_matching_one_chunk_among_10000(
    ten_thousand_chunks: tuple[OpenSearchVectorStoreProvider, TenantScope], strategy: str
) -> None:
    p, scope = ten_thousand_chunks
    both = OpenSearchVectorStoreProvider(p.client, index=p.index, dimension=DIM, hybrid=strategy)  # type: ignore[arg-type]
    check_one_among_10000(both, scope)


def test_concurrent_hybrid_strategy_matches_msearch(opensearch_url: str) -> None:
    """Given the same data, both hybrid strategies (one _msearch, two concurrent searches) agree."""
    one = _provider(opensearch_url, hybrid="msearch")
    two = OpenSearchVectorStoreProvider(one.client, index=one.index, dimension=DIM, hybrid="concurrent")
    try:
        scope = TenantScope(tenant_id="acme", namespace_id="docs")
        one.scoped(scope).upsert(make_chunks("d", ["alpha beta", "beta gamma", "gamma delta", "delta alpha"]))
        a = [(h.chunk.id, h.breakdown) for h in one.scoped(scope).search(hybrid("beta gamma"))]
        b = [(h.chunk.id, h.breakdown) for h in two.scoped(scope).search(hybrid("beta gamma"))]
        assert a == b and a
    finally:
        one.drop()
        two.close()


_OTHER_PROCESS = """
import sys
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.domain.models import TenantScope
from ragline.ports import VectorStore, VectorStoreProvider
url, index, dim = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = OpenSearchVectorStoreProvider(build_client(Settings(opensearch_url=url)), index=index, dimension=dim)
print(p.scoped(TenantScope(tenant_id="acme", namespace_id="docs")).count())
"""


def test_a_published_version_is_searchable_from_another_process_at_once(opensearch_url: str) -> None:
    """``on_read`` defers refreshes to the writer's next read; another process (the search Lambda) never
    wrote, so it relies on publish: once publish returns, every process sees that version and not the
    one it replaced. The index's scheduled refresh is off here, so nothing else can make them visible."""
    writer = _provider(opensearch_url)
    try:
        writer.ensure_index()
        writer.client.indices.put_settings(index=writer.index, body={"index": {"refresh_interval": "-1"}})
        store = writer.scoped(TenantScope(tenant_id="acme", namespace_id="docs"))

        def seen_elsewhere() -> int:
            argv = [sys.executable, "-c", _OTHER_PROCESS, opensearch_url, writer.index, str(DIM)]
            return int(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)

        # Given a version written but not yet published: not refreshed, so no other process sees it
        store.upsert(make_chunks("manual.md", ["one", "two", "three"]), generation=1)
        assert seen_elsewhere() == 0
        # When it is published, Then another process sees all of it at once
        assert store.publish("manual.md", generation=1)
        assert seen_elsewhere() == 3
        # and a newer, shorter version replaces it everywhere as soon as its publish returns
        store.upsert(make_chunks("manual.md", ["only one"]), generation=2)
        assert store.publish("manual.md", generation=2)
        assert seen_elsewhere() == 1
        # and so does a deletion (a published generation with no chunks)
        assert store.publish("manual.md", generation=3)
        assert seen_elsewhere() == 0
    finally:
        writer.drop()
        writer.close()


def test_an_index_written_before_versions_were_kept_apart_still_serves_its_chunks(
    opensearch_url: str,
) -> None:
    """Chunks stored under the plain ``<tenant>/<namespace>/<chunk id>`` at a published generation (how
    every chunk was written before) are found by every read, and a new version replaces them."""
    from ragline.adapters.opensearch import requests as rq

    p = _provider(opensearch_url)
    try:
        scope = TenantScope(tenant_id="acme", namespace_id="docs")
        store = p.scoped(scope)
        # Given a document published at 3 whose chunks carry the old ids
        lines = rq.bulk_lines(scope, p.index, make_chunks("old.md", ["legacy alpha", "legacy beta"]), 3)
        old_ids = b"".join(lines).replace(b"#0@3", b"#0").replace(b"#1@3", b"#1")
        p.client.bulk(body=old_ids, refresh="true")
        assert store.publish("old.md", generation=3)
        # Then searches, neighbors and counts serve them
        assert [h.chunk.text for h in store.search(hybrid("legacy alpha", k=1))] == ["legacy alpha"]
        assert [c.text for c in store.neighbors("old.md", 0)] == ["legacy alpha", "legacy beta"]
        assert store.count("old.md") == 2
        # and a new version replaces them whole
        store.upsert(make_chunks("old.md", ["fresh text"]), generation=4)
        assert store.publish("old.md", generation=4)
        assert [c.text for c in store.neighbors("old.md", 0)] == ["fresh text"]
    finally:
        p.drop()
        p.close()


def _min_max(scores: dict[str, float]) -> dict[str, float]:
    """2.19's ``min_max`` normalisation of one leg (0 becomes 0.001; a leg's only hit 1)."""
    lo, hi = min(scores.values()), max(scores.values())
    return {c: 1.0 if hi == lo else ((s - lo) / (hi - lo)) or 0.001 for c, s in scores.items()}


def test_the_hybrid_query_is_fused_by_the_pipeline_with_the_query_weights(opensearch_url: str) -> None:
    """Given a scope small enough that every chunk is a candidate of both legs, the node's fused score
    of each hit is α·min_max(semantic) + (1-α)·min_max(keyword) over the legs the breakdown reports:
    the pipeline ran, with this query's α (a missing pipeline gives the hybrid query's raw delimiter
    scores; ignored weights give 0.5/0.5)."""
    p = _provider(opensearch_url, hybrid="query")
    try:
        store = p.scoped(TenantScope(tenant_id="acme", namespace_id="docs"))
        for doc, texts in DOCS.items():
            store.upsert(make_chunks(doc, texts))
        hits = store.search(hybrid("bee colony queen plants", k=10, alpha=0.25))
        assert len(hits) == sum(map(len, DOCS.values()))  # every chunk: the kNN leg returns them all
        sem = {
            h.chunk.id: 1 + h.breakdown.semantic_score for h in hits if h.breakdown.semantic_score is not None
        }
        kw = {h.chunk.id: h.breakdown.keyword_score for h in hits if h.breakdown.keyword_score is not None}
        s_w, k_w = _min_max(sem), _min_max(kw)  # type: ignore[arg-type]
        for h in hits:
            expected = 0.25 * s_w.get(h.chunk.id, 0.0) + 0.75 * k_w.get(h.chunk.id, 0.0)
            assert h.score == pytest.approx(expected, abs=1e-4) == h.breakdown.fused_score
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    finally:
        p.drop()
        p.close()


@pytest.mark.parametrize("fusion", ["convex", "rrf"])
def test_the_hybrid_query_reports_the_same_per_leg_breakdown_as_msearch(
    opensearch_url: str, fusion: str
) -> None:
    """Given the same chunks, a hit of the node's hybrid query reports the ranks and scores its legs gave
    it exactly as the ``_msearch`` strategy does (RRF: the same fused scores too)."""
    one = _provider(opensearch_url, hybrid="msearch")
    two = OpenSearchVectorStoreProvider(one.client, index=one.index, dimension=DIM, hybrid="query")
    try:
        scope = TenantScope(tenant_id="acme", namespace_id="docs")
        for doc, texts in DOCS.items():
            one.scoped(scope).upsert(make_chunks(doc, texts))
        q = hybrid("queen colony sunlight", k=10, fusion=fusion)
        a = {h.chunk.id: h.breakdown for h in one.scoped(scope).search(q)}
        b = {h.chunk.id: h.breakdown for h in two.scoped(scope).search(q)}
        assert a.keys() == b.keys() and len(a) == 6
        for cid, bd in b.items():
            assert (bd.semantic_rank, bd.keyword_rank) == (a[cid].semantic_rank, a[cid].keyword_rank)
            assert bd.semantic_score == pytest.approx(a[cid].semantic_score)
            assert bd.keyword_score == pytest.approx(a[cid].keyword_score)
            if fusion == "rrf":
                assert bd.fused_score == pytest.approx(a[cid].fused_score, rel=1e-5)
    finally:
        one.drop()
        two.close()


@pytest.mark.parametrize("neighbour", [False, True], ids=["alone", "pooled"])
def test_a_hybrid_search_of_published_chunks_reads_fences_and_sources_in_one_round_trip(
    opensearch_url: str, neighbour: bool
) -> None:
    """Alone on its shard, the scope's two legs go in one ``_msearch`` (the keyword leg scored with the
    shard's own statistics); pooled, its keyword statistics ride in the ``_msearch`` with the kNN leg
    and the keyword leg follows (one ``_search``: :mod:`.term_stats`). Then one ``_mget`` for the
    fences *and* the survivors' sources; a survivor whose prefetched copy is of another generation is
    read again at the served one."""
    p = _provider(opensearch_url)
    legs = ["msearch", "search"] if neighbour else ["msearch"]
    try:
        store = p.scoped(TenantScope(tenant_id="acme", namespace_id="docs"))
        if neighbour:
            p.scoped(TenantScope(tenant_id="globex", namespace_id="docs")).upsert(make_chunks("n", ["beta"]))
        store.upsert(make_chunks("d", ["alpha beta", "beta gamma", "gamma delta"]), generation=1)
        assert store.publish("d", generation=1)
        store.upsert(make_chunks("d", ["beta gamma v2", "gamma delta v2", "delta alpha v2"]), generation=2)
        calls: list[str] = []
        for name in ("mget", "msearch", "search"):
            real = getattr(p.client, name)

            def spy(*a: object, _real: object = real, _name: str = name, **kw: object) -> object:
                calls.append(_name)
                return _real(*a, **kw)  # type: ignore[operator]

            setattr(p.client, name, spy)
        hits = store.search(hybrid("beta gamma"))
        # Then only generation 1 is served, and its texts come back
        assert {h.chunk.text for h in hits} == {"alpha beta", "beta gamma", "gamma delta"}
        # unpublished generation-2 chunks among the candidates: fused again without them, sources re-read
        assert calls[: len(legs) + 1] == [*legs, "mget"]
        assert store.publish("d", generation=2)
        calls.clear()
        hits = store.search(hybrid("beta gamma"))
        assert {h.chunk.text for h in hits} == {"beta gamma v2", "gamma delta v2", "delta alpha v2"}
        assert calls == [*legs, "mget"]  # every candidate published: nothing read twice
    finally:
        p.drop()
        p.close()


def test_chunks_written_before_filters_read_as_open_and_without_attributes(opensearch_url: str) -> None:
    """Given an index made before chunks carried filter fields (its mapping lacks them, its chunks
    have none), a provider adds the fields; the old chunks are read by every user and match only
    negated filters, beside new chunks that filter."""
    import json

    from ragline.adapters.opensearch import requests as rq
    from ragline.domain.access import UserContext
    from ragline.domain.filters import Not, ReadView, parse_filter
    from ragline.domain.models import ChunkMetadata, KeywordQuery

    p = _provider(opensearch_url)
    try:
        old_body = rq.index_body(DIM)
        for field in ("attribute_terms", "readers"):
            del old_body["mappings"]["properties"][field]
        p.client.indices.create(index=p.index, body=old_body)
        scope = TenantScope(tenant_id="acme", namespace_id="docs")
        lines = []
        for line in b"".join(rq.bulk_lines(scope, p.index, make_chunks("old", ["bees buzz"]))).splitlines():
            doc = json.loads(line)
            for field in ("attribute_terms", "readers"):
                doc.pop(field, None)
            lines.append(json.dumps(doc))
        p.client.bulk(body="\n".join(lines) + "\n", refresh="true")
        user = UserContext.of("ann", ["hr"]).reader_terms()
        tagged = parse_filter({"equals": {"key": "team", "value": "red"}})
        q = KeywordQuery(text="bees")
        assert [h.chunk.id for h in p.scoped(scope, ReadView(readers=user)).search(q)] == ["old#0"]
        assert p.scoped(scope, ReadView(tagged)).search(q) == []
        assert len(p.scoped(scope, ReadView(Not(tagged), user)).search(q)) == 1
        private = make_chunks("new", ["bees hum"])[0]
        meta = ChunkMetadata(attributes={"team": "red"}, readers=("g:ops",))
        p.scoped(scope).upsert([private.model_copy(update={"metadata": meta})])
        assert [h.chunk.id for h in p.scoped(scope, ReadView(tagged)).search(q)] == ["new#0"]
        assert [h.chunk.id for h in p.scoped(scope, ReadView(readers=user)).search(q)] == ["old#0"]
    finally:
        p.drop()
        p.close()


def _through(p: OpenSearchVectorStoreProvider, proxy: BulkFaults) -> OpenSearchVectorStoreProvider:
    """A second provider on ``p``'s index whose requests pass through the faulty proxy."""
    return OpenSearchVectorStoreProvider(
        build_client(Settings(opensearch_url=proxy.url)), index=p.index, dimension=DIM
    )


def test_a_fence_bulk_whose_answer_is_lost_is_settled_from_the_fences(
    opensearch_url: str, bulk_faults: BulkFaults
) -> None:
    """The node applied the fences but no answer came back (the connection dropped, every retry too):
    ``publish_many`` reads the fences and reports what they hold — the documents served are reported
    published, not failed."""
    p = _provider(opensearch_url)
    through = _through(p, bulk_faults)
    scope = TenantScope(tenant_id="acme", namespace_id="docs")
    try:
        # Given a, b written at 1 and c written at 3, while a newer worker already published c at 5
        store = through.scoped(scope)
        store.upsert(make_chunks("a", ["alpha one"]) + make_chunks("b", ["beta one"]), generation=1)
        store.upsert(make_chunks("c", ["gamma one"]), generation=3)
        assert p.scoped(scope).publish("c", generation=5)
        # When their fences are written by a request whose answer is lost
        bulk_faults.unanswered.add(rq.fence_id(scope, "a"))
        published = store.publish_many({"a": 1, "b": 1, "c": 3})
        # Then each is reported from its fence: a and b published (and served), c refused
        assert published == {"a": True, "b": True, "c": False}
        assert p.scoped(scope).count("a") == 1 and p.scoped(scope).count("b") == 1
    finally:
        bulk_faults.heal()
        through.close()
        p.drop()
        p.close()


def test_a_sweep_failing_after_the_fence_rose_still_reports_the_document_published(
    opensearch_url: str, bulk_faults: BulkFaults
) -> None:
    p = _provider(opensearch_url)
    through = _through(p, bulk_faults)
    scope = TenantScope(tenant_id="acme", namespace_id="docs")
    try:
        # Given a served at 1 and its new version written at 2
        store = through.scoped(scope)
        store.upsert(make_chunks("a", ["old words"]), generation=1)
        assert store.publish("a", generation=1)
        store.upsert(make_chunks("a", ["new words"]), generation=2)
        # When it is published and the node fails the delete of the old chunk (the sweep)
        bulk_faults.refuse[rq.doc_id(scope, "a#0", 1)] = 503
        # Then the publish is reported done: the fence rose, the new version alone is served
        assert store.publish_many({"a": 2}) == {"a": True}
        assert [c.text for c in store.neighbors("a", 0)] == ["new words"] and store.count() == 2
        # and the next publish of the document sweeps the old chunk
        bulk_faults.heal()
        assert store.publish("a", generation=2) and store.count() == 1
    finally:
        bulk_faults.heal()
        through.close()
        p.drop()
        p.close()


def test_a_chunk_its_shard_could_not_take_is_a_retryable_failure(
    opensearch_url: str, bulk_faults: BulkFaults
) -> None:
    """A ``_bulk`` item answered 503 (its shard short of the copies a replicated write waits for) fails
    the upsert as :class:`~ragline.errors.DependencyUnavailable` — retry later — not as a request
    Ragline built wrong."""
    from ragline import errors

    p = _provider(opensearch_url)
    through = _through(p, bulk_faults)
    scope = TenantScope(tenant_id="acme", namespace_id="docs")
    try:
        bulk_faults.refuse[rq.doc_id(scope, "a#1")] = 503
        with pytest.raises(errors.DependencyUnavailable):
            through.scoped(scope).upsert(make_chunks("a", ["one", "two", "three"]))
    finally:
        bulk_faults.heal()
        through.close()
        p.drop()
        p.close()


def test_a_client_given_several_nodes_passes_over_one_that_is_down(opensearch_url: str) -> None:
    """``RAGLINE_OPENSEARCH_URL`` naming two nodes, the first of them down (nothing listens on its
    port): every request is answered, by the other node."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{s.getsockname()[1]}"
    p = OpenSearchVectorStoreProvider(
        build_client(Settings(opensearch_url=f"{down}, {opensearch_url}")),
        index=f"test-{uuid.uuid4().hex[:12]}",
        dimension=DIM,
    )
    try:
        store = p.scoped(TenantScope(tenant_id="acme", namespace_id="docs"))
        store.upsert(make_chunks("d", ["alpha beta", "beta gamma"]))
        assert [store.count() for _ in range(6)] == [2] * 6
    finally:
        p.drop()
        p.close()
