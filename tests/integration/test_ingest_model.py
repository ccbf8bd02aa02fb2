"""Model-based test of the ingest pipeline: whatever the interleaving, the store serves what S3 serves.

Hypothesis drives a versioned bucket and the ingestion workers at random: uploads, overwrites, deletes
(delete markers), deletes of one version (current or not, a delete marker included: an undelete),
out-of-order delivery, redeliveries, workers advanced one checkpoint at a time (slow workers) and
workers killed at a checkpoint (their message comes back, as SQS does after the visibility timeout).
At every step a reader gets each document as one whole version or nothing (a reader during a
re-index, a worker dead between its write and its publish). At every quiescent point — the queue
drained, no worker running — the store must hold exactly the chunks of the objects S3 currently
serves: none lost, stale, duplicated or resurrected; each record says the same. Runs on the SQLite
store and on the OpenSearch node.

Issue 37 adds, in the same machine: rebuilds (a reindex to another chunk size started at any point, its
steps run one at a time, delivered twice or beside a copy of themselves), S3 metadata sidecars written
(valid or malformed) and deleted, deletes through the API (a text document's ``remove``, concurrent
ones included; an S3 document's object and sidecar removed from S3), and SQS batches whose publish
the store refuses for some documents. Its promises, checked where they must hold:

1. every document served before a rebuild's switch is still served after it (checked right after
   each step that switched);
2. one change → one event id, however often delivered (:class:`~tests.support.rebuild_world.Changes`,
   at every step);
3. a record never contradicts what is served: at every step a settled record serves what the store
   serves, chunk for chunk, and at quiescent points what S3 (or the API) last wrote, chunked as the
   namespace's *served* generation chunks.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable
from functools import cache
from pathlib import Path
from urllib.parse import unquote_plus

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from ragline import errors
from ragline.adapters.embedded.documents import SqliteDocumentRegistry
from ragline.adapters.embedded.step_queue import InlineStepQueue
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.documents.chunker import chunk_document
from ragline.documents.parsers import parse_document
from ragline.domain.api import ReindexRequest
from ragline.domain.document_metadata import SIDECAR_SUFFIX, document_of, is_sidecar, parse_sidecar
from ragline.domain.documents import document_id_for, normalise_sequencer
from ragline.domain.generations import ReindexStep, storage_scope
from ragline.domain.models import KeywordQuery, TenantScope
from ragline.domain.s3_events import object_key_of
from ragline.ports import VectorStore, VectorStoreProvider
from ragline.services.authentication import Principal
from ragline.services.events import Announcer, AnnouncingDocuments
from ragline.services.generation_writer import GenerationWriter
from ragline.services.generations import ModelCatalog, serving
from ragline.services.ingest import IngestService, IngestSettings
from ragline.services.namespaces import new_namespace
from ragline.services.reindex import ReindexService, ReindexSettings
from tests.support.clock import ManualClock
from tests.support.fakes import BowEmbedder
from tests.support.ingest_world import VersionedBucket, Worker, Workers, served_texts
from tests.support.rebuild_world import Changes, Recorder, RefusingStores

pytestmark = pytest.mark.integration
CHUNKING = IngestSettings(chunk_tokens=12, chunk_overlap_tokens=0)
PATHS = ["a b.txt", "a_b.txt", "docs//x.md", "docs/x.md"]
"""Pairs of keys that used to collapse onto one document id (few keys: versions of one key meet often)."""
VERSIONS = [
    "\n\n".join(
        f"# Part {i}\n\nVariant {tag} paragraph {i} says enough words here." for i in range(n)
    ).encode()
    for tag, n in (("alpha", 1), ("beta", 3), ("gamma", 7), ("delta", 12))
]
STEPS = {"sqlite": 0, "opensearch": 0}
# Hypothesis favours the first choice of a sampled_from (its "simplest"): put the dangerous ones first —
# a slow worker holding a long version, mid-way into its work, raced by a short version or a delete.
LONG_FIRST = st.sampled_from(range(len(VERSIONS) - 1, -1, -1))
SHORT_FIRST = st.sampled_from([0, -1, *range(1, len(VERSIONS))])
STEPS_INTO_THE_WORK = st.sampled_from([2, 3, 4, 1, 0, 5])
REBUILD_SIZES = [30, CHUNKING.chunk_tokens]
"""Chunk sizes a reindex rebuilds with (the same model, forced: every document is rebuilt)."""
SIDECARS = [
    b"{not json",
    b'{"metadataAttributes": {"team": "blue"}}',
    b'{"metadataAttributes": {"team": "red"}}',
]
"""A malformed sidecar first (Hypothesis' favourite), then two valid ones."""
BAD_INPUT_RECEIVES = 3
"""A message failing with a bad input (a malformed sidecar) this often goes to the dead-letter queue."""
OPERATOR = Principal.operator("acme")


@cache
def expected_texts(path: str, data: bytes, chunk_tokens: int = CHUNKING.chunk_tokens) -> list[str]:
    name = path.rsplit("/", 1)[-1]
    parsed = parse_document(name, data, max_bytes=CHUNKING.max_document_bytes)
    chunks = chunk_document(
        parsed,
        document_id=document_id_for(path),
        tokenizer=BowEmbedder(),
        chunk_tokens=chunk_tokens,
        overlap_tokens=CHUNKING.chunk_overlap_tokens,
        filename=name,
        source=name,
    )
    return [c.text for c in chunks]


@cache
def whole_versions(path: str, chunk_tokens: int) -> set[tuple[str, ...]]:
    return {tuple(expected_texts(path, v, chunk_tokens)) for v in VERSIONS}


def sidecar_attributes(data: bytes | None) -> dict[str, object] | None:
    """What a sidecar gives its document (``{}``: none), or None when it is malformed."""
    if data is None:
        return {}
    try:
        return dict(parse_sidecar(data).attributes)
    except errors.RaglineError:
        return None


class IngestModel(RuleBasedStateMachine):
    provider: VectorStoreProvider
    home: Path
    kind: str

    def __init__(self) -> None:
        super().__init__()
        ns = f"ns{uuid.uuid4().hex[:10]}"
        self.scope = TenantScope(tenant_id="acme", namespace_id=ns)
        self.registry = SqliteTenantRegistry(self.home / f"{ns}-t.sqlite")
        self.registry.create_namespace(new_namespace("acme", ns))
        self.bucket = VersionedBucket()
        self.workers = Workers()
        self.clock = ManualClock()
        self.documents = SqliteDocumentRegistry(self.home / f"{ns}-d.sqlite", clock=self.clock)
        self.recorder = Recorder(self.workers)
        self.changes = Changes(self.recorder)
        announcer = Announcer(self.recorder)
        announcing = AnnouncingDocuments(self.documents, announcer)
        self.refusing = RefusingStores(self.provider)
        embedder = self.workers.embedder(BowEmbedder())
        stores = self.workers.stores(self.refusing)  # type: ignore[arg-type]
        catalog = ModelCatalog.of(embedder, stores, BowEmbedder())
        self.catalog = catalog
        self.service = IngestService(
            registry=self.registry,
            documents=self.workers.documents(announcing),  # type: ignore[arg-type]
            stores=stores,
            embedder=embedder,
            tokenizer=BowEmbedder(),
            settings=CHUNKING,
            objects=self.workers.objects(self.bucket),
            bucket=self.bucket.name,
            catalog=catalog,
            announcer=announcer,
        )
        self.steps = InlineStepQueue()
        self.reindex = ReindexService(
            registry=self.registry,
            documents=announcing,  # type: ignore[arg-type]
            objects=self.bucket,
            catalog=catalog,
            writer=GenerationWriter(registry=self.registry, catalog=catalog, settings=CHUNKING),
            queue=self.steps,
            settings=ReindexSettings(step_documents=2, retire_seconds=0.0),
            announcer=announcer,
            clock=self.clock,
        )
        self.queue: list[str] = []
        self.rechunked = False
        """Whether a switch changed the chunk size: records count their chunks as they were indexed."""
        self.sent: list[str] = []
        self.receives: dict[str, int] = {}
        self.api_calls = 0
        self.api_text: dict[str, tuple[bytes | None, str]] = {}
        """Per path, the last API text written (None: deleted through the API) and the S3 order
        stored when it was written."""

    def key(self, path: str) -> str:
        return f"acme/{self.scope.namespace_id}/{path}"

    def send(self, message: str) -> None:
        self.queue.append(message)
        self.sent.append(message)

    @property
    def store(self) -> VectorStore:
        """What readers read: the namespace's served generation."""
        return self.served()[0]

    def served(self) -> tuple[VectorStore, int]:
        """The served generation's store and its chunk size."""
        ns = self.registry.get_namespace("acme", self.scope.namespace_id)
        size = serving(self.catalog, ns).chunk_plan(CHUNKING.chunking).chunk_tokens
        return self.provider.scoped(storage_scope(self.scope, ns.settings.generation)), size

    def settle(self, worker_done: bool, outcome: str, message: str) -> None:
        """A worker that died or failed leaves its message on the queue (SQS redelivers it). A dead
        worker's message comes back after the visibility timeout, by when its claim's lease is over.
        A message failing with a bad input again and again goes to the dead-letter queue."""
        if message.startswith(("api", "step:")):
            return  # an API caller got its answer; a rebuild step's copy is re-queued by its rule
        if worker_done and outcome == "failed:invalid_request":
            self.receives[message] = self.receives.get(message, 0) + 1
            if self.receives[message] >= BAD_INPUT_RECEIVES:
                return
        if worker_done and outcome != "ok":
            self.queue.append(message)
        if worker_done and outcome == "crashed":
            self.clock.advance(CHUNKING.claim_lease_seconds)

    def expected_data(self, path: str) -> bytes | None:
        """What the name serves: the current S3 object, or the API's last write when no S3 event of
        the key came after it."""
        data = self.bucket.current(self.key(path))
        if path in self.api_text and not self.s3_spoke_after(path, self.api_text[path][1]):
            data = self.api_text[path][0]  # the last writer of the name is the API
        return data

    def api(self, call: Callable[[], object]) -> None:
        """One API call of the test thread: its announcements are its own unit."""
        self.api_calls += 1
        self.recorder.unit = f"api:{self.api_calls}"
        try:
            call()
        finally:
            self.recorder.unit = ""

    # -- what S3 users do -----------------------------------------------------------------------
    @rule(path=st.sampled_from(PATHS), version=LONG_FIRST)
    def upload(self, path: str, version: int) -> None:
        STEPS[self.kind] += 1
        self.send(self.bucket.upload(self.key(path), VERSIONS[version]))

    @rule(path=st.sampled_from(PATHS))
    def delete(self, path: str) -> None:
        STEPS[self.kind] += 1
        if self.key(path) in self.bucket.versions:
            self.send(self.bucket.remove(self.key(path)))

    @rule(path=st.sampled_from(PATHS), index=st.integers(-3, 3))
    def delete_version(self, path: str, index: int) -> None:
        STEPS[self.kind] += 1
        if self.key(path) in self.bucket.versions:
            self.send(self.bucket.remove_version(self.key(path), index))

    @rule(path=st.sampled_from(PATHS), version=SHORT_FIRST)
    def write_api_text(self, path: str, version: int) -> None:
        """Text sent through the API under the key's name: the same document, written now."""
        STEPS[self.kind] += 1
        data = VERSIONS[max(version, 0)]
        doc = document_id_for(path)
        self.api(
            lambda: self.service.ingest(
                self.scope, filename=path.rsplit("/", 1)[-1], data=data, document_id=doc, source="api:"
            )
        )
        record = self.documents.get("acme", self.scope.namespace_id, doc)
        assert record is not None and record.origin == "local"
        self.api_text[path] = (data, record.sequencer)

    # -- what SQS and Lambda do -----------------------------------------------------------------
    @precondition(lambda self: self.queue)
    @rule(
        pick=st.integers(0, 50),
        mode=st.sampled_from(["race", "park", "fast"]),
        steps=STEPS_INTO_THE_WORK,
        version=SHORT_FIRST,
        then_check=st.booleans(),
    )
    def deliver(self, pick: int, mode: str, steps: int, version: int, then_check: bool) -> None:
        """Any queued message, not the oldest (SQS standard queues do not keep order), to a worker
        that runs to its end (``fast``), waits at its first checkpoint (``park``), or is raced."""
        STEPS[self.kind] += 1
        message = self.queue.pop(pick % len(self.queue))
        worker = self.workers.start(self.service.handle_notification, message)
        if mode == "fast":
            self.settle(True, self.workers.finish(worker), message)
        elif mode == "race":
            self.race(worker, steps, version, then_check)

    @precondition(lambda self: self.workers.running)
    @rule(pick=st.integers(0, 50), first_claims=st.booleans(), fast=st.booleans())
    def deliver_a_copy_beside_its_worker(self, pick: int, first_claims: bool, fast: bool) -> None:
        """SQS delivers a copy of a message whose worker is still at work (at-least-once delivery),
        maybe once that worker has made its claim; the copy runs to its end, or waits at its first
        checkpoint."""
        STEPS[self.kind] += 1
        running = self.workers.running
        if running:
            first = running[pick % len(running)]
            if first_claims and not first.claims:
                self.workers.step(first)
                self.settle(first.done, first.outcome, first.message)
            copy = self.workers.start(self.service.handle_notification, first.message)
            if fast:
                self.settle(True, self.workers.finish(copy), first.message)

    @precondition(lambda self: self.sent)
    @rule(pick=st.integers(0, 50))
    def redeliver(self, pick: int) -> None:
        STEPS[self.kind] += 1
        if self.sent:
            self.queue.append(self.sent[pick % len(self.sent)])

    @precondition(lambda self: self.workers.running)
    @rule(pick=st.integers(0, 50), steps=st.integers(1, 4), crash=st.booleans())
    def advance(self, pick: int, steps: int, crash: bool) -> None:
        """Move one worker a few checkpoints on, and maybe kill it where it then stands."""
        STEPS[self.kind] += 1
        running = self.workers.running
        if running:
            worker = running[pick % len(running)]
            for _ in range(steps):
                if not worker.done:
                    self.workers.step(worker)
            if crash and not worker.done:
                self.workers.step(worker, crash=True)
            self.settle(worker.done, worker.outcome, worker.message)

    @rule(path=st.sampled_from(PATHS), version=SHORT_FIRST, crash=st.booleans())
    def reindex_stopped_before_publish(self, path: str, version: int, crash: bool) -> None:
        """A new version of a key, its worker stopped between its write and its publish (readers look
        there: the invariants run after every rule), and maybe killed there."""
        STEPS[self.kind] += 1
        message = self.bucket.upload(self.key(path), VERSIONS[version])
        self.sent.append(message)
        worker = self.workers.start(self.service.handle_notification, message)
        while not worker.done and worker.at != "publish":
            self.workers.step(worker)
        if crash and not worker.done:
            self.workers.step(worker, crash=True)
        self.settle(worker.done, worker.outcome, message)

    @precondition(lambda self: self.workers.running)
    @rule(
        pick=st.integers(0, 50),
        steps=STEPS_INTO_THE_WORK,
        version=SHORT_FIRST,
        then_check=st.booleans(),
    )
    def race_a_running_worker(self, pick: int, steps: int, version: int, then_check: bool) -> None:
        STEPS[self.kind] += 1
        running = self.workers.running
        self.race(running[pick % len(running)], steps, version, then_check)

    def race(self, slow: Worker, steps: int, version: int, then_check: bool) -> None:
        """The shape of every reproduced race: a worker gets ``steps`` checkpoints on, then its key is
        overwritten (``version`` ≥ 0) or deleted (-1) and that newer event is indexed at once by a
        fast worker, while the first one waits where it stands; maybe check at once (a later
        version of the key would sweep what the race left, hiding it)."""
        for _ in range(steps):
            if not slow.done:
                self.workers.step(slow)
        self.settle(slow.done, slow.outcome, slow.message)
        record = json.loads(slow.message)["Records"][0]
        key = unquote_plus(record["s3"]["object"]["key"])
        if version < 0 and key not in self.bucket.versions:
            return
        message = self.bucket.upload(key, VERSIONS[version]) if version >= 0 else self.bucket.remove(key)
        self.sent.append(message)
        fast = self.workers.start(self.service.handle_notification, message)
        self.settle(True, self.workers.finish(fast), message)
        if then_check:
            self.quiesce()

    @rule()
    def quiesce(self) -> None:
        STEPS[self.kind] += 1
        self.drain()
        self.check()

    # -- issue 37: sidecars, API deletes, batches, rebuilds ---------------------------------------
    @rule(path=st.sampled_from(PATHS), body=st.sampled_from(range(len(SIDECARS))))
    def write_sidecar(self, path: str, body: int) -> None:
        """``<key>.metadata.json`` written (valid, or malformed: the document's next version fails
        and its last good one stays served)."""
        STEPS[self.kind] += 1
        self.send(self.bucket.upload(self.key(path) + SIDECAR_SUFFIX, SIDECARS[body]))

    @rule(path=st.sampled_from(PATHS))
    def delete_sidecar(self, path: str) -> None:
        STEPS[self.kind] += 1
        if self.bucket.current(self.key(path) + SIDECAR_SUFFIX) is not None:
            self.send(self.bucket.remove(self.key(path) + SIDECAR_SUFFIX))

    @rule(
        path=st.sampled_from(PATHS),
        concurrently=st.sampled_from([None, "both-claim", "one-by-one"]),
        sidecar_first=st.booleans(),
    )
    def delete_through_the_api(self, path: str, concurrently: str | None, sidecar_first: bool) -> None:
        """``DELETE /documents/{id}`` as the document service does it: an S3 document's object and
        sidecar are deleted from S3 (their events do the rest, in either order); a text document is
        removed — maybe by two callers at once, each of whom is told it is deleted (issue 37 #5)."""
        STEPS[self.kind] += 1
        doc = document_id_for(path)
        record = self.documents.get("acme", self.scope.namespace_id, doc)
        if record is None or record.status == "deleted":
            return  # the API answers "deleted" again: no new version, no event
        key = object_key_of(record.source)
        if key is not None:

            def remove_from_s3() -> None:
                removals = [self.bucket.remove(key), self.bucket.remove(key + SIDECAR_SUFFIX)]
                for message in reversed(removals) if sidecar_first else removals:
                    self.send(message)

            remove_from_s3()
            return
        self.remove_text(path, concurrently)

    def remove_text(self, path: str, concurrently: str | None) -> None:
        """Two callers found the document not deleted yet; both claim before either publishes, or
        one runs to its end before the other claims."""
        doc = document_id_for(path)
        if concurrently:
            self.api_calls += 1
            run = lambda _: self.service.remove(self.scope, doc)  # noqa: E731
            callers = [self.workers.start(run, f"api-delete:{self.api_calls}:{n}") for n in "ab"]
            if concurrently == "both-claim":
                for caller in callers:
                    self.workers.step(caller)
            for caller in callers:
                self.workers.finish(caller)
            outcomes = [c.outcome for c in callers]
            assert "failed:superseded" not in outcomes, (
                f"{path}: two API deletes of one document, a caller told {outcomes} though it is deleted"
            )
        else:
            self.api(lambda: self.service.remove(self.scope, doc))
        record = self.documents.get("acme", self.scope.namespace_id, doc)
        assert record is not None
        self.api_text[path] = (None, record.sequencer)

    @precondition(lambda self: len(self.queue) >= 2)
    @rule(
        picks=st.lists(st.integers(0, 50), min_size=2, max_size=4),
        refuse=st.lists(st.booleans(), min_size=4, max_size=4),
    )
    def deliver_a_batch(self, picks: list[int], refuse: list[bool]) -> None:
        """Several queued messages as one SQS batch (their publish together, at its end), the store
        refusing the fence writes of some of their documents (issue 37 #4)."""
        STEPS[self.kind] += 1
        messages = []
        for pick in picks:
            if self.queue:
                messages.append(self.queue.pop(pick % len(self.queue)))
        docs = [self.document_of(m) for m in messages]
        self.refusing.refuse = {d for d, no in zip(docs, refuse, strict=False) if no}
        batch = self.service.batch()
        publish = batch.publish

        def publish_deferred() -> None:
            """What a batch publishes is each deferred version's own message's change — also when it
            publishes before a later item claims the same document."""
            unit, self.recorder.unit = self.recorder.unit, ""
            self.recorder.by_document = {
                d.done.document_id: messages[int(d.outcome.key[1:])] for d in batch._deferred
            }
            try:
                publish()
            finally:
                self.recorder.unit = unit

        batch.publish = publish_deferred  # type: ignore[method-assign]
        try:
            for n, message in enumerate(messages):
                self.recorder.unit = message
                batch.notification(f"m{n}", message)
            self.recorder.unit = ""
            outcomes = batch.finish()
        finally:
            self.refusing.refuse = set()
            self.recorder.by_document = {}
            self.recorder.unit = ""
        for message, outcome in zip(messages, outcomes, strict=True):
            error = outcome.error
            self.settle(True, "ok" if error is None else f"failed:{getattr(error, 'code', error)}", message)

    def document_of(self, message: str) -> str:
        key = unquote_plus(json.loads(message)["Records"][0]["s3"]["object"]["key"])
        path = key.split("/", 2)[2]
        return document_id_for(document_of(path) if is_sidecar(path) else path)

    @rule(size=st.sampled_from(REBUILD_SIZES))
    def start_a_rebuild(self, size: int) -> None:
        """``POST …/reindex`` (forced: same model, maybe the same chunking); refused while one builds."""
        STEPS[self.kind] += 1
        request = ReindexRequest.model_validate({"chunkTokens": size, "chunkOverlapTokens": 0})
        with contextlib.suppress(errors.Conflict):
            self.reindex.start(OPERATOR, self.scope.namespace_id, request)

    @precondition(lambda self: self.steps.steps)
    @rule(mode=st.sampled_from(["twice", "beside", "once"]))
    def run_a_rebuild_step(self, mode: str) -> None:
        """The next queued step, delivered once, twice, or beside a copy of itself (a worker parked at
        its first write). Every document served before a switch is served after it (issue 37 #1)."""
        STEPS[self.kind] += 1
        taken = self.steps.take()
        assert taken is not None
        step = taken[0]
        before_generation, before = self.served_documents()
        before_size = self.served()[1]
        if mode == "beside":
            copy = self.workers.start(lambda _: self.reindex.run(step), f"step:{step.body()}")
            self.run_step(step)
            if self.workers.finish(copy) != "ok":
                self.steps.submit(step)
        else:
            self.run_step(step)
            if mode == "twice":
                self.run_step(step)
        ns = self.registry.get_namespace("acme", self.scope.namespace_id)
        rebuild = ns.settings.rebuild
        assert rebuild is None or rebuild.state != "failed", f"the rebuild failed: {rebuild.error}"
        generation, after = self.served_documents()
        if generation != before_generation:
            self.rechunked = self.rechunked or self.served()[1] != before_size
            assert before <= after, f"the switch to generation {generation} dropped {sorted(before - after)}"

    def run_step(self, step: ReindexStep) -> None:
        try:
            self.reindex.run(step)
        except (errors.StepBusy, errors.DocumentBusy, errors.WorkerOutOfTime):
            self.steps.submit(step)  # the message comes back

    def served_documents(self) -> tuple[int, set[str]]:
        ns = self.registry.get_namespace("acme", self.scope.namespace_id)
        store = self.provider.scoped(storage_scope(self.scope, ns.settings.generation))
        docs = {document_id_for(p) for p in PATHS}
        return ns.settings.generation, {d for d in docs if store.count(d)}

    # -- the property ---------------------------------------------------------------------------
    def drain(self) -> None:
        for _ in range(500):
            running = self.workers.running
            if running:  # the newest first: older workers are the slow ones
                worker = running[-1]
                self.workers.finish(worker)
                self.settle(True, worker.outcome, worker.message)
            elif self.queue:
                self.workers.start(self.service.handle_notification, self.queue.pop(0))
            else:
                return
        raise AssertionError("the queue never drained: a message keeps failing")

    def s3_spoke_after(self, path: str, order: str) -> bool:
        """Whether an S3 event of the key's was sent with a sequencer above ``order``."""
        for message in self.sent:
            record = json.loads(message)["Records"][0]
            obj = record["s3"]["object"]
            if unquote_plus(obj["key"]) == self.key(path) and normalise_sequencer(obj["sequencer"]) > order:
                return True
        return False

    def check(self) -> None:
        """Quiescent: each document serves what its name serves, chunked as the served generation
        chunks, with what its sidecar says — or, its sidecar malformed, its record says ``failed``
        (its last good version, if any, still served: see :meth:`settled_records_match_the_store`)."""
        store, size = self.served()
        total = 0
        failing = False
        for path in PATHS:
            doc = document_id_for(path)
            data = self.expected_data(path)
            s3_last = not (path in self.api_text and not self.s3_spoke_after(path, self.api_text[path][1]))
            attributes = sidecar_attributes(self.bucket.current(self.key(path) + SIDECAR_SUFFIX))
            served = served_texts(store, doc)
            record = self.documents.get("acme", self.scope.namespace_id, doc)
            if data is None:
                assert served == [], f"{path}: S3 serves nothing, the store serves {len(served)} chunks"
                lone_sidecar = self.bucket.current(self.key(path) + SIDECAR_SUFFIX) is not None
                assert (
                    record is None
                    or record.status == "deleted"
                    or (lone_sidecar and (record.status, record.error_code) == ("failed", "reserved_name"))
                ), (path, record)  # a sidecar with no document beside it is recorded (issue 37 #9)
            elif s3_last and attributes is None:
                assert record is not None and record.status == "failed", (
                    f"{path}: a malformed sidecar, {record}"
                )
            else:
                want = expected_texts(path, data, size)
                assert served == want, f"{path}: store serves {served[:2]}…, S3 serves {want[:2]}…"
                assert record is not None and record.status == "ready", (path, record)
                if not self.rechunked:  # (its count is as indexed: see above)
                    assert record.chunk_count == len(want), (path, record)
                if s3_last:
                    assert record.attributes == attributes, f"{path}: sidecar says {attributes}: {record}"
            assert store.count(doc) == len(served), f"{path}: duplicated or out-of-range chunks"
            total += len(served)
            failing = failing or (record is not None and record.status == "failed")
        # what a worker killed before its publish wrote stays unseen until the document's next publish
        # sweeps it: a document whose every later attempt failed (a malformed sidecar) keeps it
        assert store.count() == total or (failing and store.count() > total), "chunks no key names"

    @invariant()
    def readers_see_one_whole_version(self) -> None:
        """At every step — workers parked between their write and their publish, or killed there — a
        reader gets each document as one uploaded version, whole, or nothing: never two versions
        mixed, never part of one; and a search's hits of one document all come from one version."""
        store, size = self.served()
        for path in PATHS:
            served = tuple(served_texts(store, document_id_for(path)))
            assert not served or served in whole_versions(path, size), f"{path}: a reader got {served}"
        found: dict[str, set[str]] = {}
        for hit in store.search(KeywordQuery(text="variant paragraph says", k=100)):
            found.setdefault(hit.chunk.document_id, set()).add(hit.chunk.text)
        for doc, texts in found.items():
            path = next(p for p in PATHS if document_id_for(p) == doc)
            assert any(texts <= set(v) for v in whole_versions(path, size)), f"{path}: hits of two versions"

    @invariant()
    def settled_records_match_the_store(self) -> None:
        """Issue 37: a record never contradicts what is served — at every step, a settled record
        (``ready``, ``failed``, ``deleted``) serves a version exactly when the store serves one, of
        the record's chunk count (a batch that fails a document whose fence rose breaks this)."""
        store, _ = self.served()
        for path in PATHS:
            doc = document_id_for(path)
            record = self.documents.get("acme", self.scope.namespace_id, doc)
            if record is None or record.status not in ("ready", "failed", "deleted"):
                continue
            served = served_texts(store, doc)
            assert record.serves == bool(served), f"{path}: the store serves {len(served)} chunks: {record}"
            if served and not self.rechunked:
                # a record counts its version's chunks as indexed; a rebuild with another chunk size
                # does not recount them (README "Reindexing a namespace")
                assert record.chunk_count == len(served), f"{path}: the store serves {len(served)}: {record}"

    @invariant()
    def one_change_one_event_id(self) -> None:
        self.changes.check()

    @invariant()
    def workers_never_hang(self) -> None:
        assert all(w.at for w in self.workers.running)

    @invariant()
    def one_live_claim_per_event(self) -> None:
        """Issue 24 #9: a copy of a message never claims its event while another worker is running
        on that event's claim, unless that claim's lease had run out (its worker presumed dead)."""
        for worker in self.workers.all:
            for claim, beside in zip(worker.claims, worker.held_beside, strict=True):
                mine = claim.record
                if not claim.granted or mine.origin != "s3":
                    continue
                for other in beside:
                    if (other.document_id, other.sequencer, other.origin) == (
                        mine.document_id,
                        mine.sequencer,
                        "s3",
                    ):
                        assert other.lease_until is not None and mine.updated_at >= other.lease_until, (
                            f"two workers hold {mine.document_id}@{mine.sequencer} under a live lease"
                        )

    def teardown(self) -> None:
        self.drain()
        self.check()


EXAMPLES = {"sqlite": 150, "opensearch": 40}
MIN_STEPS = {"sqlite": 3000, "opensearch": 1000}


def test_store_always_settles_on_what_s3_serves(
    both_stores: tuple[str, VectorStoreProvider], tmp_path: Path
) -> None:
    kind, store_provider = both_stores
    model = type(
        f"IngestModel_{kind}", (IngestModel,), {"provider": store_provider, "home": tmp_path, "kind": kind}
    )
    STEPS[kind] = 0
    run_state_machine_as_test(
        model,
        settings=settings(
            max_examples=EXAMPLES[kind],
            stateful_step_count=50,
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        ),
    )
    print(f"\n{kind}: {STEPS[kind]} steps over {EXAMPLES[kind]} runs, 0 violations")
    assert STEPS[kind] >= MIN_STEPS[kind]
