"""S3 → SQS → the ingestion handler, end to end on a moto server and the real OpenSearch node.

Real bucket notifications (moto delivers them to the SQS queue), real DynamoDB document records
(table created from template.yaml), real OpenSearch chunks, the offline embedder; the handler is
invoked with exactly the messages SQS hands out.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest

from ragline.adapters.aws.documents import DynamoDbDocumentRegistry
from ragline.adapters.aws.objects import S3ObjectStore
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.cli.serve import LambdaContext
from ragline.config import Settings
from ragline.documents.chunker import WordCachedCounter
from ragline.domain.models import KeywordQuery, TenantScope
from ragline.services.ingest import IngestService, IngestSettings
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.rehearsal.s3_gate import S3Gate
from tests.support.cfn_tables import create_table_from_template
from tests.support.lambda_harness import load_handler
from tests.support.s3_reads import CountingClient

pytestmark = [pytest.mark.e2e, pytest.mark.opensearch]
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
SHARED_EMBEDDER = LocalOnnxEmbedder()


class World:
    def __init__(
        self,
        endpoint: str,
        opensearch_url: str,
        tmp: Path,
        settings: IngestSettings | None = None,
        reads_through: str = "",
    ) -> None:
        """``reads_through``: the S3 endpoint the ingestion reads from (a gate), else moto's own."""
        session = boto3.session.Session(region_name="us-east-1")
        self.s3 = session.client("s3", endpoint_url=endpoint)
        self.sqs = session.client("sqs", endpoint_url=endpoint)
        ddb = session.client("dynamodb", endpoint_url=endpoint)
        suffix = uuid.uuid4().hex[:8]
        self.bucket = f"docs-{suffix}"
        self.s3.create_bucket(Bucket=self.bucket)
        self.s3.put_bucket_versioning(Bucket=self.bucket, VersioningConfiguration={"Status": "Enabled"})
        self.queue_url = self.sqs.create_queue(QueueName=f"ingest-{suffix}")["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        self.s3.put_bucket_notification_configuration(
            Bucket=self.bucket,
            NotificationConfiguration={
                "QueueConfigurations": [
                    {"QueueArn": arn, "Events": ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"]}
                ]
            },
        )
        table = create_table_from_template(ddb, "DocumentsTable", f"documents-{suffix}")
        self.documents = DynamoDbDocumentRegistry(table, client=ddb)
        registry = self.registry = SqliteTenantRegistry(tmp / "tenants.sqlite")
        registry.create_namespace(new_namespace("acme", "docs"))
        self.stores = OpenSearchVectorStoreProvider(
            build_client(Settings(opensearch_url=opensearch_url)), index=f"test-{suffix}", dimension=384
        )
        self.reads = CountingClient(session.client("s3", endpoint_url=reads_through or endpoint))
        self.service = IngestService(
            registry=registry,
            documents=self.documents,
            stores=self.stores,
            embedder=SHARED_EMBEDDER,
            tokenizer=WordCachedCounter(SHARED_EMBEDDER),
            settings=settings or IngestSettings(),
            objects=S3ObjectStore(self.bucket, client=self.reads),
        )
        self.container = Container(Settings(home=tmp), ingest=self.service)

    def put(self, path: str, body: bytes) -> None:
        self.s3.put_object(Bucket=self.bucket, Key=f"acme/docs/{path}", Body=body)

    def receive(self, expected: int) -> list[dict[str, Any]]:
        """The SQS messages S3 sent, as the Lambda event source hands them to the function."""
        out: list[dict[str, Any]] = []
        for _ in range(20):
            resp = self.sqs.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1
            )
            for m in resp.get("Messages", []):
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])
                if "Records" in json.loads(m["Body"]):  # skip s3:TestEvent
                    out.append(m)
            if len(out) >= expected:
                break
        assert len(out) == expected
        return out

    def store(self) -> Any:
        return self.stores.scoped(SCOPE)


def sqs_event(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": {"ApproximateReceiveCount": "1"},
                "messageAttributes": {},
                "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:ingest",
                "awsRegion": "us-east-1",
            }
            for m in messages
        ]
    }


def object_of(message: dict[str, Any]) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(message["Body"])["Records"][0]["s3"]["object"]
    return obj


def as_s3_sends(message: dict[str, Any], **fields: str) -> dict[str, Any]:
    """The message with the object fields S3 sends and moto omits (``versionId`` of a versioned
    bucket, the ``sequencer``)."""
    body = json.loads(message["Body"])
    body["Records"][0]["s3"]["object"] |= fields
    return message | {"Body": json.dumps(body)}


def version_delete_event(like: dict[str, Any], version_id: str) -> dict[str, Any]:
    """The ``ObjectRemoved:Delete`` S3 sends when one version is deleted by id (no size), later
    than ``like``."""
    body = json.loads(like["Body"])
    record = body["Records"][0]
    record["eventName"] = "ObjectRemoved:Delete"
    record["eventTime"] = datetime.now(UTC).isoformat()
    record["s3"]["object"] = {"key": record["s3"]["object"]["key"], "versionId": version_id}
    return like | {"Body": json.dumps(body), "MessageId": str(uuid.uuid4())}


def key_of(message: dict[str, Any]) -> str:
    return str(json.loads(message["Body"])["Records"][0]["s3"]["object"]["key"])


@pytest.fixture
def world(
    moto_endpoint: str, moto_aws_env: dict[str, str], opensearch_url: str, tmp_path: Path
) -> Iterator[World]:
    w = World(moto_endpoint, opensearch_url, tmp_path)
    yield w
    w.stores.drop()


class Handler:
    """The real ingestion function, invoked the way the SQS event source does, with the world's wiring."""

    def __init__(self, world: World) -> None:
        self._module = load_handler("ingestion")
        self._container = world.container

    def __call__(self, messages: list[dict[str, Any]]) -> Any:
        return self._module.lambda_handler(sqs_event(messages), LambdaContext(), container=self._container)


@pytest.fixture
def handler(world: World) -> Handler:
    return Handler(world)


def test_s3_lifecycle_end_to_end(world: World, handler: Handler) -> None:
    # Given three files, one of them a corrupt PDF
    world.put("guide.md", b"# Guide\n\nThe blue pump must be primed before use. Prime it with clean water.")
    world.put("faq.txt", b"Warranty lasts twelve months. Returns are accepted within thirty days.")
    world.put("broken.pdf", b"%PDF-1.7 this file was truncated in transit")
    first = world.receive(3)

    # When the handler gets the batch
    result = handler(first)

    # Then exactly the corrupt file is a batch item failure, and it is recorded with its reason
    corrupt = next(m["MessageId"] for m in first if key_of(m).endswith("broken.pdf"))
    assert result == {"batchItemFailures": [{"itemIdentifier": corrupt}]}
    broken = world.documents.get("acme", "docs", "broken.pdf")
    assert broken is not None and broken.status == "failed" and broken.error_code == "unreadable_document"
    assert "pdf" in broken.error_message.lower()
    for doc in ("guide.md", "faq.txt"):
        record = world.documents.get("acme", "docs", doc)
        assert (
            record is not None and record.status == "ready" and record.chunk_count == world.store().count(doc)
        )
    assert [h.chunk.document_id for h in world.store().search(KeywordQuery(text="primed pump"))] == [
        "guide.md"
    ]
    assert world.store().count("broken.pdf") == 0

    # When guide.md is overwritten with a longer version
    longer = "# Guide\n\n" + "\n\n".join(
        f"## Step {i}\n\nTurn valve {i} slowly until it clicks." for i in range(40)
    )
    world.put("guide.md", longer.encode())
    [update] = world.receive(1)
    assert handler([update]) == {"batchItemFailures": []}
    record = world.documents.get("acme", "docs", "guide.md")
    assert record is not None and record.status == "ready" and record.chunk_count > 1
    assert world.store().count("guide.md") == record.chunk_count
    assert world.store().search(KeywordQuery(text="primed pump")) == []
    version = record.version_id

    # When the old guide.md message is replayed, nothing changes
    old = next(m for m in first if key_of(m).endswith("guide.md"))
    assert handler([old]) == {"batchItemFailures": []}
    again = world.documents.get("acme", "docs", "guide.md")
    assert again is not None and again.version_id == version and again.generation == record.generation
    assert world.store().count("guide.md") == record.chunk_count

    # When a file is deleted, its chunks are gone and its record says deleted
    # (moto sends no event for a delete marker, unlike S3's ObjectRemoved:DeleteMarkerCreated, so the
    # test removes the object's only version, which moto does notify as ObjectRemoved:Delete)
    versions = world.s3.list_object_versions(Bucket=world.bucket, Prefix="acme/docs/faq.txt")["Versions"]
    for v in versions:
        world.s3.delete_object(Bucket=world.bucket, Key="acme/docs/faq.txt", VersionId=v["VersionId"])
    [removed] = world.receive(1)
    assert handler([removed]) == {"batchItemFailures": []}
    gone = world.documents.get("acme", "docs", "faq.txt")
    assert gone is not None and gone.status == "deleted"
    assert world.store().count("faq.txt") == 0
    assert world.store().search(KeywordQuery(text="warranty")) == []


def test_unknown_namespace_is_recorded_not_indexed(world: World, handler: Handler) -> None:
    world.s3.put_object(Bucket=world.bucket, Key="acme/ghost/notes.txt", Body=b"Some notes.")
    [message] = world.receive(1)
    result = handler([message])
    assert result == {"batchItemFailures": [{"itemIdentifier": message["MessageId"]}]}
    record = world.documents.get("acme", "ghost", "notes.txt")
    assert record is not None and record.status == "failed" and record.error_code == "namespace_not_found"
    assert world.stores.scoped(TenantScope(tenant_id="acme", namespace_id="ghost")).count() == 0


# -- issue 24 ----------------------------------------------------------------------------------------------
def test_an_s3_upload_after_api_text_of_the_same_name_is_indexed(world: World, handler: Handler) -> None:
    """#2: API text took a wall-clock sequencer above every S3 one, so the upload was acknowledged as
    stale, for good; on DynamoDB records through the real handler."""
    world.service.ingest(SCOPE, filename="notes.txt", data=b"The lobby opens at nine.", source="api:")
    world.put("notes.txt", b"The lobby opens at seven on weekdays.")
    # the API text's kept original (what a reindex re-reads) sent its own event: not a document
    kept, upload = sorted(world.receive(2), key=lambda m: ".ragline" not in m["Body"])
    assert ".ragline%2Foriginals" in kept["Body"] and handler([kept]) == {"batchItemFailures": []}
    assert handler([as_s3_sends(upload, sequencer="0062A1F3C4D5E6F708")]) == {"batchItemFailures": []}
    record = world.documents.get("acme", "docs", "notes.txt")
    assert record is not None and (record.status, record.origin) == ("ready", "s3")
    assert record.source.startswith("s3://")
    assert [h.chunk.text for h in world.store().search(KeywordQuery(text="lobby"))] == [
        "The lobby opens at seven on weekdays."
    ]
    assert [r.document_id for r in world.documents.list("acme", "docs")] == ["notes.txt"]


LIMIT = 64 * 1024


@pytest.fixture
def small_limit_world(
    moto_endpoint: str, moto_aws_env: dict[str, str], opensearch_url: str, tmp_path: Path
) -> Iterator[World]:
    w = World(moto_endpoint, opensearch_url, tmp_path, IngestSettings(max_document_bytes=LIMIT))
    yield w
    w.stores.drop()


def test_events_read_the_version_they_name_and_never_the_big_current_object(
    small_limit_world: World,
) -> None:
    """#4: a late event for a small version and a version-delete event (no size) read all of the
    current object: here one 4 MiB object past a 64 KiB limit, read not at all."""
    world, handler = small_limit_world, Handler(small_limit_world)
    small = b"Pumps are primed with clean water."
    first = world.s3.put_object(Bucket=world.bucket, Key="acme/docs/pump.txt", Body=small)["VersionId"]
    world.put("pump.txt", b"word " * (800 * 1024))  # the current version, 4 MiB
    early, late = sorted(world.receive(2), key=lambda m: object_of(m)["size"])
    early = as_s3_sends(early, versionId=first)

    assert handler([early]) == {"batchItemFailures": []}  # the small version's event, handled late
    document_reads = [r for r in world.reads.requests if r["Key"] == "acme/docs/pump.txt"]
    assert sum(world.reads.read) <= len(small) + 1 and document_reads[-1]["VersionId"] == first
    record = world.documents.get("acme", "docs", "pump.txt")
    assert record is not None and record.status == "ready" and record.version_id == first

    assert handler([late]) == {"batchItemFailures": [{"itemIdentifier": late["MessageId"]}]}
    world.s3.delete_object(Bucket=world.bucket, Key="acme/docs/pump.txt", VersionId=first)
    version_deleted = version_delete_event(late, first)  # moto sends none for a non-current version
    assert handler([version_deleted]) == {
        "batchItemFailures": [{"itemIdentifier": version_deleted["MessageId"]}]
    }
    assert sum(world.reads.read) <= len(small) + 1  # not one byte of the 4 MiB version
    failed = world.documents.get("acme", "docs", "pump.txt")
    assert failed is not None and (failed.status, failed.error_code) == ("failed", "document_too_large")
    assert "acme/docs/pump.txt" in failed.error_message
    assert world.store().count("pump.txt") == 0


@pytest.mark.parametrize("may_list", [True, False], ids=["with ListBucket", "without ListBucket"])
def test_the_first_ingest_of_a_key_reads_its_missing_sidecar_so_it_needs_list_bucket(
    moto_endpoint: str, moto_aws_env: dict[str, str], opensearch_url: str, tmp_path: Path, may_list: bool
) -> None:
    """docs/deploy.md "Permissions": every upload's ingest reads the key's sidecar
    (``<key>.metadata.json``), which a document without labels does not have; S3 answers that missing
    key with 404 only to a role allowed ``s3:ListBucket``, with 403 to any other."""
    gate = S3Gate(moto_endpoint, lambda key, bucket: may_list)  # S3's answer to a missing key
    world = World(moto_endpoint, opensearch_url, tmp_path, reads_through=gate.start())
    try:
        # Given a first upload of a key, with no sidecar
        world.put("faq.txt", b"Returns are accepted within 30 days with a receipt.")
        (message,) = world.receive(1)
        result = Handler(world)([message])
        # Then its ingest asked for the sidecar
        assert "acme/docs/faq.txt.metadata.json" in [r["Key"] for r in world.reads.requests]
        record = world.documents.get("acme", "docs", "faq.txt")
        assert record is not None
        if may_list:  # and is ready with the listing grant
            assert result == {"batchItemFailures": []} and record.status == "ready"
        else:  # and fails without it, naming the grant
            assert result == {"batchItemFailures": [{"itemIdentifier": message["MessageId"]}]}
            assert (record.status, record.error_code) == ("failed", "configuration_error")
            assert "s3:ListBucket" in record.error_message
    finally:
        gate.stop()
        world.stores.drop()
