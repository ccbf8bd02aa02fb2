"""Issue 29 #4: reindexing a namespace without downtime — another embedding model and chunking built
beside the served generation, switched atomically, the old one dropped.

The two generations are told apart by what they serve: generation 1 (model ``bow-test``, the
deployment's 200-token chunks) serves each document as one long chunk; generation 2 (model
``bow-b``, 12-token chunks) serves short ones. Every search must answer from exactly one of them.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from ragline import errors
from ragline.adapters.embedded.step_queue import InlineStepQueue
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.config import Settings
from ragline.domain.api import NamespacePatch, ReindexRequest, SearchRequest
from ragline.domain.billing import current_period
from ragline.domain.generations import storage_scope
from ragline.domain.models import TenantScope
from ragline.services.authentication import Principal
from ragline.services.generations import ModelCatalog, Space
from ragline.services.namespaces import change_namespace, new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.vectors import DIM, bow_vector

pytestmark = pytest.mark.integration

SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()
SHORT = 12


class ModelB(BowEmbedder):
    """Another embedding space: the same words land in other buckets."""

    model_id = "bow-b"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.queries = 0

    def embed_query(self, text: str) -> NDArray[np.float32]:
        self.queries += 1
        return np.asarray(bow_vector(_salted(text)), dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if self.fail:
            raise errors.DependencyFailed("the embedding endpoint refused the batch")
        return np.asarray([bow_vector(_salted(t)) for t in texts], dtype=np.float32).reshape(len(texts), DIM)


class ModelA(BowEmbedder):
    def __init__(self) -> None:
        self.queries = 0

    def embed_query(self, text: str) -> NDArray[np.float32]:
        self.queries += 1
        return super().embed_query(text)


def _salted(text: str) -> str:
    return " ".join(f"b{w}" for w in text.split())


def document(i: int) -> str:
    """40 words: one chunk at 200 tokens, several at 12."""
    return " ".join(f"{WORDS[(i + j) % len(WORDS)]}{i if j % 5 == 0 else ''}" for j in range(40))


@pytest.fixture
def c(tmp_path: Path) -> Iterator[Container]:
    a, b = ModelA(), ModelB()
    stores_a = SqliteVectorStoreProvider(tmp_path / "store.sqlite", dimension=DIM)
    stores_b = SqliteVectorStoreProvider(tmp_path / "store.sqlite", dimension=DIM)  # the same file
    catalog = ModelCatalog(
        a.model_id,
        {
            a.model_id: lambda: Space(a, a, stores_a),
            b.model_id: lambda: Space(b, b, stores_b),
            "bow-broken": lambda: Space(_broken(), _broken(), stores_b),
        },
    )
    settings = Settings(home=tmp_path, reindex_step_documents=3)
    container = Container(
        settings, embedder=a, tokenizer=a, stores=stores_a, catalog=catalog, step_queue=InlineStepQueue()
    )
    container.tenancy.create_tenant("acme")
    container.registry.create_namespace(new_namespace("acme", "docs", default=True))
    for i in range(10):
        container.ingest.ingest(SCOPE, filename=f"d{i}.txt", data=document(i).encode())
    yield container
    stores_b.close()
    container.close()


def _broken() -> ModelB:
    broken = ModelB(fail=True)
    broken.model_id = "bow-broken"
    return broken


def admin() -> Principal:
    return Principal(tenant_id="acme", scopes=frozenset({"admin", "search", "ingest"}))


def queue(c: Container) -> InlineStepQueue:
    q = c.step_queue
    assert isinstance(q, InlineStepQueue)
    return q


def run_builds(c: Container) -> list[Any]:
    """Run build steps until none is queued; the delayed steps (retire) are returned, not run."""
    later = []
    while (item := queue(c).take()) is not None:
        step, _delay = item
        if step.kind == "retire":
            later.append(step)
            continue
        c.reindex.run(step)
    return later


def search(c: Container, text: str, k: int = 3) -> list[Any]:
    return c.search.search(admin(), "docs", SearchRequest(query=text, k=k)).hits


def generation_of(hits: list[Any]) -> set[int]:
    return {1 if len(h.text.split()) > SHORT else 2 for h in hits}


def stored(c: Container, model: str, generation: int, document_id: str | None = None) -> int:
    space = c.catalog.space(model)
    assert space is not None
    return space.stores.scoped(storage_scope(SCOPE, generation)).count(document_id)


def test_switching_the_model_under_concurrent_searches_answers_from_one_generation(c: Container) -> None:
    # Given searchers running against the namespace the whole time
    a, b = c.catalog.space("bow-test"), c.catalog.space("bow-b")
    assert a is not None and b is not None
    stop = threading.Event()
    switched = threading.Event()
    after_switch = [threading.Event() for _ in range(4)]
    seen: list[set[int]] = []
    failures: list[BaseException] = []

    def searcher(n: int) -> None:
        while not stop.is_set():
            began_after_switch = switched.is_set()
            try:
                hits = search(c, f"{WORDS[n]} {WORDS[n + 1]}{n}")
            except BaseException as exc:
                failures.append(exc)
                return
            seen.append(generation_of(hits) if hits else set())
            if began_after_switch:
                after_switch[n].set()

    threads = [threading.Thread(target=searcher, args=(n,), daemon=True) for n in range(4)]
    for t in threads:
        t.start()
    try:
        # When the model and chunking change, the rebuild runs step by step, and switches
        patch = {"embeddingModel": "bow-b", "chunkTokens": SHORT, "chunkOverlapTokens": 2}
        c.namespaces.update(admin(), "docs", NamespacePatch.model_validate(patch))
        retire = run_builds(c)
        switched.set()
        for e in after_switch:  # every run bound to the old generation has ended (the retire delay)
            assert e.wait(60)
        queries_a = a.embedder.queries  # type: ignore[attr-defined]
        for step in retire:  # the old generation goes while searches go on
            c.reindex.run(step)
        more = len(seen) + 2 * len(threads)  # searches go on after the drop too
        while len(seen) < more and not failures and all(t.is_alive() for t in threads):
            stop.wait(0.01)
        b_hits = search(c, "alpha bravo")
    finally:
        stop.set()
        for t in threads:
            t.join()
    # Then no search failed, none came back empty, none mixed the generations — and both were seen
    assert failures == []
    assert seen and all(len(g) == 1 for g in seen), [g for g in seen if len(g) != 1][:3]
    assert {next(iter(g)) for g in seen} == {1, 2}
    # the new generation serves, with its own model's query vectors, under the public namespace id
    assert generation_of(b_hits) == {2} and {h.namespace for h in b_hits} == {"docs"}
    assert a.embedder.queries == queries_a and b.embedder.queries > 0  # type: ignore[attr-defined]
    view = c.namespaces.get(admin(), "docs")
    assert (view.generation, view.embedding_model, view.chunk_tokens) == (2, "bow-b", SHORT)
    assert view.rebuild is not None and view.rebuild.state == "ready"
    assert (view.rebuild.documents_done, view.rebuild.documents_total) == (10, 10)
    # and the old generation's chunks are gone
    assert stored(c, "bow-test", 1) == 0 and stored(c, "bow-b", 2) > 10


def test_a_rebuild_is_metered_like_ingestion(c: Container) -> None:
    before = c.ledger.period_ingestion("acme", current_period())
    c.reindex.start(
        admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-b", "chunkTokens": SHORT})
    )
    run_builds(c)
    after = c.ledger.period_ingestion("acme", current_period())
    assert after.documents - before.documents == 10
    assert after.chunks - before.chunks == stored(c, "bow-b", 2)


def served_chunks(c: Container, document_id: str) -> list[Any]:
    ns = c.registry.get_namespace("acme", "docs")
    space = c.catalog.space(ns.settings.embedding_model or "bow-test")
    assert space is not None
    store = space.stores.scoped(storage_scope(SCOPE, ns.settings.generation))
    return store.neighbors(document_id, 0, before=0, after=10_000)


def test_a_rebuild_switches_the_namespace_between_the_three_chunking_strategies(c: Container) -> None:
    # Given a namespace served fixed (the deployment's), and a document that drifts over three topics
    topics = ["pump valve prime pressure hose seal", "invoice payment receipt ledger refund tax",
              "badge door visitor escort lobby lanyard"]  # fmt: skip
    text = " ".join(f"{topics[t].capitalize()} n{t}x{i}." for t in range(3) for i in range(6))
    c.ingest.ingest(SCOPE, filename="drift.txt", data=text.encode())
    before = c.ledger.period_ingestion("acme", current_period())

    def switch(patch: dict[str, object]) -> list[Any]:
        c.namespaces.update(admin(), "docs", NamespacePatch.model_validate(patch))
        for step in run_builds(c):
            c.reindex.run(step)
        return served_chunks(c, "drift.txt")

    # When it is switched to hierarchical, 8-word chunks in 24-word parents
    hierarchical = switch({"chunking": "hierarchical", "chunkTokens": 8, "chunkOverlapTokens": 0,
                           "parentChunkTokens": 24})  # fmt: skip
    # Then the new generation serves chunks of at most 8 words, each carrying its whole parent
    view = c.namespaces.get(admin(), "docs")
    assert (view.generation, view.chunking, view.chunk_tokens, view.parent_chunk_tokens) == (
        2,
        "hierarchical",
        8,
        24,
    )
    assert hierarchical and all(len(h.text.split()) <= 8 for h in hierarchical)
    parents = list(dict.fromkeys(h.metadata.wider_text for h in hierarchical))
    assert " ".join(parents) == text and all(len(p.split()) <= 24 for p in parents)

    # When it is switched to semantic with room for 8 sentences a chunk
    semantic = switch({"chunking": "semantic", "chunkTokens": 56, "parentChunkTokens": 0})
    # Then each served chunk holds one topic, in order, and the sentences embedded were metered
    view = c.namespaces.get(admin(), "docs")
    assert (view.generation, view.chunking, view.chunk_tokens) == (3, "semantic", 56)
    assert [{t for t in range(3) if f" n{t}x" in h.text} for h in semantic] == [{0}, {1}, {2}]
    after = c.ledger.period_ingestion("acme", current_period())
    sentence_tokens = len(text.split())
    assert after.embedded_tokens - before.embedded_tokens >= sentence_tokens

    # When it is switched back to the deployment's chunking (fixed)
    fixed = switch({"chunking": "", "chunkTokens": 56})
    # Then its chunks have a sentence window again, and cut across the topics
    assert c.namespaces.get(admin(), "docs").chunking == ""
    assert fixed[0].text in fixed[0].metadata.wider_text and len(fixed[0].metadata.wider_text) > len(
        fixed[0].text
    )
    assert any(len({t for t in range(3) if f" n{t}x" in h.text}) > 1 for h in fixed)


def test_a_parent_smaller_than_the_chunks_is_refused_before_any_rebuild(c: Container) -> None:
    with pytest.raises(errors.InvalidRequest, match="parentChunkTokens"):
        c.reindex.start(
            admin(), "docs",
            ReindexRequest.model_validate(
                {"chunking": "hierarchical", "chunkTokens": 100, "parentChunkTokens": 50}
            ),
        )  # fmt: skip
    assert c.namespaces.get(admin(), "docs").rebuild is None


def test_a_failed_rebuild_leaves_the_old_generation_serving_and_says_why(c: Container) -> None:
    # Given a rebuild whose model's endpoint refuses every batch
    c.reindex.start(admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-broken"}))
    run_builds(c)
    # Then the namespace still serves generation 1 with its model, and the rebuild says why it failed
    view = c.namespaces.get(admin(), "docs")
    assert (view.generation, view.embedding_model) == (1, "bow-test")
    assert view.rebuild is not None and view.rebuild.state == "failed"
    assert "refused the batch" in view.rebuild.error
    hits = search(c, "alpha bravo")
    assert hits and generation_of(hits) == {1}
    assert stored(c, "bow-broken", 2) == 0  # what it built is dropped
    # and a new reindex may start after it
    c.reindex.start(admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-b"}))
    run_builds(c)
    assert c.namespaces.get(admin(), "docs").generation == 3


def test_a_second_reindex_while_one_builds_is_refused(c: Container) -> None:
    c.reindex.start(admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-b"}))
    with pytest.raises(errors.Conflict):
        c.reindex.start(admin(), "docs", ReindexRequest.model_validate({"chunkTokens": SHORT}))
    with pytest.raises(errors.Conflict):  # nor does a PATCH change anything else meanwhile
        c.namespaces.update(
            admin(), "docs", NamespacePatch.model_validate({"description": "x", "chunkTokens": SHORT})
        )
    assert c.namespaces.get(admin(), "docs").description == ""


def test_a_build_that_lost_its_steps_is_replaced_by_a_new_reindex(c: Container) -> None:
    # Given a build whose steps were lost an hour ago (a crashed worker, a message in the DLQ)
    c.reindex.start(admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-b"}))
    queue(c).steps.clear()
    ns = c.registry.get_namespace("acme", "docs")
    assert ns.settings.rebuild is not None
    lost = ns.settings.rebuild.model_copy(
        update={"started_at": ns.settings.rebuild.started_at - timedelta(hours=2)}
    )
    change_namespace(
        c.registry,
        ns,
        lambda n: n.model_copy(update={"settings": n.settings.model_copy(update={"rebuild": lost})}),
    )
    # When a new reindex is asked for, it replaces it (no 409 forever) and completes
    c.reindex.start(
        admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-b", "chunkTokens": SHORT})
    )
    run_builds(c)
    view = c.namespaces.get(admin(), "docs")
    assert (view.generation, view.embedding_model, view.chunk_tokens) == (3, "bow-b", SHORT)


def test_progress_shows_on_the_namespace_while_it_builds(c: Container) -> None:
    view = c.namespaces.update(admin(), "docs", NamespacePatch.model_validate({"embeddingModel": "bow-b"}))
    assert view.rebuild is not None and view.rebuild.state == "building"
    assert (view.rebuild.documents_done, view.rebuild.documents_total, view.generation) == (0, 10, 1)
    step, _ = queue(c).take() or (None, 0)
    assert step is not None
    c.reindex.run(step)
    view = c.namespaces.get(admin(), "docs")
    assert view.rebuild is not None and (view.rebuild.documents_done, view.generation) == (3, 1)


def test_documents_written_and_deleted_during_the_rebuild_are_right_after_the_switch(c: Container) -> None:
    c.reindex.start(
        admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-b", "chunkTokens": SHORT})
    )
    step, _ = queue(c).take() or (None, 0)
    assert step is not None
    c.reindex.run(step)  # d0, d1, d2 rebuilt
    # When, meanwhile, a document is added, one rebuilt and one not yet rebuilt are deleted, one changed
    c.ingest.ingest(SCOPE, filename="late.txt", data=b"zulu yankee xray whiskey victor")
    assert stored(c, "bow-b", 2, "late.txt") > 0  # written to the generation being built at once
    c.ingest.remove(SCOPE, "d0.txt")
    c.ingest.remove(SCOPE, "d5.txt")
    c.ingest.ingest(SCOPE, filename="d1.txt", data=b"uniform tango sierra romeo")
    run_builds(c)
    # Then the new generation serves exactly the documents as they are now
    view = c.namespaces.get(admin(), "docs")
    assert view.generation == 2
    docs = {
        h.document_id
        for h in c.search.search(admin(), "docs", SearchRequest(query="alpha", k=100, mode="keyword")).hits
    }
    assert "d0.txt" not in docs and "d5.txt" not in docs
    late = search(c, "zulu yankee")
    assert late and late[0].document_id == "late.txt"
    d1 = [h.text for h in search(c, "uniform tango", k=100) if h.document_id == "d1.txt"]
    assert d1 == ["uniform tango sierra romeo"]


def test_a_write_that_did_not_see_the_rebuild_is_redone_before_the_switch(
    c: Container, tmp_path: Path
) -> None:
    # Given a worker of another process that read the namespace before the rebuild began: it writes
    # only the generation it knew (its catalog cannot build the new one)
    a = c.catalog.space("bow-test")
    assert a is not None
    other = Container(
        c.settings,
        embedder=a.embedder,
        tokenizer=a.tokenizer,
        stores=a.stores,
        catalog=ModelCatalog("bow-test", {"bow-test": lambda: a}),
    )
    c.reindex.start(
        admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-b", "chunkTokens": SHORT})
    )
    step, _ = queue(c).take() or (None, 0)
    assert step is not None
    c.reindex.run(step)  # past the first documents in id order
    other.ingest.ingest(SCOPE, filename="a-quiet.txt", data=b"papa quebec oscar november")
    assert stored(c, "bow-b", 2, "a-quiet.txt") == 0
    # When the rebuild ends
    run_builds(c)
    # Then the document is in the new generation all the same
    hits = search(c, "papa quebec")
    assert hits and hits[0].document_id == "a-quiet.txt"


def test_a_namespace_of_a_model_the_deployment_cannot_embed_with_is_refused_not_mixed(
    c: Container,
) -> None:
    # Given a namespace whose vectors were made by a model the deployment no longer has (same dimension)
    ns = c.registry.get_namespace("acme", "docs")
    settings = ns.settings.model_copy(update={"embedding_model": "retired-model"})
    c.registry.update_namespace(ns.model_copy(update={"settings": settings}))
    # Then searching it and ingesting into it are refused with the mismatch, never served or mixed
    with pytest.raises(errors.EmbeddingMismatch):
        search(c, "alpha")
    with pytest.raises(errors.EmbeddingMismatch):
        c.ingest.ingest(SCOPE, filename="new.txt", data=b"alpha bravo")
    # and a reindex with a model the deployment has makes it usable again
    c.reindex.start(admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-test"}))
    run_builds(c)
    assert search(c, "alpha")


@pytest.mark.parametrize("kind", ["sqlite", "dynamodb"])
def test_namespace_writes_are_conditional_on_the_revision_read(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from ragline.adapters.aws.tenants import DynamoDbTenantRegistry
    from ragline.adapters.embedded.tenants import SqliteTenantRegistry
    from tests.support.cfn_tables import create_table_from_template

    if kind == "dynamodb":
        client = request.getfixturevalue("dynamodb_client")
        table = create_table_from_template(client, "TenantsTable", f"tenants-{uuid.uuid4().hex}")
        registry: Any = DynamoDbTenantRegistry(table, client=client)
    else:
        registry = SqliteTenantRegistry(tmp_path / "t.sqlite")
    registry.create_namespace(new_namespace("acme", "docs"))
    read = registry.get_namespace("acme", "docs")
    first = registry.swap_namespace(read.model_copy(update={"description": "first"}), revision=read.revision)
    assert first is not None and first.revision == read.revision + 1
    # a writer holding the older read loses, and changes nothing
    assert (
        registry.swap_namespace(read.model_copy(update={"description": "late"}), revision=read.revision)
        is None
    )
    assert registry.get_namespace("acme", "docs").description == "first"
    with pytest.raises(errors.NamespaceNotFound):
        registry.swap_namespace(new_namespace("acme", "ghost"), revision=0)


def test_a_settings_write_made_from_a_read_before_the_switch_does_not_undo_it(c: Container) -> None:
    # Given a writer that read the namespace before a reindex switched it
    stale = c.registry.get_namespace("acme", "docs")
    c.reindex.start(admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-b"}))
    run_builds(c)
    # When it writes its change
    change_namespace(c.registry, stale, lambda ns: ns.model_copy(update={"description": "manuals"}))
    # Then its change is applied to the switched namespace, which still serves the new generation
    now = c.registry.get_namespace("acme", "docs")
    assert (now.description, now.settings.generation, now.settings.embedding_model) == ("manuals", 2, "bow-b")


def test_a_version_rejected_during_the_rebuild_serves_nothing_after_the_switch(c: Container) -> None:
    c.reindex.start(
        admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-b", "chunkTokens": SHORT})
    )
    step, _ = queue(c).take() or (None, 0)
    assert step is not None
    c.reindex.run(step)  # d0, d1, d2 rebuilt
    # When a new version of d1 cannot be indexed (empty): it serves nothing any more
    with pytest.raises(errors.EmptyDocument):
        c.ingest.ingest(SCOPE, filename="d1.txt", data=b"   ")
    run_builds(c)
    # Then after the switch d1 serves nothing either
    assert c.namespaces.get(admin(), "docs").generation == 2
    hits = c.search.search(admin(), "docs", SearchRequest(query="alpha1 bravo", k=100, mode="keyword")).hits
    assert "d1.txt" not in {h.document_id for h in hits} and hits


def test_new_labels_given_during_the_rebuild_are_on_the_new_generation(c: Container) -> None:
    from ragline.domain.document_metadata import MetadataInput

    c.reindex.start(
        admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-b", "chunkTokens": SHORT})
    )
    step, _ = queue(c).take() or (None, 0)
    assert step is not None
    c.reindex.run(step)  # d0, d1, d2 rebuilt, with no readers
    # When d1 is restricted to one group while the rebuild goes on
    c.ingest.relabel(SCOPE, "d1.txt", MetadataInput(groups=["hr"]))
    b = c.catalog.space("bow-b")
    assert b is not None
    new = b.stores.scoped(storage_scope(SCOPE, 2)).neighbors("d1.txt", 0, before=0, after=100)
    # Then the generation being built carries the restriction already (it serves it after the switch)
    assert new and all(ch.metadata.readers == ("g:hr",) for ch in new)


def test_a_rebuilt_document_keeps_its_metadata_and_readers(c: Container) -> None:
    from ragline.domain.document_metadata import MetadataInput

    labels = MetadataInput(attributes={"team": "people"}, groups=["hr"])
    c.ingest.ingest(SCOPE, filename="leave.txt", data=b"parental leave policy", metadata=labels)
    c.reindex.start(admin(), "docs", ReindexRequest.model_validate({"embeddingModel": "bow-b"}))
    run_builds(c)
    b = c.catalog.space("bow-b")
    assert b is not None
    new = b.stores.scoped(storage_scope(SCOPE, 2)).neighbors("leave.txt", 0, before=0, after=100)
    assert new and all(
        (ch.metadata.attributes, ch.metadata.readers) == ({"team": "people"}, ("g:hr",)) for ch in new
    )
