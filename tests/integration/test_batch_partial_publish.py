"""A batch publish that fails for some documents fails exactly their messages (SQS partial batch
response), with records — and the events announcing them — matching what is served: on the OpenSearch
node, whose fence ``_bulk`` answers one document's item 429 (through tests/support/bulk_faults.py) while
it applies the nine others."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch import store as opensearch_store
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.cli.serve import LambdaContext
from ragline.config import Settings
from ragline.domain.models import TenantScope
from tests.support.bulk_faults import BulkFaults
from tests.support.event_world import EventWorld
from tests.support.lambda_harness import load_handler
from tests.support.vectors import DIM
from tests.support.webhook_receiver import Receiver

pytestmark = [pytest.mark.integration, pytest.mark.opensearch]
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
NAMES = [f"note{i}.md" for i in range(10)]
REFUSED = "note4.md"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def faults(opensearch_url: str) -> Iterator[BulkFaults]:
    proxy = BulkFaults(opensearch_url).start()
    yield proxy
    proxy.stop()


@pytest.fixture
def world(
    tmp_path: Path, receiver: Receiver, faults: BulkFaults, monkeypatch: pytest.MonkeyPatch
) -> Iterator[EventWorld]:
    """Events on, the chunks on the node through the faulty proxy, a webhook for every event."""
    monkeypatch.setattr(opensearch_store, "BULK_RETRIES", 1)  # a 429 is sent again once, after 1 s
    client = build_client(Settings(opensearch_url=faults.url))
    node = OpenSearchVectorStoreProvider(client, index=f"test-{uuid.uuid4().hex[:10]}", dimension=DIM)
    w = EventWorld(tmp_path, receiver, stores=node)
    w.subscribe("/hook")
    yield w
    node.drop()
    node.close()


def uploads(world: EventWorld) -> dict[str, dict[str, Any]]:
    """Each note uploaded: its SQS message (one S3 notification)."""
    return {
        name: {
            "messageId": f"m-{name}",
            "receiptHandle": "h",
            "eventSource": "aws:sqs",
            "body": world.bucket.upload(
                f"acme/docs/{name}", f"# {name}\n\nThe pump{name[4]} valve is primed before a start.".encode()
            ),
        }
        for name in NAMES
    }


def handle(world: EventWorld, messages: list[dict[str, Any]]) -> list[str]:
    """The ingestion function on one SQS batch: the ids of the messages it hands back."""
    result = load_handler("ingestion").lambda_handler(
        {"Records": messages}, LambdaContext(), container=world.container
    )
    return [f["itemIdentifier"] for f in result["batchItemFailures"]]


def announced(receiver: Receiver, kind: str) -> list[str]:
    return sorted(
        str(d.body["detail"]["document_id"]) for d in receiver.accepted("/hook") if d.body["type"] == kind
    )  # type: ignore[index]


def assert_records_match_what_is_served(world: EventWorld) -> None:
    store = world.container.stores.scoped(SCOPE)
    for name in NAMES:
        record = world.container.documents.get("acme", "docs", name)
        assert record is not None
        assert (store.count(name) > 0) == (record.status == "ready"), (name, record.status)


def test_one_refused_fence_fails_its_message_alone_in_the_ingestion_batch_response(
    world: EventWorld, faults: BulkFaults, receiver: Receiver
) -> None:
    # Given ten notes uploaded, and a node that answers the fence write of note4 429 (queue full)
    messages = uploads(world)
    faults.refuse[rq.fence_id(SCOPE, REFUSED)] = 429
    # When the ingestion function handles the ten messages as one SQS batch
    failed = handle(world, list(messages.values()))
    world.relay()
    # Then only note4's message comes back; nine records are ready, served and announced indexed
    assert failed == [f"m-{REFUSED}"]
    assert faults.refused == [rq.fence_id(SCOPE, REFUSED)] * 2  # sent again once, refused again
    records = {n: world.container.documents.get("acme", "docs", n) for n in NAMES}
    assert {n for n, r in records.items() if r and r.status == "ready"} == set(NAMES) - {REFUSED}
    refused = records[REFUSED]
    assert refused is not None and refused.status == "failed" and refused.error_code == "throttled"
    assert announced(receiver, "document.indexed") == sorted(set(NAMES) - {REFUSED})
    assert announced(receiver, "document.failed") == [REFUSED]
    assert_records_match_what_is_served(world)
    # and when SQS redelivers that message to a node that accepts it, note4 is served and announced too
    faults.heal()
    assert handle(world, [messages[REFUSED]]) == []
    world.relay()
    assert announced(receiver, "document.indexed") == sorted(NAMES)
    assert_records_match_what_is_served(world)


def test_one_refused_fence_fails_its_batch_item_alone(world: EventWorld, faults: BulkFaults) -> None:
    # Given ten notes uploaded, and a node that answers the fence write of note4 429 every time
    messages = uploads(world)
    faults.refuse[rq.fence_id(SCOPE, REFUSED)] = 429
    # When one ingest batch runs the ten messages and publishes them together
    batch = world.container.ingest.batch()
    for name, message in messages.items():
        batch.notification(name, message["body"])
    outcomes = {o.key: o for o in batch.finish()}
    # Then note4's item alone failed, with the node's reason; the nine others are indexed
    assert [k for k, o in outcomes.items() if o.error is not None] == [REFUSED]
    assert outcomes[REFUSED].error is not None and "throttled" in str(outcomes[REFUSED].error)
    assert all(o.results and o.results[0].outcome == "indexed" for k, o in outcomes.items() if k != REFUSED)
    assert_records_match_what_is_served(world)
