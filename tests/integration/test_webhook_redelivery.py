"""Generated interleavings: uploads, broken uploads and removals of a few documents, SQS redeliveries
of any earlier message, a bus that fails (after a record is written, or before a claim), a receiver
that fails for a while — every change the registry settled reaches each receiver exactly once, with
its signature verified (a message overtaken by a newer one before it was applied is no change). A
removal is synced to what S3 serves when it is applied: one applied after the key was written again
settles as that object (indexed, or failed for a bad one), not as a deletion."""

from __future__ import annotations

import itertools
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st

from ragline.domain.documents import normalise_sequencer
from tests.conftest import examples_at_scale
from tests.support.event_world import EventWorld
from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.integration
GOOD = b"# Guide\n\nThe frame warranty lasts ten years from the date of purchase for every bicycle."
BAD = b"\x00\x01\x02 not a document \xff\xfe"
EXPECTED = {"good": "document.indexed", "bad": "document.failed", "remove": "document.deleted"}
KEYS = ("a.md", "b.md")
_paths = itertools.count()

step = st.one_of(
    st.tuples(st.sampled_from(["good", "bad", "remove"]), st.sampled_from(KEYS)),
    st.tuples(st.just("redeliver"), st.integers(0, 20)),
    st.tuples(st.just("bus_fails"), st.integers(1, 2)),
    st.tuples(st.just("receiver_fails"), st.integers(1, 3)),
    st.tuples(st.just("relay"), st.just(0)),
)


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def sequencer(message: str) -> str:
    return normalise_sequencer(json.loads(message)["Records"][0]["s3"]["object"]["sequencer"])


def settles_as(kind: str, served: bytes | None) -> str:
    """The event a change is announced as: a removal is synced to what S3 serves when it is applied."""
    if kind == "remove" and served is not None:
        kind = "good" if served == GOOD else "bad"
    return EXPECTED[kind]


@settings(
    max_examples=max(30, examples_at_scale() // 10),  # 200 in `make test`
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(step, min_size=1, max_size=12))
@example(  # a removal applied after the re-upload it was overtaken by: indexed under the delete's change
    steps=[("good", "a.md"), ("bus_fails", 2), ("remove", "a.md"), ("bus_fails", 2), ("good", "a.md")]
)
def test_each_change_is_delivered_once(receiver: Receiver, steps: list[tuple[str, object]]) -> None:
    note(f"steps: {steps}")
    n = next(_paths)
    path, steady = f"/flaky{n}", f"/steady{n}"  # a retry for the flaky one must not resend to the other
    with tempfile.TemporaryDirectory() as home:
        world = EventWorld(Path(home), receiver)
        world.outbox._max_attempts = 100  # a receiver that recovers is never dead-lettered here
        world.subscribe(path)
        world.subscribe(steady)
        sent: list[tuple[str, str]] = []  # (message, what it did)
        kinds: dict[str, str] = {}  # change → what its message did
        pending: list[str] = []  # failed messages SQS brings back

        settled: dict[str, str] = {}  # change → its event type (a change overtaken first never settles)

        def deliver(message: str) -> None:
            key = json.loads(message)["Records"][0]["s3"]["object"]["key"]
            served = world.bucket.current(key)  # what a removal applied now is synced to
            if world.deliver(message) != "ok" and message not in pending:
                pending.append(message)
            record = world.container.documents.get("acme", "docs", key.split("/")[-1])
            change = sequencer(message)
            if (  # a removal that finds the document deleted already keeps that deletion's change
                record is not None
                and record.event_id == change
                and record.status in ("ready", "failed", "deleted")
                and change not in settled
            ):
                settled[change] = settles_as(kinds[change], served)

        def redeliver_pending() -> None:
            for message in list(pending):
                pending.remove(message)
                deliver(message)

        for kind, arg in steps:
            redeliver_pending()
            if kind in EXPECTED:
                key = f"acme/docs/{arg}"
                message = world.bucket.remove(key) if kind == "remove" else world.bucket.upload(
                    key, GOOD if kind == "good" else BAD
                )  # fmt: skip
                sent.append((message, kind))
                kinds[sequencer(message)] = kind
                deliver(message)
            elif kind == "redeliver" and sent:
                deliver(sent[int(arg) % len(sent)][0])  # type: ignore[call-overload]
            elif kind == "bus_fails":
                world.publisher.fail_next = int(arg)  # type: ignore[call-overload]
            elif kind == "receiver_fails":
                receiver.script[path].extend([500] * int(arg))  # type: ignore[call-overload]
            elif kind == "relay":
                world.outbox.relay()
        world.publisher.fail_next = 0
        for _ in range(3):  # a bad document's message fails each time: SQS gives up (its DLQ)
            redeliver_pending()
        receiver.script[path].clear()
        world.relay(rounds=40)

        expected = sorted(settled.items())
        for p in (path, steady):
            accepted = receiver.accepted(p)
            got = sorted((str(d.body["detail"]["change"]), str(d.body["type"])) for d in accepted)  # type: ignore[index]
            assert got == expected
            assert all(d.verified for d in receiver.deliveries if d.path == p)
            assert len({d.event_id for d in accepted}) == len(accepted)
