"""The VectorStore contract in the OpenSearch Serverless mode, through a local proxy that refuses what a
vector-search collection refuses and delays visibility as a collection does (tests/support/aoss_proxy.py),
its fences in a fresh DynamoDB table (moto) per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.opensearch import serverless_requests as srq
from ragline.adapters.opensearch.client import build_client
from ragline.adapters.opensearch.fences import DynamoFences
from ragline.adapters.opensearch.serverless import ServerlessVectorStoreProvider
from ragline.adapters.opensearch.serverless_visibility import PendingWrites
from ragline.config import Settings
from ragline.domain.models import KeywordQuery, TenantScope
from ragline.ports import VectorStore, VectorStoreProvider
from tests.contract.vector_store_contract import VectorStoreContract, hybrid, make_chunks
from tests.contract.vector_store_publish_contract import PublishFault
from tests.support.aoss_proxy import AossProxy
from tests.support.cfn_tables import create_table_from_template
from tests.support.vectors import DIM

pytestmark = [pytest.mark.contract, pytest.mark.opensearch]
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")


@pytest.fixture(scope="module")
def aoss(opensearch_url: str) -> Iterator[AossProxy]:
    proxy = AossProxy(opensearch_url, refresh_ms=1000).start()
    yield proxy
    proxy.stop()


@pytest.fixture
def fences_table(dynamodb_client: Any) -> Iterator[str]:
    name = f"documents-{uuid.uuid4().hex[:10]}"
    create_table_from_template(dynamodb_client, "DocumentsTable", name)
    yield name
    dynamodb_client.delete_table(TableName=name)


def _provider(
    aoss: AossProxy, dynamodb_client: Any, table: str, index: str | None = None, **kw: Any
) -> ServerlessVectorStoreProvider:
    index = index or f"test-aoss-{uuid.uuid4().hex[:12]}"
    return ServerlessVectorStoreProvider(
        build_client(Settings(opensearch_url=aoss.url)),
        DynamoFences(table, index, client=dynamodb_client),
        index=index,
        dimension=DIM,
        pending=kw.pop("pending", PendingWrites()),
        **kw,
    )


class TestServerlessVectorStore(VectorStoreContract):
    filter_examples = 3  # each write waits for the stand-in collection's refresh

    @pytest.fixture
    def provider(
        self, aoss: AossProxy, dynamodb_client: Any, fences_table: str
    ) -> Iterator[ServerlessVectorStoreProvider]:
        p = _provider(aoss, dynamodb_client, fences_table)
        yield p
        p.drop()
        p.close()

    @pytest.fixture
    def publish_fault(self, dynamodb_client: Any) -> PublishFault:
        """A chunk recorded for the document's version (by a writer still in flight) never becomes
        searchable: its publish waits for it, and gives up."""

        @contextmanager
        def fault(
            provider: VectorStoreProvider, store: VectorStore, doc: str, generation: int
        ) -> Iterator[VectorStore]:
            assert isinstance(provider, ServerlessVectorStoreProvider)
            key = provider.fences.key(store.scope, doc)
            before = provider.fences.item(store.scope, doc)
            provider.fences.begin_write(store.scope, doc, generation, [99])
            waited, provider.visibility_timeout = provider.visibility_timeout, 1.5
            try:
                yield store
            finally:
                provider.visibility_timeout = waited
                dynamodb_client.put_item(TableName=provider.fences.table, Item={**before, **key})

        return fault


def test_an_unpublished_version_stays_unseen_after_the_collections_refresh(
    aoss: AossProxy, dynamodb_client: Any, fences_table: str
) -> None:
    """Searchable is not served: a version above the fence is invisible to every reader, however
    refreshed, until its publish."""
    p = _provider(aoss, dynamodb_client, fences_table)
    try:
        store = p.scoped(SCOPE)
        store.upsert(make_chunks("manual.md", ["alpha one", "alpha two"]), generation=1)
        p.settle()
        aoss.refresh_now()
        reader = _provider(aoss, dynamodb_client, fences_table, index=p.index).scoped(SCOPE)
        assert reader.search(KeywordQuery(text="alpha")) == [] and reader.count("manual.md") == 0
        assert store.publish("manual.md", generation=1)
        assert reader.count("manual.md") == 2
    finally:
        p.drop()


def test_publish_waits_until_the_version_is_searchable(
    aoss: AossProxy, dynamodb_client: Any, fences_table: str
) -> None:
    """A publisher that did not write (another worker, another process: none of the writes are its
    own) still raises the fence only once every chunk recorded for that generation is searchable, so a
    reader that waits for nothing sees the whole version as soon as publish returns."""
    writer = _provider(aoss, dynamodb_client, fences_table)
    try:
        writer.scoped(SCOPE).upsert(make_chunks("manual.md", ["one", "two", "three"]), generation=1)
        publisher = _provider(aoss, dynamodb_client, fences_table, index=writer.index).scoped(SCOPE)
        assert publisher.publish("manual.md", generation=1)
        reader = _provider(aoss, dynamodb_client, fences_table, index=writer.index).scoped(SCOPE)
        assert reader.count("manual.md") == 3
    finally:
        writer.drop()


def test_publish_gives_up_with_a_retryable_error_and_leaves_the_fence(
    aoss: AossProxy, dynamodb_client: Any, fences_table: str
) -> None:
    writer = _provider(aoss, dynamodb_client, fences_table)
    aoss.pause()
    try:
        writer.scoped(SCOPE).upsert(make_chunks("manual.md", ["one", "two"]), generation=1)
        impatient = _provider(aoss, dynamodb_client, fences_table, index=writer.index, visibility_timeout=0.3)
        with pytest.raises(errors.DependencyUnavailable) as caught:
            impatient.scoped(SCOPE).publish("manual.md", generation=1)
        assert isinstance(caught.value, errors.RETRYABLE)
        assert writer.fences.published(SCOPE, ["manual.md"]) == {"manual.md": 0}
    finally:
        aoss.resume()
        writer.drop()


def test_a_custom_document_id_is_refused_as_a_collection_refuses_it(
    aoss: AossProxy, dynamodb_client: Any, fences_table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Were the mode to send an ``_id`` (as the domain mode does), every upsert of the suite would fail."""
    p = _provider(aoss, dynamodb_client, fences_table)
    original = srq.bulk_lines

    def with_ids(*args: Any) -> list[bytes]:
        return [ln.replace(b'{"index": {', b'{"index": {"_id": "chosen", ', 1) for ln in original(*args)]

    monkeypatch.setattr(srq, "bulk_lines", with_ids)
    try:
        with pytest.raises(errors.DependencyFailed):
            p.scoped(SCOPE).upsert(make_chunks("manual.md", ["one"]))
        assert (
            "POST",
            "_bulk",
            "Document ID is not supported in create/index operation request",
        ) in aoss.refused
    finally:
        p.drop()


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("POST", "/{i}/_refresh", b"", 404),
        ("POST", "/{i}/_delete_by_query", b'{"query":{"match_all":{}}}', 404),
        ("PUT", "/{i}/_doc/chosen", b'{"text":"x"}', 400),
        ("POST", "/{i}/_doc?refresh=true", b'{"text":"x"}', 400),
        ("POST", "/{i}/_doc?version=3&version_type=external", b'{"text":"x"}', 400),
        ("PUT", "/{i}-other", b'{"settings":{"index":{"number_of_shards":2}}}', 400),
    ],
)
def test_the_proxy_refuses_what_a_collection_refuses(
    aoss: AossProxy, method: str, path: str, body: bytes, status: int
) -> None:
    got, out = aoss.request(method, path.format(i="test-aoss-refusals"), body)
    assert got == status and b'"error"' in out


def test_a_retried_write_is_served_once_as_its_newest_copy(
    aoss: AossProxy, dynamodb_client: Any, fences_table: str
) -> None:
    """A write sent twice (a retry after a lost answer) leaves two documents with collection-chosen
    ids until the writer's sweep; a reader in another process meanwhile serves the chunk once, the
    newest copy (highest stamp)."""
    writer = _provider(aoss, dynamodb_client, fences_table)
    try:
        store = writer.scoped(SCOPE)
        store.upsert(make_chunks("m", ["bees first copy", "bees unchanged"]))
        store.upsert(make_chunks("m", ["bees second copy"]))
        aoss.refresh_now()  # both copies searchable; the writer has not read, so not swept yet
        reader = _provider(aoss, dynamodb_client, fences_table, index=writer.index).scoped(SCOPE)
        assert writer.count(srq.chunk_query(SCOPE, "m")) == 3  # really two copies of m#0 stored
        hits = reader.search(KeywordQuery(text="bees"))
        assert sorted(h.chunk.text for h in hits) == ["bees second copy", "bees unchanged"]
        assert reader.search(KeywordQuery(text="first")) == []  # only the replaced copy matches
        assert [h.chunk.text for h in reader.search(hybrid("bees first copy"))].count("bees first copy") == 0
        assert [c.text for c in reader.neighbors("m", 0)] == ["bees second copy", "bees unchanged"]
        assert reader.count("m") == 2
        # and the writer's next read sweeps the older copy away
        assert store.count() == 2
    finally:
        writer.drop()


def test_requests_are_signed_for_aoss_when_the_settings_say_so(
    opensearch_url: str, dynamodb_client: Any, fences_table: str, moto_aws_env: dict[str, str]
) -> None:
    """With ``RAGLINE_OPENSEARCH_AUTH=sigv4`` and ``RAGLINE_OPENSEARCH_SERVICE=aoss`` every request is
    signed for the ``aoss`` service; the stand-in refuses an unsigned one (403) as a collection does."""
    proxy = AossProxy(opensearch_url, refresh_ms=200, require_sigv4=True).start()
    index = f"test-aoss-{uuid.uuid4().hex[:12]}"
    try:
        signed = Settings(opensearch_url=proxy.url, opensearch_auth="sigv4", opensearch_service="aoss")
        p = ServerlessVectorStoreProvider(
            build_client(signed), DynamoFences(fences_table, index, client=dynamodb_client),
            index=index, dimension=DIM, pending=PendingWrites(),
        )  # fmt: skip
        p.scoped(SCOPE).upsert(make_chunks("m", ["signed"]))
        assert p.scoped(SCOPE).count("m") == 1
        unsigned = _provider(proxy, dynamodb_client, fences_table, index=index)
        with pytest.raises(errors.DependencyFailed):
            unsigned.scoped(SCOPE).count("m")
        p.drop()
    finally:
        proxy.stop()


def test_documents_longer_than_a_page_are_read_swept_and_purged_whole(
    aoss: AossProxy, dynamodb_client: Any, fences_table: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A collection has no scroll: listings page with ``search_after`` (pages of 2 here, 10,000 in use)."""
    monkeypatch.setattr(srq, "PAGE", 2)
    p = _provider(aoss, dynamodb_client, fences_table)
    try:
        store = p.scoped(SCOPE)
        store.upsert(make_chunks("long", [f"first version {i}" for i in range(5)]), generation=1)
        assert store.publish("long", generation=1) and store.count("long") == 5
        store.upsert(make_chunks("long", [f"second version {i}" for i in range(3)]), generation=2)
        assert store.publish("long", generation=2)
        assert store.count("long") == 3 and store.count() == 3  # the five of version 1 swept
        assert sorted(store.vectors("long")) == [f"second version {i}" for i in range(3)]
        assert p.purge_tenant("acme") == 3 and store.count() == 0
    finally:
        p.drop()


def test_a_write_overtaken_by_a_newer_version_does_not_stall_its_writers_reads(
    aoss: AossProxy, dynamodb_client: Any, fences_table: str
) -> None:
    """A slow writer's chunks, swept by a newer version's publish before the slow writer read again,
    can never all become searchable: its next read does not wait for them (no reader can see them)."""
    slow = _provider(aoss, dynamodb_client, fences_table, visibility_timeout=3)
    try:
        slow.scoped(SCOPE).upsert(make_chunks("doc", ["slow zero", "slow one", "slow two"]), generation=2)
        aoss.refresh_now()
        fast = _provider(aoss, dynamodb_client, fences_table, index=slow.index)
        fast.scoped(SCOPE).upsert(make_chunks("doc", ["fast"]), generation=3)
        assert fast.scoped(SCOPE).publish("doc", generation=3)
        fast.settle()  # its sweep of the slow writer's chunks is searchable
        assert [c.text for c in slow.scoped(SCOPE).neighbors("doc", 0)] == ["fast"]
    finally:
        slow.drop()


def test_a_pooled_scope_ranks_and_scores_as_alone_on_the_stand_in(
    aoss: AossProxy, dynamodb_client: Any, fences_table: str
) -> None:
    """Per-scope BM25 statistics (``_analyze`` and a size-0 aggregation, both served by a collection)
    in the serverless mode too: the neighbours' term statistics do not move the scope's scores."""
    from tests.contract.test_tenant_relevance import OWN, QUERIES, TENANT, neighbours

    alone = _provider(aoss, dynamodb_client, fences_table)
    pooled = _provider(aoss, dynamodb_client, fences_table)
    try:
        for p in (alone, pooled):
            p.scoped(TENANT).upsert(make_chunks("own", OWN))
        for i, (scope, texts) in enumerate(neighbours()):
            pooled.scoped(scope).upsert(make_chunks(f"n{i}", texts))
        for p in (alone, pooled):
            p.settle()
        assert pooled.scope_stats is not None
        for text in QUERIES:
            want = [(h.chunk.id, h.score) for h in alone.scoped(TENANT).search(KeywordQuery(text=text, k=8))]
            got = [(h.chunk.id, h.score) for h in pooled.scoped(TENANT).search(KeywordQuery(text=text, k=8))]
            assert [c for c, _ in got] == [c for c, _ in want], text
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-5), text
    finally:
        for p in (alone, pooled):
            p.drop()
            p.close()


def test_a_collection_refusing_the_scripted_similarity_still_gets_its_index(
    aoss: AossProxy, dynamodb_client: Any, fences_table: str
) -> None:
    """Whether a collection accepts a scripted similarity is undocumented: refused, the index is made
    without it and keyword search runs on the collection's own BM25 (shard statistics)."""
    aoss.refuse_similarity = True
    p = _provider(aoss, dynamodb_client, fences_table)
    try:
        store = p.scoped(SCOPE)
        store.upsert(make_chunks("manual.md", ["bees buzz", "wasps sting"]))
        p.settle()
        assert p.scope_stats is None
        assert [h.chunk.id for h in store.search(KeywordQuery(text="bees"))] == ["manual.md#0"]
    finally:
        aoss.refuse_similarity = False
        p.drop()
        p.close()
