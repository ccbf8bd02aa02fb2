"""The ingestion Lambda handler on the embedded backend: an SQS batch of S3 notifications, each
message ingested on its own, failures reported per message (SQS's partial batch response)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from ragline.cli.serve import LambdaContext
from ragline.config import Settings
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import load_handler

pytestmark = pytest.mark.unit


def message(body: str) -> dict[str, Any]:
    return {
        "messageId": str(uuid.uuid4()),
        "receiptHandle": "handle",
        "body": body,
        "attributes": {"ApproximateReceiveCount": "1"},
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:ingest",
        "awsRegion": "us-east-1",
    }


def created(key: str, sequencer: str) -> str:
    record = {
        "eventName": "ObjectCreated:Put",
        "s3": {"bucket": {"name": "docs"}, "object": {"key": key, "size": 1, "sequencer": sequencer}},
    }
    return json.dumps({"Records": [record]})


@pytest.fixture
def container(tmp_path: Path) -> Container:
    c = Container(Settings(home=tmp_path), embedder=BowEmbedder(), tokenizer=BowEmbedder())
    c.registry.create_namespace(new_namespace("acme", "docs", default=True))
    c.objects.put("acme/docs/pump.md", b"# Pump\n\nPrime the blue pump with clean water before use.")
    c.objects.put("acme/docs/broken.pdf", b"%PDF-1.7 this file was truncated in transit")
    return c


def test_only_the_failed_message_is_reported_and_the_rest_is_ingested(container: Container) -> None:
    good = message(created("acme/docs/pump.md", "0A"))
    broken = message(created("acme/docs/broken.pdf", "0B"))
    garbage = message("not an S3 notification")
    handler = load_handler("ingestion")
    result = handler.lambda_handler(
        {"Records": [good, broken, garbage]}, LambdaContext(), container=container
    )
    assert result == {
        "batchItemFailures": [
            {"itemIdentifier": broken["messageId"]},
            {"itemIdentifier": garbage["messageId"]},
        ]
    }
    pump = container.documents.get("acme", "docs", "pump.md")
    assert pump is not None and pump.status == "ready"
    failed = container.documents.get("acme", "docs", "broken.pdf")
    assert failed is not None and failed.status == "failed" and failed.error_code == "unreadable_document"


def test_a_batch_that_fails_whole_is_reported_message_by_message(container: Container) -> None:
    batch = [message("{}"), message(created("acme/docs/broken.pdf", "0C"))]
    result = load_handler("ingestion").lambda_handler(
        {"Records": batch}, LambdaContext(), container=container
    )
    assert result == {"batchItemFailures": [{"itemIdentifier": m["messageId"]} for m in batch]}


def test_an_empty_batch_acknowledges_nothing(container: Container) -> None:
    result = load_handler("ingestion").lambda_handler({"Records": []}, LambdaContext(), container=container)
    assert result == {"batchItemFailures": []}


class LateContext(LambdaContext):
    """An invocation with 5 s left: too little to start a message."""

    def get_remaining_time_in_millis(self) -> int:
        return 5_000


def test_a_message_that_would_start_with_too_little_time_left_is_left_for_redelivery(
    container: Container,
) -> None:
    late = message(created("acme/docs/pump.md", "0D"))

    result = load_handler("ingestion").lambda_handler({"Records": [late]}, LateContext(), container=container)

    assert result == {"batchItemFailures": [{"itemIdentifier": late["messageId"]}]}
    assert container.documents.get("acme", "docs", "pump.md") is None  # never claimed: not a failed document


class FortySecondsLeft(LambdaContext):
    def get_remaining_time_in_millis(self) -> int:
        return 40_000


def test_a_batch_stops_starting_messages_once_its_time_runs_short(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given three messages, 40 s left and each message taking 12 s (its object read), the third would
    start with 16 s left, under the 20 s a message needs: it is never started and is left for
    redelivery; the first two are indexed."""
    from ragline.services.embedding_run import WorkerDeadline

    now = [0.0]
    monkeypatch.setitem(WorkerDeadline.of_lambda.__func__.__kwdefaults__, "clock", lambda: now[0])  # type: ignore[attr-defined]
    read = container.objects.get

    def slow_read(key: str, *args: Any, **kwargs: Any) -> bytes:
        if not key.endswith(".metadata.json"):  # its sidecar's read (none here) is not the slow one
            now[0] += 12.0
        return read(key, *args, **kwargs)

    monkeypatch.setattr(container.objects, "get", slow_read)
    for name in ("a.md", "b.md", "c.md"):
        container.objects.put(f"acme/docs/{name}", f"# {name}\n\nA short note called {name}.".encode())
    batch = [message(created(f"acme/docs/{n}", f"1{i}")) for i, n in enumerate(("a.md", "b.md", "c.md"))]

    result = load_handler("ingestion").lambda_handler(
        {"Records": batch}, FortySecondsLeft(), container=container
    )

    assert result == {"batchItemFailures": [{"itemIdentifier": batch[2]["messageId"]}]}
    assert [
        getattr(container.documents.get("acme", "docs", n), "status", None) for n in ("a.md", "b.md", "c.md")
    ] == [
        "ready",
        "ready",
        None,  # never claimed: not a failed document
    ]
