"""Scans uploaded to S3 on the AWS backend, read by Amazon Textract: S3 → SQS → the ingestion handler
on a moto server, the real OpenSearch node, and the local Textract wire server (real botocore).

With Textract as the engine the parser decodes nothing itself (the Lambda layer has neither Pillow nor
PDFium): an image goes as uploaded, a scanned PDF page as a one-page PDF. A throttled Textract fails the
message alone, which SQS redelivers; the next delivery indexes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.aws.textract import TextractRecognizer
from ragline.cli.serve import LambdaContext
from ragline.documents import images
from ragline.domain.models import KeywordQuery
from ragline.services.ingest import IngestSettings
from tests.e2e.test_s3_ingestion import World, sqs_event
from tests.support.lambda_harness import load_handler
from tests.support.textract_server import TextractServer

pytestmark = [pytest.mark.e2e, pytest.mark.opensearch]
SCANS = Path(__file__).parents[2] / "tests" / "fixtures" / "scans"


class IngestionContext(LambdaContext):
    def get_remaining_time_in_millis(self) -> int:
        return 300_000  # the ingestion function's timeout (template.yaml): OCR takes seconds a page


class Handler:
    """The real ingestion function, invoked as the SQS event source does, with the world's wiring."""

    def __init__(self, world: World) -> None:
        self._module, self._container = load_handler("ingestion"), world.container

    def __call__(self, messages: list[dict[str, Any]]) -> Any:
        return self._module.lambda_handler(sqs_event(messages), IngestionContext(), container=self._container)


@pytest.fixture
def world(
    moto_endpoint: str,
    moto_aws_env: dict[str, str],
    opensearch_url: str,
    tmp_path: Path,
    textract_server: TextractServer,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[World]:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("decoded or rendered in the function")

    for name in ("_open", "_render", "_png"):
        monkeypatch.setattr(images, name, refuse)
    engine = TextractRecognizer(client=textract_server.client(max_attempts=1))
    w = World(moto_endpoint, opensearch_url, tmp_path, settings=IngestSettings(recognizer=engine))
    yield w
    w.stores.drop()


def test_a_scanned_pdf_and_a_screenshot_uploaded_to_s3_are_read_by_textract_and_searchable(
    world: World, textract_server: TextractServer
) -> None:
    world.put("handbook.pdf", (SCANS / "handbook-150dpi.pdf").read_bytes())
    world.put("dialog.png", (SCANS / "error-dialog.png").read_bytes())
    result = Handler(world)(world.receive(2))
    assert result == {"batchItemFailures": []}
    assert len(textract_server.requests) == 3  # two scanned pages, one screenshot
    for name in ("handbook.pdf", "dialog.png"):
        record = world.documents.get("acme", "docs", name)
        assert record is not None and record.status == "ready", record
    hits = world.store().search(KeywordQuery(text="paid holiday calendar year"))
    assert hits[0].chunk.document_id == "handbook.pdf" and "27 days" in hits[0].chunk.text
    assert world.store().search(KeywordQuery(text="NW-4021"))[0].chunk.document_id == "dialog.png"


def test_a_throttled_textract_fails_the_message_alone_and_its_redelivery_indexes_it(
    world: World, textract_server: TextractServer
) -> None:
    world.put("dialog.png", (SCANS / "error-dialog.png").read_bytes())
    world.put("notes.txt", b"The workshop closes early on Fridays.")
    messages = world.receive(2)
    textract_server.fail("ThrottlingException", times=2)  # the call and botocore's one retry (max_attempts=1)
    scan = next(m["MessageId"] for m in messages if "dialog.png" in m["Body"])
    assert Handler(world)(messages) == {"batchItemFailures": [{"itemIdentifier": scan}]}
    record = world.documents.get("acme", "docs", "dialog.png")
    assert record is not None and record.status == "failed" and record.error_code == "throttled"
    assert world.store().count("notes.txt") >= 1 and world.store().count("dialog.png") == 0
    redelivered = [m for m in messages if m["MessageId"] == scan]
    assert Handler(world)(redelivered) == {"batchItemFailures": []}
    record = world.documents.get("acme", "docs", "dialog.png")
    assert record is not None and record.status == "ready" and world.store().count("dialog.png") >= 1
