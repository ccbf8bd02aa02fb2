"""Issue 37 #1, #2, #3, #7, #8: a rebuild keeps every promise the README makes about it — a served
document is never dropped by a switch (also when its newest version failed), an original is read
within the size limit, a delete racing a step does not fail the rebuild, a step delivered twice runs
one chain, and a worker dying at the switch leaves no old generation behind.

Each runs on the embedded backend (SQLite registries and store) and on the AWS one (DynamoDB
registries on moto, one index per model on the OpenSearch node); originals live in a versioned
bucket with S3's rules (:class:`~tests.support.ingest_world.VersionedBucket`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from ragline import errors
from ragline.adapters.embedded.step_queue import InlineStepQueue
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.config import Settings
from ragline.documents.limits import Deadline
from ragline.domain.api import ReindexRequest
from ragline.domain.generations import ReindexStep, storage_scope
from ragline.domain.models import MAX_SEQUENCE_NUMBER, TenantScope
from ragline.services.generation_writer import GenerationWriter, WriterSettings, parse_and_chunk
from ragline.services.generations import Generation, ModelCatalog, Space
from ragline.services.namespaces import new_namespace
from ragline.services.reindex import ReindexService, ReindexSettings
from ragline.wiring import Container
from tests.integration.test_reindex import SHORT, ModelA, ModelB, admin, document
from tests.support.ingest_world import BUCKET, VersionedBucket
from tests.support.vectors import DIM

pytestmark = pytest.mark.integration
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
LIMIT = 4096
"""The document size limit of these worlds (bytes)."""
TO_B = ReindexRequest.model_validate({"embeddingModel": "bow-b", "chunkTokens": SHORT})


class Flaky(ModelA):
    """The served model, whose endpoint fails while ``down`` (a transient outage)."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if self.down:
            raise errors.DependencyFailed("the embedding endpoint is unavailable")
        return super().embed_documents(texts)


class CountingB(ModelB):
    """The new model; counts the texts it embeds and runs ``during`` once, at its first batch."""

    def __init__(self) -> None:
        super().__init__()
        self.embedded = 0
        self.during: Callable[[], None] | None = None

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        hook, self.during = self.during, None
        if hook is not None:
            hook()
        self.embedded += len(texts)
        return super().embed_documents(texts)


class Bucket(VersionedBucket):
    """Records the largest body it returned and can run a hook before a listing (a racing write)."""

    def __init__(self) -> None:
        super().__init__()
        self.largest = 0
        self.before_list: Callable[[str], None] | None = None

    def get(self, key: str, *, version_id: str = "", limit: int | None = None) -> bytes:
        data = super().get(key, version_id=version_id, limit=limit)
        self.largest = max(self.largest, len(data))
        return data

    def list(self, prefix: str) -> list[str]:
        hook, self.before_list = self.before_list, None
        if hook is not None:
            hook(prefix)
        return super().list(prefix)


class World:
    def __init__(self, c: Container, bucket: Bucket, flaky: Flaky, b: CountingB) -> None:
        self.c, self.bucket, self.flaky, self.b = c, bucket, flaky, b
        self.last_step: ReindexStep | None = None

    def key(self, path: str) -> str:
        return f"acme/docs/{path}"

    def deliver(self, message: str) -> list[Any]:
        """One SQS message of S3 events through the ingestion batch; its outcome's error raised."""
        batch = self.c.ingest.batch()
        outcome = batch.notification("m", message)
        batch.finish()
        if outcome.error is not None:
            raise outcome.error
        return outcome.results

    def served(self, generation: int, model: str, document_id: str) -> list[str]:
        space = self.c.catalog.space(model)
        assert space is not None
        store = space.stores.scoped(storage_scope(SCOPE, generation))
        return [ch.text for ch in store.neighbors(document_id, 0, before=0, after=MAX_SEQUENCE_NUMBER)]

    def run_builds(self, service: ReindexService | None = None) -> list[ReindexStep]:
        later = []
        q = self.c.step_queue
        assert isinstance(q, InlineStepQueue)
        while (item := q.take()) is not None:
            step, _delay = item
            if step.kind == "retire":
                later.append(step)
                continue
            self.last_step = step
            (service or self.c.reindex).run(step)
        return later

    def first_step(self) -> ReindexStep:
        """A reindex started, and its first step taken off the queue (the test delivers it)."""
        self.c.reindex.start(admin(), "docs", TO_B)
        q = self.c.step_queue
        assert isinstance(q, InlineStepQueue)
        step, _ = q.steps.pop(0)
        return step

    def view(self) -> Any:
        return self.c.namespaces.get(admin(), "docs")


def _providers(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Any, Any, dict[str, Any]]:
    if kind == "embedded":
        a = SqliteVectorStoreProvider(tmp_path / "store.sqlite", dimension=DIM)
        b = SqliteVectorStoreProvider(tmp_path / "store.sqlite", dimension=DIM)
        return a, b, {}
    from ragline.adapters.aws.documents import DynamoDbDocumentRegistry
    from ragline.adapters.aws.tenants import DynamoDbTenantRegistry
    from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
    from tests.support.cfn_tables import create_table_from_template

    ddb = request.getfixturevalue("dynamodb_client")
    client = build_client(Settings(opensearch_url=request.getfixturevalue("opensearch_url")))
    suffix = uuid.uuid4().hex[:8]
    a = OpenSearchVectorStoreProvider(client, index=f"test-a-{suffix}", dimension=DIM)
    b = OpenSearchVectorStoreProvider(client, index=f"test-b-{suffix}", dimension=DIM)
    parts = {
        "registry": DynamoDbTenantRegistry(
            create_table_from_template(ddb, "TenantsTable", f"t-{suffix}"), client=ddb
        ),
        "documents": DynamoDbDocumentRegistry(
            create_table_from_template(ddb, "DocumentsTable", f"d-{suffix}"), client=ddb
        ),
    }
    return a, b, parts


@pytest.fixture(params=["embedded", pytest.param("aws", marks=pytest.mark.opensearch)])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    flaky, b = Flaky(), CountingB()
    stores_a, stores_b, parts = _providers(request.param, tmp_path, request)
    catalog = ModelCatalog(
        flaky.model_id,
        {flaky.model_id: lambda: Space(flaky, flaky, stores_a), b.model_id: lambda: Space(b, b, stores_b)},
    )
    bucket = Bucket()
    settings = Settings(
        home=tmp_path, reindex_step_documents=3, documents_bucket=BUCKET, max_document_bytes=LIMIT
    )
    c = Container(
        settings, embedder=flaky, tokenizer=flaky, stores=stores_a, catalog=catalog,
        step_queue=InlineStepQueue(), objects=bucket, **parts,
    )  # fmt: skip
    c.tenancy.create_tenant("acme")
    c.registry.create_namespace(new_namespace("acme", "docs", default=True))
    for i in range(6):
        c.ingest.ingest(SCOPE, filename=f"d{i}.txt", data=document(i).encode())
    w = World(c, bucket, flaky, b)
    w.deliver(bucket.upload(w.key("s3.txt"), document(40).encode()))
    yield w
    for provider in (stores_a, stores_b):
        if isinstance(provider, SqliteVectorStoreProvider):
            provider.close()
        else:
            provider.drop()
    c.close()


def expected_b(w: World, document_id: str, text: str) -> list[str]:
    """The chunks the new generation serves for ``text`` (what a fresh write with model b makes)."""
    space = w.c.catalog.space("bow-b")
    assert space is not None
    record = w.c.documents.get("acme", "docs", document_id)
    assert record is not None
    ns = w.c.registry.get_namespace("acme", "docs")
    assert ns.settings.rebuild is not None
    target = Generation(SCOPE, 2, space, ns.settings.rebuild.chunking)
    settings = WriterSettings(max_document_bytes=LIMIT)
    _, chunked = parse_and_chunk(settings, target, record, "x.txt", text.encode(), Deadline(60))
    return [ch.text for ch in chunked.chunks]


# -- #1 a served document whose newest version failed ---------------------------------------------
def _fail_local(w: World) -> tuple[str, str]:
    w.flaky.down = True
    with pytest.raises(errors.DependencyFailed):
        w.c.ingest.ingest(SCOPE, filename="d3.txt", data=b"a brand new version nobody may see")
    w.flaky.down = False
    return "d3.txt", document(3)


def _fail_s3_transient(w: World) -> tuple[str, str]:
    w.flaky.down = True
    with pytest.raises(errors.DependencyFailed):
        w.deliver(w.bucket.upload(w.key("s3.txt"), b"a newer object whose embedding failed"))
    w.flaky.down = False
    return "s3.txt", document(40)


def _fail_s3_sidecar(w: World) -> tuple[str, str]:
    with pytest.raises(errors.InvalidRequest):
        w.deliver(w.bucket.upload(w.key("s3.txt.metadata.json"), b"{not json"))
    return "s3.txt", document(40)


FAILURES = {"local": _fail_local, "s3-transient": _fail_s3_transient, "s3-sidecar": _fail_s3_sidecar}


@pytest.mark.parametrize("when", ["before the rebuild", "during the rebuild"])
@pytest.mark.parametrize("how", list(FAILURES))
def test_a_document_whose_newest_version_failed_is_still_served_after_the_switch(
    world: World, how: str, when: str
) -> None:
    # Given a document serving v0 whose newest version failed (the record says failed, v0 is served)
    w = world
    if when == "before the rebuild":
        document_id, served_text = FAILURES[how](w)
        w.c.reindex.start(admin(), "docs", TO_B)
    else:
        w.c.reindex.start(admin(), "docs", TO_B)
        document_id, served_text = FAILURES[how](w)
    record = w.c.documents.get("acme", "docs", document_id)
    assert record is not None and record.status == "failed"
    assert w.served(1, "bow-test", document_id)  # v0, still served
    # When the rebuild runs to its switch
    w.run_builds()
    # Then the new generation serves the version the record serves (v0), whole
    assert w.view().generation == 2
    assert w.served(2, "bow-b", document_id) == expected_b(w, document_id, served_text)
    after = w.c.documents.get("acme", "docs", document_id)
    assert after is not None and after.status == "failed" and after.chunk_count > 0


# -- #2 originals are read within the size limit --------------------------------------------------
def test_a_rebuild_reads_the_served_version_not_a_newer_object_over_the_limit(world: World) -> None:
    # Given an S3 document served, replaced by an object over the limit whose event is not handled yet
    w = world
    pending = w.bucket.upload(w.key("s3.txt"), b"x " * LIMIT)
    w.bucket.largest = 0
    # When a reindex runs
    w.c.reindex.start(admin(), "docs", TO_B)
    w.run_builds()
    # Then no read went past the limit, the rebuild switched, and the served version is served still
    assert w.bucket.largest <= LIMIT
    view = w.view()
    assert view.generation == 2 and view.rebuild is not None and view.rebuild.state == "ready"
    assert w.served(2, "bow-b", "s3.txt") == expected_b(w, "s3.txt", document(40))
    # and the pending event then refuses the large object: it serves nothing, the record says why
    with pytest.raises(errors.DocumentTooLarge):
        w.deliver(pending)
    assert w.served(2, "bow-b", "s3.txt") == []
    record = w.c.documents.get("acme", "docs", "s3.txt")
    assert record is not None and record.status == "failed" and not record.serves


def test_a_served_version_gone_from_s3_waits_for_its_event_and_is_never_read_past_the_limit(
    world: World,
) -> None:
    # Given the served version deleted from S3 and a current object over the limit, events pending
    w = world
    pending = [w.bucket.upload(w.key("s3.txt"), b"y " * LIMIT), w.bucket.remove_version(w.key("s3.txt"), 0)]
    w.bucket.largest = 0
    # When a reindex runs: its step reads nothing past the limit, writes no other version under the
    # record's, and is retried (the document's change is queued)
    w.c.reindex.start(admin(), "docs", TO_B)
    with pytest.raises(errors.DocumentBusy):
        w.run_builds()
    assert w.bucket.largest <= LIMIT
    assert w.view().generation == 1
    # Then once the events are applied (the object refused: too large), the retried step switches
    for message in pending:
        with pytest.raises(errors.DocumentTooLarge):
            w.deliver(message)
    assert w.last_step is not None
    w.c.reindex.run(w.last_step)  # its message, back
    w.run_builds()
    assert w.view().generation == 2
    assert w.served(2, "bow-b", "s3.txt") == []
    assert all(w.served(2, "bow-b", f"d{i}.txt") for i in range(6))


def test_a_version_deleted_from_s3_is_never_rebuilt_from_another_version_under_its_generation(
    world: World,
) -> None:
    # Given an S3 document at v1, whose v1 was written into the generation being built by its ingest,
    # then deleted by version (S3 serves v0 again; the removal event is queued)
    w = world
    w.c.reindex.start(admin(), "docs", TO_B)
    w.deliver(w.bucket.upload(w.key("s3.txt"), document(41).encode()))
    pending = w.bucket.remove_version(w.key("s3.txt"), -1)
    # When the step meets it, it does not write v0 under v1's generation (a mix of both): it waits
    with pytest.raises(errors.DocumentBusy):
        w.run_builds()
    assert w.served(2, "bow-b", "s3.txt") == expected_b(w, "s3.txt", document(41))
    # and after the event, the new generation serves v0 whole
    w.deliver(pending)
    assert w.last_step is not None
    w.c.reindex.run(w.last_step)  # its message, back
    w.run_builds()
    assert w.view().generation == 2
    assert w.served(2, "bow-b", "s3.txt") == expected_b(w, "s3.txt", document(40))


# -- #3 a delete racing a step --------------------------------------------------------------------
@pytest.mark.parametrize("victim", ["d0.txt", "d1.txt", "d2.txt", "d4.txt"])
def test_deleting_a_text_document_while_a_step_rebuilds_it_does_not_fail_the_rebuild(
    world: World, victim: str
) -> None:
    # Given a rebuild whose step lists the documents, and a delete of one that lands just before the
    # step reads that document's original (after the step listed it as served)
    w = world
    w.c.reindex.start(admin(), "docs", TO_B)
    from ragline.services.originals import original_folder

    folder = original_folder("acme", "docs", victim)

    def delete_first(prefix: str) -> None:
        if prefix == folder:
            w.c.ingest.remove(SCOPE, victim)
        else:
            w.bucket.before_list = delete_first  # not this document's: wait for it

    w.bucket.before_list = delete_first
    # When the steps run
    w.run_builds()
    # Then the rebuild switched, the deleted document serves nothing, every other one serves
    view = w.view()
    assert view.rebuild is not None and (view.rebuild.state, view.generation) == ("ready", 2), view.rebuild
    assert w.served(2, "bow-b", victim) == []
    for i in range(6):
        if f"d{i}.txt" != victim:
            assert w.served(2, "bow-b", f"d{i}.txt"), f"d{i}.txt"


def test_a_text_document_whose_original_was_never_kept_still_fails_the_rebuild_by_name(world: World) -> None:
    # Given a document ingested before originals were kept (its original is missing, nothing raced)
    w = world
    from ragline.services.originals import drop_original

    drop_original(w.bucket, "acme", "docs", "d2.txt")
    # When a reindex runs, then it fails naming the document, and the old generation serves on
    w.c.reindex.start(admin(), "docs", TO_B)
    w.run_builds()
    view = w.view()
    assert view.generation == 1 and view.rebuild is not None and view.rebuild.state == "failed"
    assert "d2.txt" in view.rebuild.error and "not kept" in view.rebuild.error


# -- #7 a step delivered twice ---------------------------------------------------------------------
def _service(w: World, clock: Callable[[], datetime]) -> ReindexService:
    """The world's reindex service on another clock (a second worker, later)."""
    c = w.c
    writer = GenerationWriter(
        registry=c.registry,
        catalog=c.catalog,
        settings=WriterSettings(max_document_bytes=LIMIT),
        ledger=c.ledger,
    )
    return ReindexService(
        registry=c.registry, documents=c.documents, objects=c.objects, catalog=c.catalog, writer=writer,
        queue=c.step_queue, settings=ReindexSettings(step_documents=3), clock=clock,
    )  # fmt: skip


def _texts(w: World) -> int:
    """Texts a full rebuild embeds once: every served document's chunks in the new generation."""
    return sum(len(w.served(2, "bow-b", d)) for d in [*(f"d{i}.txt" for i in range(6)), "s3.txt"])


def test_a_step_delivered_twice_at_once_runs_one_chain(world: World) -> None:
    # Given the first step of a rebuild, and a copy of it delivered while its worker is at work
    w = world
    step = w.first_step()
    busy: list[BaseException] = []

    def copy_beside() -> None:
        try:
            w.c.reindex.run(step)
        except errors.StepBusy as exc:
            busy.append(exc)

    w.b.during = copy_beside
    # When both copies run (the copy backs off), the copy comes back later, and the chain runs
    w.c.reindex.run(step)
    assert len(busy) == 1
    w.c.reindex.run(step)  # the redelivered copy: its step ran already
    w.run_builds()
    # Then one chain ran: the counts add up and every text was embedded once
    view = w.view()
    assert view.rebuild is not None and view.generation == 2
    assert view.rebuild.documents_done == view.rebuild.documents_total == 7
    assert w.b.embedded == _texts(w)


def test_a_step_whose_worker_died_is_taken_over_after_its_lease(world: World) -> None:
    # Given a step whose worker died mid-work (its lease still on the rebuild)
    w = world
    step = w.first_step()

    class Died(BaseException):
        pass

    def die() -> None:
        raise Died

    w.b.during = die
    with pytest.raises(Died):
        w.c.reindex.run(step)
    # When its message comes back before the lease ends, it backs off; after it, it runs
    with pytest.raises(errors.StepBusy):
        w.c.reindex.run(step)
    later = _service(w, lambda: datetime.now(UTC) + timedelta(seconds=ReindexSettings().lease_seconds + 1))
    later.run(step)
    w.run_builds(later)
    # Then the rebuild completes with the right counts
    view = w.view()
    assert view.rebuild is not None and view.generation == 2
    assert view.rebuild.documents_done == view.rebuild.documents_total == 7


# -- #8 a worker dying at the switch ---------------------------------------------------------------
def test_a_worker_dying_right_after_the_switch_leaves_no_old_generation_behind(world: World) -> None:
    # Given a rebuild whose last step's worker dies right after its switch
    w = world
    w.c.reindex.start(admin(), "docs", TO_B)
    q = w.c.step_queue
    assert isinstance(q, InlineStepQueue)
    registry = w.c.registry
    swap = registry.swap_namespace

    class Died(BaseException):
        pass

    def swap_then_die(ns: Any, *, revision: int) -> Any:
        saved = swap(ns, revision=revision)
        if saved is not None and saved.settings.generation == 2:
            raise Died  # the switch is written; the worker is gone
        return saved

    registry.swap_namespace = swap_then_die  # type: ignore[method-assign]
    retire: list[ReindexStep] = []
    try:
        while (item := q.take()) is not None:
            if item[0].kind == "retire":
                retire.append(item[0])
                continue
            try:
                w.c.reindex.run(item[0])
            except Died:
                break
    finally:
        registry.swap_namespace = swap  # type: ignore[method-assign]
    assert w.view().generation == 2
    # When the queued steps run (the redelivered last step, the retire after its delay)
    retire += w.run_builds()
    for r in retire:
        w.c.reindex.run(r)
    # Then the old generation is dropped
    old = w.c.stores.scoped(storage_scope(SCOPE, 1))
    assert all(old.count(f"d{i}.txt") == 0 for i in range(6)) and old.count("s3.txt") == 0


def test_a_step_body_carries_where_it_starts() -> None:
    step = ReindexStep("acme", "docs", 2, after="d2.txt")
    assert ReindexStep.parse(step.body()) == step
    legacy = json.loads(step.body())
    legacy[next(iter(legacy))].pop("after")
    assert ReindexStep.parse(json.dumps(legacy)) == ReindexStep("acme", "docs", 2)


# -- found by the stateful machine (tests/integration/test_ingest_model.py) ---------------------------
def test_a_served_s3_document_whose_object_is_gone_waits_for_its_removal_not_dropped(world: World) -> None:
    # Given a served S3 document whose every version was deleted from S3, its removal event queued
    w = world
    pending = [w.bucket.remove_version(w.key("s3.txt"), 0)]
    # When a reindex runs, it does not switch without it (the record still says it is served)
    w.c.reindex.start(admin(), "docs", TO_B)
    with pytest.raises(errors.DocumentBusy):
        w.run_builds()
    assert w.view().generation == 1 and w.served(1, "bow-test", "s3.txt")
    # Then after the removal is applied, the retried step switches, and the document is gone
    w.deliver(pending[0])
    assert w.last_step is not None
    w.c.reindex.run(w.last_step)
    w.run_builds()
    assert w.view().generation == 2 and w.served(2, "bow-b", "s3.txt") == []


def test_a_rebuild_never_publishes_a_version_still_being_written(world: World) -> None:
    # Given a rebuild, and a write of new text for d3 claimed after it began whose worker died before
    # it wrote anything (its bytes kept, its claim processing)
    w = world
    from ragline.services.originals import keep_original

    w.c.reindex.start(admin(), "docs", TO_B)
    served = w.c.documents.get("acme", "docs", "d3.txt")
    assert served is not None
    data = b"a version nobody finished writing. " + b"it is shorter than the one served."
    kept = keep_original(w.bucket, "acme", "docs", "d3.txt", "d3.txt", data, keep=(served.served_version,))
    claim = w.c.documents.claim(
        "acme", "docs", "d3.txt", None, source="d3.txt", version_id=kept, size=len(data)
    )
    assert claim.granted and claim.record.status == "processing"
    # When the rebuild switches
    w.run_builds()
    # Then the new generation serves what the old one did — the record's served version, at its own
    # generation, never the unfinished one's
    assert w.view().generation == 2
    assert w.served(2, "bow-b", "d3.txt") == expected_b(w, "d3.txt", document(3))
    # and when that claim's worker does write its version there after all, it is served whole
    from ragline.services.generations import serving

    writer = GenerationWriter(
        registry=w.c.registry, catalog=w.c.catalog, settings=WriterSettings(max_document_bytes=LIMIT)
    )
    writer.write(
        serving(w.c.catalog, w.c.registry.get_namespace("acme", "docs")), claim.record, "d3.txt", data
    )
    assert w.served(2, "bow-b", "d3.txt") == expected_b(w, "d3.txt", data.decode())


def test_the_last_step_waits_for_a_write_claimed_before_the_rebuild_began(world: World) -> None:
    # Given a write claimed (its worker at work, its lease live) before the rebuild began
    w = world
    claim = w.c.documents.claim("acme", "docs", "d2.txt", None, source="d2.txt", lease_seconds=330)
    assert claim.granted
    w.c.reindex.start(admin(), "docs", TO_B)
    # When the steps run, the last one waits for it (it may not have seen the rebuild)
    with pytest.raises(errors.DocumentBusy):
        w.run_builds()
    assert w.view().generation == 1
    # Then once that worker settles, the retried step switches with it
    assert w.c.documents.fail(claim.record, "dependency_failed", "the worker gave up")
    assert w.last_step is not None
    w.c.reindex.run(w.last_step)
    w.run_builds()
    assert w.view().generation == 2
    assert w.served(2, "bow-b", "d2.txt") == expected_b(w, "d2.txt", document(2))


def test_a_version_published_after_a_newer_claim_failed_is_what_the_record_says_is_served(
    world: World,
) -> None:
    # Given a new version of d4 written in a batch (its publish deferred), and meanwhile a newer
    # claim of d4 whose own work failed before its publish (the record: failed, serving v0)
    w = world
    batch = w.c.ingest.batch()
    data = " ".join(f"w{i}" for i in range(500)).encode()  # several chunks (d4 served one)
    outcome = batch.ingest("m", SCOPE, filename="d4.txt", data=data, source="d4.txt")
    assert outcome.error is None
    newer = w.c.documents.claim("acme", "docs", "d4.txt", None, source="d4.txt")
    assert w.c.documents.fail(newer.record, "dependency_failed", "the embedder refused")
    # When the batch publishes: its version's fence rises above v0's (nothing newer was published)
    batch.finish()
    # Then the record says which version readers get: the batch's, as this failed record's previous one
    record = w.c.documents.get("acme", "docs", "d4.txt")
    served = [ch.text for ch in w.c.stores.scoped(SCOPE).neighbors("d4.txt", 0, before=0, after=100)]
    assert record is not None and record.status == "failed"
    assert served[0].startswith("w0 ") and record.chunk_count == len(served) > 1
    assert record.indexed_generation < record.generation
    from ragline.domain.api import DocumentView

    assert DocumentView.of(record).serving == "previous_version"


def test_a_served_version_gone_with_no_change_for_an_hour_fails_the_rebuild_by_name(world: World) -> None:
    # Given a served S3 document whose version is gone from S3 and no event came for it (one lost, or
    # an S3 lifecycle expiration, which sends none)
    w = world
    w.bucket.remove_version(w.key("s3.txt"), 0)  # its event never delivered
    # When a reindex runs more than an hour later
    later = _service(w, lambda: datetime.now(UTC) + timedelta(hours=2))
    later.start(admin(), "docs", TO_B)
    w.run_builds(later)
    # Then it does not wait forever: it fails naming the document, and the old generation serves on
    view = w.view()
    assert view.generation == 1 and view.rebuild is not None and view.rebuild.state == "failed"
    assert "s3.txt" in view.rebuild.error and "ingest it again" in view.rebuild.error
