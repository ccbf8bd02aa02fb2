"""Every event type reaches a tenant's webhook signed, once per change — through redelivered
messages, a bus that fails between "record written" and "event published", a receiver that fails
and recovers, and one that never does (dead-lettered)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline.domain.api import AddText
from ragline.domain.events import event_id
from tests.support.event_world import EventWorld
from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.integration
GOOD = b"# Guide\n\nThe frame warranty lasts ten years from the date of purchase for every bicycle."
BAD = b"\x00\x01\x02 not a document \xff\xfe"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def by_type(receiver: Receiver, path: str = "/hook") -> dict[str, list[dict[str, object]]]:
    out: dict[str, list[dict[str, object]]] = {}
    for d in receiver.accepted(path):
        out.setdefault(str(d.body["type"]), []).append(d.body)
    return out


def test_every_event_type_is_delivered_signed_once(tmp_path: Path, receiver: Receiver) -> None:
    # Given a tenant with a quota of 5 runs and a webhook for every event
    world = EventWorld(tmp_path, receiver, max_runs=5)
    world.subscribe("/hook")
    # When a document is indexed, a broken one fails, the first is deleted, the namespace is
    # reindexed and the tenant charges 5 runs
    assert world.deliver(world.bucket.upload("acme/docs/guide.md", GOOD)) == "ok"
    assert world.deliver(world.bucket.upload("acme/docs/broken.pdf", BAD)) != "ok"
    assert world.deliver(world.bucket.remove("acme/docs/guide.md")) == "ok"
    world.reindex()
    world.run_steps()
    for _ in range(5):
        run = world.container.metering.start("acme")
        run.started = True
        run.finish()
    world.relay()
    # Then each change arrived once, signed, with its detail
    got = by_type(receiver)
    assert sorted(got) == [
        "document.deleted", "document.failed", "document.indexed", "namespace.reindexed",
        "usage.quota_threshold",
    ]  # fmt: skip
    assert [e["detail"]["document_id"] for e in got["document.indexed"]] == ["guide.md"]  # type: ignore[index]
    failed = got["document.failed"][0]["detail"]
    assert failed["document_id"] == "broken.pdf" and failed["reason"]["code"]  # type: ignore[index]
    assert [e["detail"]["document_id"] for e in got["document.deleted"]] == ["guide.md"]  # type: ignore[index]
    assert got["namespace.reindexed"][0]["detail"]["generation"] == 2  # type: ignore[index]
    thresholds = [e["detail"]["threshold_percent"] for e in got["usage.quota_threshold"]]  # type: ignore[index]
    assert thresholds == [80, 100]
    assert all(d.verified for d in receiver.deliveries)
    ids = [d.event_id for d in receiver.accepted()]
    assert len(ids) == len(set(ids)) == 6
    assert all(d.event_id == d.body["id"] for d in receiver.deliveries)


def test_a_redelivered_message_is_announced_again_but_not_resent(tmp_path: Path, receiver: Receiver) -> None:
    # Given a document indexed and its event delivered
    world = EventWorld(tmp_path, receiver)
    world.subscribe("/hook")
    message = world.bucket.upload("acme/docs/guide.md", GOOD)
    assert world.deliver(message) == "ok"
    world.relay()
    # When SQS redelivers the same message (twice)
    assert world.deliver(message) == "ok"
    assert world.deliver(message) == "ok"
    world.relay()
    # Then the change was re-announced with its id, and the receiver got it once
    assert len(world.publisher.published) == 3
    assert len({e.id for e in world.publisher.published}) == 1
    assert len(receiver.accepted()) == 1


def test_a_lost_publish_is_recovered_by_the_redelivery(tmp_path: Path, receiver: Receiver) -> None:
    # Given a bus that fails right after the record is written
    world = EventWorld(tmp_path, receiver)
    world.subscribe("/hook")
    message = world.bucket.upload("acme/docs/guide.md", GOOD)
    world.publisher.fail_next = 1
    # When the message fails and comes back
    assert world.deliver(message) == "event_not_published"
    record = world.container.documents.get("acme", "docs", "guide.md")
    assert record is not None and record.status == "ready"  # the change stands, not "failed"
    assert world.deliver(message) == "ok"
    world.relay()
    # Then the receiver got the indexing once
    assert [d.body["type"] for d in receiver.accepted()] == ["document.indexed"]


def test_a_failing_receiver_is_retried_then_dead_lettered(tmp_path: Path, receiver: Receiver) -> None:
    # Given two webhooks: one fails twice then recovers, one always fails
    world = EventWorld(tmp_path, receiver)
    world.subscribe("/flaky")
    world.subscribe("/down")
    receiver.script["/flaky"].extend([500, 503])
    receiver.always["/down"] = 500
    # When a document is indexed and the outbox relayed with its backoff
    assert world.deliver(world.bucket.upload("acme/docs/guide.md", GOOD)) == "ok"
    world.relay(rounds=10)
    # Then the flaky receiver got it on its third try, once; the dead one was tried 4 times
    flaky = [d.status for d in receiver.deliveries if d.path == "/flaky"]
    assert flaky == [500, 503, 200]
    assert [d.status for d in receiver.deliveries if d.path == "/down"] == [500] * 4
    (event,) = world.publisher.published
    assert world.outbox.dead() == [event.id]
    assert world.outbox.status(event.id) == ("dead", 4)


def test_filters_and_order_without_failures(tmp_path: Path, receiver: Receiver) -> None:
    # Given a webhook for deletions only and one for everything
    world = EventWorld(tmp_path, receiver)
    world.subscribe("/deleted", ["document.deleted"])
    world.subscribe("/all")
    # When a document is written, rewritten and deleted
    messages = [
        world.bucket.upload("acme/docs/guide.md", GOOD),
        world.bucket.upload("acme/docs/guide.md", GOOD + b" Now with a second sentence."),
        world.bucket.remove("acme/docs/guide.md"),
    ]
    for m in messages:
        assert world.deliver(m) == "ok"
    world.relay()
    # Then the filtered webhook got the deletion only, the other all three in order of the changes
    assert [d.body["type"] for d in receiver.accepted("/deleted")] == ["document.deleted"]
    everything = receiver.accepted("/all")
    kinds = [d.body["type"] for d in everything]
    assert kinds == ["document.indexed", "document.indexed", "document.deleted"]
    changes = [d.body["detail"]["change"] for d in everything]  # type: ignore[index]
    assert changes == sorted(changes)


def test_event_ids_name_the_change() -> None:
    a = event_id("document.indexed", "acme", "docs", "guide.md", "0001")
    assert a == event_id("document.indexed", "acme", "docs", "guide.md", "0001")
    assert a != event_id("document.indexed", "acme", "docs", "guide.md", "0002")
    assert a != event_id("document.deleted", "acme", "docs", "guide.md", "0001")
    assert a != event_id("document.indexed", "globex", "docs", "guide.md", "0001")


def test_a_deleted_tenant_keeps_no_webhook(tmp_path: Path, receiver: Receiver) -> None:
    world = EventWorld(tmp_path, receiver)
    world.subscribe("/hook")
    world.bucket.purge = lambda prefix: 0  # type: ignore[attr-defined] (the test bucket keeps nothing to purge)
    world.container.tenant_deletion.delete("acme")
    assert world.container.webhook_store.list("acme") == []


@pytest.mark.parametrize("source", ["text", "s3"])
def test_deleting_a_deleted_document_again_changes_nothing_and_announces_nothing(
    tmp_path: Path, receiver: Receiver, source: str
) -> None:
    # Given a document (sent as text, or uploaded to S3) that was deleted through the API
    world = EventWorld(tmp_path, receiver)
    world.subscribe("/hook")
    service = world.container.document_service
    if source == "text":
        service.add_text(
            world.admin, "docs", AddText.model_validate({"filename": "guide.md", "text": GOOD.decode()})
        )
    else:
        assert world.deliver(world.bucket.upload("acme/docs/guide.md", GOOD)) == "ok"
    service.delete(world.admin, "docs", "guide.md")
    if source == "s3":  # S3 announces the deletion the API made
        assert world.deliver(world.bucket.remove("acme/docs/guide.md")) == "ok"
    deleted = world.container.documents.get("acme", "docs", "guide.md")
    assert deleted is not None and deleted.status == "deleted"
    # When it is deleted again
    again = service.delete(world.admin, "docs", "guide.md")
    world.relay()
    # Then the answer says deleted, the record is the same version, and one deletion was announced
    assert again.status == "deleted"
    assert world.container.documents.get("acme", "docs", "guide.md") == deleted
    assert [d.body["type"] for d in receiver.accepted("/hook")] == ["document.indexed", "document.deleted"]
