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
"""

from __future__ import annotations

import json
import uuid
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

from ragline.adapters.embedded.documents import SqliteDocumentRegistry
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.documents.chunker import chunk_document
from ragline.documents.parsers import parse_document
from ragline.domain.documents import document_id_for, normalise_sequencer
from ragline.domain.models import KeywordQuery, TenantScope
from ragline.ports import VectorStoreProvider
from ragline.services.ingest import IngestService, IngestSettings
from ragline.services.namespaces import new_namespace
from tests.support.clock import ManualClock
from tests.support.fakes import BowEmbedder
from tests.support.ingest_world import VersionedBucket, Worker, Workers, served_texts

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


def expected_texts(path: str, data: bytes) -> list[str]:
    name = path.rsplit("/", 1)[-1]
    parsed = parse_document(name, data, max_bytes=CHUNKING.max_document_bytes)
    chunks = chunk_document(
        parsed,
        document_id=document_id_for(path),
        tokenizer=BowEmbedder(),
        chunk_tokens=CHUNKING.chunk_tokens,
        overlap_tokens=CHUNKING.chunk_overlap_tokens,
        filename=name,
        source=name,
    )
    return [c.text for c in chunks]


WHOLE_VERSIONS = {path: {tuple(expected_texts(path, v)) for v in VERSIONS} for path in PATHS}


class IngestModel(RuleBasedStateMachine):
    provider: VectorStoreProvider
    home: Path
    kind: str

    def __init__(self) -> None:
        super().__init__()
        ns = f"ns{uuid.uuid4().hex[:10]}"
        self.scope = TenantScope(tenant_id="acme", namespace_id=ns)
        registry = SqliteTenantRegistry(self.home / f"{ns}-t.sqlite")
        registry.create_namespace(new_namespace("acme", ns))
        self.bucket = VersionedBucket()
        self.workers = Workers()
        self.clock = ManualClock()
        self.documents = SqliteDocumentRegistry(self.home / f"{ns}-d.sqlite", clock=self.clock)
        self.service = IngestService(
            registry=registry,
            documents=self.workers.documents(self.documents),
            stores=self.workers.stores(self.provider),
            embedder=self.workers.embedder(BowEmbedder()),
            tokenizer=BowEmbedder(),
            settings=CHUNKING,
            objects=self.workers.objects(self.bucket),
            bucket=self.bucket.name,
        )
        self.queue: list[str] = []
        self.sent: list[str] = []
        self.api_text: dict[str, tuple[bytes, str]] = {}
        """Per path, the last API text written and the S3 order stored when it was written."""
        self.store = self.provider.scoped(self.scope)

    def key(self, path: str) -> str:
        return f"acme/{self.scope.namespace_id}/{path}"

    def send(self, message: str) -> None:
        self.queue.append(message)
        self.sent.append(message)

    def settle(self, worker_done: bool, outcome: str, message: str) -> None:
        """A worker that died or failed leaves its message on the queue (SQS redelivers it). A dead
        worker's message comes back after the visibility timeout, by when its claim's lease is over."""
        if worker_done and outcome != "ok":
            self.queue.append(message)
        if worker_done and outcome == "crashed":
            self.clock.advance(CHUNKING.claim_lease_seconds)

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
        self.service.ingest(
            self.scope, filename=path.rsplit("/", 1)[-1], data=data, document_id=doc, source="api:"
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
        total = 0
        for path in PATHS:
            doc = document_id_for(path)
            data = self.bucket.current(self.key(path))
            if path in self.api_text and not self.s3_spoke_after(path, self.api_text[path][1]):
                data = self.api_text[path][0]  # the last writer of the name is the API
            served = served_texts(self.store, doc)
            record = self.documents.get("acme", self.scope.namespace_id, doc)
            if data is None:
                assert served == [], f"{path}: S3 serves nothing, the store serves {len(served)} chunks"
                assert record is None or record.status == "deleted", (path, record)
            else:
                want = expected_texts(path, data)
                assert served == want, f"{path}: store serves {served[:2]}…, S3 serves {want[:2]}…"
                assert record is not None and record.status == "ready" and record.chunk_count == len(want)
            assert self.store.count(doc) == len(served), f"{path}: duplicated or out-of-range chunks"
            total += len(served)
        assert self.store.count() == total, "chunks of a document no key names"

    @invariant()
    def readers_see_one_whole_version(self) -> None:
        """At every step — workers parked between their write and their publish, or killed there — a
        reader gets each document as one uploaded version, whole, or nothing: never two versions
        mixed, never part of one; and a search's hits of one document all come from one version."""
        for path in PATHS:
            served = tuple(served_texts(self.store, document_id_for(path)))
            assert not served or served in WHOLE_VERSIONS[path], f"{path}: a reader got {served}"
        found: dict[str, set[str]] = {}
        for hit in self.store.search(KeywordQuery(text="variant paragraph says", k=100)):
            found.setdefault(hit.chunk.document_id, set()).add(hit.chunk.text)
        for doc, texts in found.items():
            path = next(p for p in PATHS if document_id_for(p) == doc)
            assert any(texts <= set(v) for v in WHOLE_VERSIONS[path]), f"{path}: hits of two versions"

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


EXAMPLES = {"sqlite": 120, "opensearch": 40}
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
