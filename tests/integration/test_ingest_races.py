"""The ingestion failures of issue 11, each replayed in the order that reproduced it.

Workers are parked at checkpoints (tests/support/ingest_world.py), so "a slow worker holding v1 while
v2 is indexed" is an exact interleaving, not a timing hope. Runs on the SQLite store and on the
OpenSearch node.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.embedded.documents import SqliteDocumentRegistry
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.adapters.opensearch.store import (
    OpenSearchVectorStore,
)
from ragline.domain.documents import document_id_for
from ragline.domain.models import TenantScope
from ragline.ports import VectorStoreProvider
from ragline.services.ingest import IngestService, IngestSettings
from ragline.services.namespaces import new_namespace
from tests.support.clock import ManualClock
from tests.support.fakes import BowEmbedder
from tests.support.ingest_world import Crash, VersionedBucket, Workers, served_texts

pytestmark = pytest.mark.integration
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
KEY = "acme/docs/guide.md"
DOC = "guide.md"


def version(tag: str, n: int) -> bytes:
    return "\n\n".join(
        f"# Part {i}\n\nVersion {tag} paragraph {i} says enough words." for i in range(n)
    ).encode()


LIMIT = 4096
"""The worlds' document size limit (small, so "a big object" is cheap to make)."""


class World:
    def __init__(self, stores: VectorStoreProvider, home: Path) -> None:
        registry = SqliteTenantRegistry(home / "t.sqlite")
        registry.create_namespace(new_namespace("acme", "docs"))
        self.bucket = VersionedBucket()
        self.workers = Workers()
        self.clock = ManualClock()
        self.documents = SqliteDocumentRegistry(home / "d.sqlite", clock=self.clock)
        self.settings = IngestSettings(chunk_tokens=12, chunk_overlap_tokens=0, max_document_bytes=LIMIT)
        self.service = IngestService(
            registry=registry,
            documents=self.workers.documents(self.documents),
            stores=self.workers.stores(stores),
            embedder=self.workers.embedder(BowEmbedder()),
            tokenizer=BowEmbedder(),
            settings=self.settings,
            objects=self.workers.objects(self.bucket),
            bucket=self.bucket.name,
        )
        self.store = stores.scoped(SCOPE)

    def run(self, message: str) -> str:
        """One delivery, run to its end: ``ok`` or ``failed:<code>``."""
        return self.workers.finish(self.workers.start(self.service.handle_notification, message))

    def texts(self, doc: str = DOC) -> list[str]:
        return served_texts(self.store, doc)


@pytest.fixture
def world(both_stores: tuple[str, VectorStoreProvider], tmp_path: Path) -> World:
    return World(both_stores[1], tmp_path)


def only(world: World, tag: str, n: int) -> None:
    texts = world.texts()
    assert len(texts) == n and all(f"Version {tag} " in t for t in texts), texts
    assert world.store.count(DOC) == n
    record = world.documents.get("acme", "docs", DOC)
    assert record is not None and record.status == "ready" and record.chunk_count == n


# 1 ---------------------------------------------------------------------------------------------------
def test_reupload_after_delete_is_indexed_again(world: World) -> None:
    assert world.run(world.bucket.upload(KEY, version("one", 4))) == "ok"
    assert world.run(world.bucket.remove(KEY)) == "ok"
    assert world.texts() == []
    assert world.run(world.bucket.upload(KEY, version("one", 4))) == "ok"
    only(world, "one", 4)


def test_put_delete_put_delivered_in_order_serves_the_last_put(world: World) -> None:
    """The put1 event reads the latest object, so it may see bytes S3 took after a delete."""
    put1 = world.bucket.upload(KEY, version("one", 4))
    delete2 = world.bucket.remove(KEY)
    put3 = world.bucket.upload(KEY, version("one", 4))
    for message in (put1, delete2, put3):
        assert world.run(message) == "ok"
    only(world, "one", 4)


def test_api_text_posted_deleted_and_posted_again_has_its_chunks(world: World) -> None:
    data = version("api", 3)
    world.service.ingest(SCOPE, filename="guide.md", data=data)
    world.service.remove(SCOPE, DOC)
    again = world.service.ingest(SCOPE, filename="guide.md", data=data)
    assert again.outcome == "indexed" and again.chunks == 3
    only(world, "api", 3)


# 2 ---------------------------------------------------------------------------------------------------
def test_slow_worker_holding_a_longer_older_version_leaves_nothing_behind(world: World) -> None:
    slow = world.workers.start(
        world.service.handle_notification, world.bucket.upload(KEY, version("one", 15))
    )
    world.workers.step(slow)  # claimed, parked before reading the object
    world.workers.step(slow)  # read v1 (15 chunks), parked before reading its metadata sidecar
    world.workers.step(slow)  # no sidecar, parked before embedding
    assert slow.at == "embed_documents"
    assert world.run(world.bucket.upload(KEY, version("two", 5))) == "ok"
    assert world.workers.finish(slow) == "failed:superseded"  # its message fails, and comes back
    only(world, "two", 5)
    assert world.run(slow.message) == "ok"  # the redelivery is stale: one registry call, no change
    only(world, "two", 5)


def test_slow_worker_that_wrote_before_the_newer_version_published_is_swept(world: World) -> None:
    slow = world.workers.start(
        world.service.handle_notification, world.bucket.upload(KEY, version("one", 15))
    )
    while slow.at != "publish":
        world.workers.step(slow)  # v1's 15 chunks are written, not yet published
    assert world.run(world.bucket.upload(KEY, version("two", 5))) == "ok"
    assert world.workers.finish(slow) == "failed:superseded"
    only(world, "two", 5)


def test_slow_worker_holding_a_version_while_the_object_is_deleted_resurrects_nothing(world: World) -> None:
    slow = world.workers.start(world.service.handle_notification, world.bucket.upload(KEY, version("one", 8)))
    world.workers.step(slow)
    world.workers.step(slow)  # holds v1's bytes
    assert world.run(world.bucket.remove(KEY)) == "ok"
    assert world.workers.finish(slow) == "failed:superseded"
    assert world.texts() == [] and world.store.count(DOC) == 0
    record = world.documents.get("acme", "docs", DOC)
    assert record is not None and record.status == "deleted"


def test_worker_that_crashed_after_writing_an_overtaken_version_is_swept_by_its_redelivery(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = world.workers.start(
        world.service.handle_notification, world.bucket.upload(KEY, version("one", 15))
    )
    world.workers.step(slow)
    world.workers.step(slow)  # holds v1's bytes
    assert world.run(world.bucket.upload(KEY, version("two", 5))) == "ok"
    world.workers.step(slow)  # read its metadata sidecar (none)
    world.workers.step(slow)  # embedded, parked before its write
    if isinstance(world.store, OpenSearchVectorStore):
        # OpenSearch checks the fence, then writes: a fence read just before v2 published lets the
        # write through (SQLite checks and writes in one transaction, so it has no such window).
        monkeypatch.setattr(OpenSearchVectorStore, "_fences", lambda self, ids: dict.fromkeys(ids, 0))
    world.workers.step(slow)
    monkeypatch.undo()
    if not isinstance(world.store, OpenSearchVectorStore):
        assert slow.outcome == "failed:superseded"  # refused at the write itself
        only(world, "two", 5)
        return
    assert slow.at == "publish"  # v1's chunks are stored beside v2's, but readers see v2 alone…
    only(world, "two", 5)
    assert world.store.count() == 15 + 5
    world.workers.step(slow, crash=True)  # …and the worker dies before it could notice
    assert world.run(slow.message) == "ok"  # SQS brings the message back: stale, and it sweeps
    only(world, "two", 5)
    assert world.store.count() == 5


# 4 ---------------------------------------------------------------------------------------------------
def test_deleting_a_noncurrent_version_keeps_the_live_document(world: World) -> None:
    assert world.run(world.bucket.upload(KEY, version("one", 3))) == "ok"
    assert world.run(world.bucket.upload(KEY, version("two", 4))) == "ok"
    assert world.run(world.bucket.remove_version(KEY, 0)) == "ok"  # v1 by VersionId
    only(world, "two", 4)


def test_removing_the_delete_marker_reindexes_the_restored_object(world: World) -> None:
    assert world.run(world.bucket.upload(KEY, version("one", 3))) == "ok"
    assert world.run(world.bucket.remove(KEY)) == "ok"
    assert world.texts() == []
    assert world.run(world.bucket.remove_version(KEY, -1)) == "ok"  # the marker: an undelete
    only(world, "one", 3)


# issue 24 #2: one ordering for every source -------------------------------------------------------------
def test_an_s3_upload_after_api_text_of_the_same_name_replaces_it(world: World) -> None:
    """API text took a wall-clock sequencer above every S3 one: the upload was acknowledged as stale."""
    world.service.ingest(SCOPE, filename="guide.md", data=version("api", 3), source="api:")
    only(world, "api", 3)
    assert world.run(world.bucket.upload(KEY, version("s3", 4))) == "ok"
    only(world, "s3", 4)


def test_a_reupload_after_the_api_text_was_replaced_is_indexed(world: World) -> None:
    assert world.run(world.bucket.upload(KEY, version("one", 2))) == "ok"
    world.service.ingest(SCOPE, filename="guide.md", data=version("api", 3), source="api:")
    world.service.ingest(SCOPE, filename="guide.md", data=version("text", 5), source="api:")
    only(world, "text", 5)
    first = world.bucket.upload(KEY, version("two", 4))
    assert world.run(first) == "ok"
    only(world, "two", 4)
    assert world.run(first) == "ok"  # redelivered: a duplicate
    only(world, "two", 4)


def test_an_upload_event_redelivered_after_api_text_leaves_the_text(world: World) -> None:
    """The API text came after that upload (its event was handled first): the later write stays."""
    upload = world.bucket.upload(KEY, version("one", 2))
    assert world.run(upload) == "ok"
    world.service.ingest(SCOPE, filename="guide.md", data=version("api", 3), source="api:")
    assert world.run(upload) == "ok"  # stale: a local write claimed after it
    only(world, "api", 3)


# issue 24 #4: reads bounded by what is read ---------------------------------------------------------------
def big(tag: str) -> bytes:
    data = version(tag, 200)
    assert len(data) > LIMIT
    return data


def test_a_late_event_for_a_small_version_reads_that_version_not_the_big_current_one(world: World) -> None:
    small = world.bucket.upload(KEY, version("small", 3))
    large = world.bucket.upload(KEY, big("big"))  # the current version, over the limit
    assert world.run(small) == "ok"  # delivered late, but before the big one's event
    assert world.bucket.bytes_read == len(version("small", 3))
    only(world, "small", 3)  # briefly the version the event names; the next event settles it
    assert world.run(large) == "failed:document_too_large"  # refused from the event's size
    assert world.bucket.bytes_read == len(version("small", 3))
    record = world.documents.get("acme", "docs", DOC)
    assert record is not None and (record.status, record.error_code) == ("failed", "document_too_large")
    assert world.texts() == []


def test_a_version_delete_event_does_not_read_the_big_current_object(world: World) -> None:
    assert world.run(world.bucket.upload(KEY, version("small", 3))) == "ok"
    assert world.run(world.bucket.upload(KEY, big("big"))) == "failed:document_too_large"
    # the small, non-current version is deleted: its event has no size; S3 serves the big one
    assert world.run(world.bucket.remove_version(KEY, 0)) == "failed:document_too_large"
    assert world.bucket.bytes_read == len(version("small", 3))  # nothing of the big object
    record = world.documents.get("acme", "docs", DOC)
    assert record is not None and record.status == "failed" and KEY in record.error_message
    assert world.texts() == []


def test_an_upload_event_whose_version_is_gone_reads_what_s3_serves_now(world: World) -> None:
    first = world.bucket.upload(KEY, version("one", 3))
    world.bucket.upload(KEY, version("two", 4))
    world.bucket.remove_version(KEY, 0)  # v1 deleted before its event is handled
    assert world.run(first) == "ok"
    only(world, "two", 4)


# issue 24 #9: a duplicate copy of a message does not embed before it holds the claim -----------------------
def test_a_concurrent_copy_of_a_message_backs_off_without_reading_or_embedding(world: World) -> None:
    message = world.bucket.upload(KEY, version("one", 6))
    first = world.workers.start(world.service.handle_notification, message)
    world.workers.step(first)  # claimed, parked before reading the object
    assert first.at == "get"
    copy = world.workers.start(world.service.handle_notification, message)
    assert world.workers.finish(copy) == "failed:document_busy"  # its message comes back later
    assert copy.visited == ["claim"]  # no read, no embedding, no write
    assert world.workers.finish(first) == "ok"
    only(world, "one", 6)
    assert world.run(message) == "ok"  # the copy's redelivery: a duplicate, one registry read
    only(world, "one", 6)


def test_a_copy_arriving_after_its_worker_died_takes_over_once_the_lease_ran_out(world: World) -> None:
    message = world.bucket.upload(KEY, version("one", 6))
    dead = world.workers.start(world.service.handle_notification, message)
    while dead.at != "upsert":
        world.workers.step(dead)
    world.workers.step(dead, crash=True)  # killed mid-work: its claim stays `processing`
    early = world.workers.start(world.service.handle_notification, message)
    assert world.workers.finish(early) == "failed:document_busy"
    world.clock.advance(world.settings.claim_lease_seconds)  # SQS brings it back after the lease
    assert world.run(message) == "ok"
    only(world, "one", 6)
    record = world.documents.get("acme", "docs", DOC)
    assert record is not None and record.attempts == 2


# 7 ---------------------------------------------------------------------------------------------------
def test_revert_after_an_interrupted_reindex_serves_the_reverted_version(world: World) -> None:
    assert world.run(world.bucket.upload(KEY, version("one", 6))) == "ok"
    interrupted = world.workers.start(
        world.service.handle_notification, world.bucket.upload(KEY, version("two", 9))
    )
    while interrupted.at != "publish":
        world.workers.step(interrupted)  # v2's chunks are written over v1's…
    world.workers.step(interrupted, crash=True)  # …and the worker dies before publishing
    assert world.run(world.bucket.upload(KEY, version("one", 6))) == "ok"  # reverted to v1
    only(world, "one", 6)
    assert world.run(interrupted.message) == "ok"  # v2's redelivery is stale and changes nothing
    only(world, "one", 6)


# 3 ---------------------------------------------------------------------------------------------------
COLLIDING = [
    ("a b.txt", "a_b.txt"),
    ("a+b.txt", "a b.txt"),
    ("x#1.txt", "x?1.txt"),
    ("café.txt", "caf_.txt"),
    ("_notes.txt", "notes.txt"),
    ("docs//lead.txt", "docs/lead.txt"),
    ("/lead.txt", "lead.txt"),
]


@pytest.mark.parametrize(("first", "second"), COLLIDING)
def test_distinct_keys_are_distinct_documents(world: World, first: str, second: str) -> None:
    assert document_id_for(first) != document_id_for(second)
    assert world.run(world.bucket.upload(f"acme/docs/{first}", version("first", 2))) == "ok"
    assert world.run(world.bucket.upload(f"acme/docs/{second}", version("second", 3))) == "ok"
    assert world.run(world.bucket.remove(f"acme/docs/{second}")) == "ok"
    texts = world.texts(document_id_for(first))
    assert len(texts) == 2 and all("Version first " in t for t in texts)
    assert world.texts(document_id_for(second)) == []


# 10, 12 ------------------------------------------------------------------------------------------------
def test_sns_wrapped_notification_is_unwrapped(world: World) -> None:
    inner = world.bucket.upload(KEY, version("one", 2))
    envelope = json.dumps({"Type": "Notification", "MessageId": "m", "TopicArn": "arn:t", "Message": inner})
    assert world.run(envelope) == "ok"
    only(world, "one", 2)


@pytest.mark.parametrize(
    "body",
    [
        "{}",
        '{"hello": "world"}',
        json.dumps({"version": "0", "detail-type": "Object Created", "source": "aws.s3", "detail": {}}),
        json.dumps({"Type": "Notification", "Message": "{}"}),
    ],
)
def test_unknown_or_eventbridge_shapes_are_refused_with_a_reason(world: World, body: str) -> None:
    with pytest.raises(errors.InvalidRequest) as refused:
        world.service.handle_notification(body)
    assert "S3 notifications" in refused.value.message


def test_event_for_another_bucket_is_ignored(world: World) -> None:
    assert world.run(world.bucket.upload(KEY, version("one", 2))) == "ok"
    elsewhere = VersionedBucket("elsewhere")
    elsewhere.upload(KEY, b"x")
    (result,) = world.service.handle_notification(elsewhere.remove(KEY))
    assert result.outcome == "ignored" and "elsewhere" in result.reason
    only(world, "one", 2)


def test_folder_marker_is_a_noop_not_a_poison_message(world: World) -> None:
    (result,) = world.service.handle_notification(world.bucket.upload("acme/docs/sub/", b""))
    assert result.outcome == "ignored"
    assert world.store.count() == 0


def test_crash_is_not_caught_by_the_service() -> None:
    """The harness's Crash must escape the service like a killed Lambda (no RaglineError handling)."""
    assert not issubclass(Crash, errors.RaglineError)
