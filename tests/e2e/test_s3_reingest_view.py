"""An S3 upload through the real ingestion function, on moto (bucket notifications to SQS, DynamoDB
document records) and the embedded store and ledger:

- re-uploading identical bytes is a new S3 version that costs nothing — nothing parsed or embedded,
  the tenant's ingestion usage as it was — and the document is reported unchanged;
- every view a client or the chat model gets (search hits, chat sources and the tool results the
  model reads, hosting-search chunks, document views) names the document by the tenant's own path
  for it, never the deployment's bucket or its ``s3://`` URI.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import boto3
import pytest

from ragline.adapters.aws.documents import DynamoDbDocumentRegistry
from ragline.adapters.aws.objects import S3ObjectStore
from ragline.agents.events import ChatResponse
from ragline.cli.serve import LambdaContext
from ragline.config import Settings
from ragline.domain.api import ChatRequest, HostingSearchRequest, IngestionUsage
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.e2e.test_s3_ingestion import sqs_event
from tests.support.cfn_tables import create_table_from_template
from tests.support.fakes import BowEmbedder, CountingEmbedder, ScriptedChatModel, Turn
from tests.support.lambda_harness import authorizer_context, call_rest, load_handler

pytestmark = pytest.mark.e2e
PATH = "manuals/pump.md"
PUMP = b"# Pump\n\nPrime the pump with clean water. Open the valve slowly. Close it when the tank is full."


class World:
    """A versioned bucket notifying a queue, the DynamoDB document table, and containers over them."""

    def __init__(self, endpoint: str, home: Path) -> None:
        session = boto3.session.Session(region_name="us-east-1")
        self.s3 = session.client("s3", endpoint_url=endpoint)
        self.sqs = session.client("sqs", endpoint_url=endpoint)
        ddb = session.client("dynamodb", endpoint_url=endpoint)
        suffix = uuid.uuid4().hex[:8]
        self.bucket = f"ragline-docs-{suffix}"
        self.s3.create_bucket(Bucket=self.bucket)
        self.s3.put_bucket_versioning(Bucket=self.bucket, VersioningConfiguration={"Status": "Enabled"})
        self.queue_url = self.sqs.create_queue(QueueName=f"ingest-{suffix}")["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])
        self.s3.put_bucket_notification_configuration(
            Bucket=self.bucket,
            NotificationConfiguration={
                "QueueConfigurations": [
                    {"QueueArn": arn["Attributes"]["QueueArn"], "Events": ["s3:ObjectCreated:*"]}
                ]
            },
        )
        table = create_table_from_template(ddb, "DocumentsTable", f"documents-{suffix}")
        self.embedder = CountingEmbedder()
        # semantic chunking embeds every sentence to cut: a re-parse would show as embedding
        self.settings = Settings(
            home=home, documents_bucket=self.bucket, chunking="semantic", reranker="none"
        )
        self.parts: dict[str, Any] = {
            "objects": S3ObjectStore(self.bucket, client=self.s3),
            "documents": DynamoDbDocumentRegistry(table, client=ddb),
            "embedder": self.embedder,
            "tokenizer": BowEmbedder(),
        }
        self.container = self.with_parts()
        self.container.tenancy.create_tenant("acme")
        self.container.registry.create_namespace(new_namespace("acme", "docs", default=True))
        self.ingestion = load_handler("ingestion")

    def with_parts(self, **more: Any) -> Container:
        """A container over the same bucket, table, store and ledger (e.g. with a scripted chat model)."""
        return Container(self.settings, **self.parts, **more)

    def upload(self, body: bytes) -> None:
        """Put the object and run the ingestion function on the message S3 sent for it."""
        self.s3.put_object(Bucket=self.bucket, Key=f"acme/docs/{PATH}", Body=body)
        messages: list[dict[str, Any]] = []
        for _ in range(20):
            got = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
            for m in got.get("Messages", []):
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])
                if "Records" in json.loads(m["Body"]):  # not the s3:TestEvent
                    messages.append(m)
            if messages:
                break
        assert len(messages) == 1
        result = self.ingestion.lambda_handler(sqs_event(messages), LambdaContext(), container=self.container)
        assert result == {"batchItemFailures": []}

    def ingestion_usage(self) -> IngestionUsage:
        return self.container.metering.usage_report(Principal.operator("acme")).ingestion

    def rest(self, function: str, method: str, path: str, resource: str, body: Any = None) -> Any:
        status, out = call_rest(
            load_handler(function),
            self.container,
            method,
            path,
            resource=resource,
            authorizer=authorizer_context("acme"),
            body=body,
        )
        assert status == 200, out
        return out


@pytest.fixture
def world(moto_endpoint: str, moto_aws_env: dict[str, str], tmp_path: Path) -> World:
    return World(moto_endpoint, tmp_path)


def test_the_same_bytes_uploaded_again_are_unchanged_and_cost_nothing(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an object ingested from its S3 event
    world.upload(PUMP)
    first = world.container.documents.get("acme", "docs", PATH)
    assert first is not None and first.status == "ready" and first.recipe  # kept in DynamoDB
    once = world.ingestion_usage()
    assert once.documents == 1 and once.embedded_tokens > 0 and world.embedder.embedded
    world.embedder.embedded.clear()

    # When the same bytes are uploaded again (a new S3 version, a new event)
    capsys.readouterr()
    world.upload(PUMP)

    # Then nothing is embedded, the tenant's ingestion usage is as it was, and the new version serves
    assert world.embedder.embedded == []
    assert world.ingestion_usage() == once
    assert '"IngestSkipped":[1.0]' in capsys.readouterr().out  # the function's metrics: skipped
    again = world.container.documents.get("acme", "docs", PATH)
    assert again is not None and again.status == "ready" and again.generation > first.generation
    assert (again.chunk_count, again.content_hash) == (first.chunk_count, first.content_hash)

    # And a changed file is charged
    world.upload(PUMP + b" Drain it before the first frost.")
    assert world.ingestion_usage().documents == 2 and world.embedder.embedded


def leaks(world: World, body: object) -> list[str]:
    """What of the deployment's storage ``body`` (any JSON-able value) shows: nothing, here."""
    text = json.dumps(body)
    return [needle for needle in ("s3://", world.bucket, "acme/docs/") if needle in text]


def test_every_view_names_an_s3_upload_by_its_path_in_the_namespace(world: World) -> None:
    world.upload(PUMP)

    # search
    found = world.rest(
        "search",
        "POST",
        "/v1/namespaces/docs/search",
        "/v1/namespaces/{namespace}/search",
        {"query": "prime the pump", "k": 3},
    )
    assert [(h["documentId"], h["source"]) for h in found["hits"]] == [(PATH, PATH)]
    assert leaks(world, found) == []

    # the document's view, alone and listed
    one = world.rest(
        "documents",
        "GET",
        "/v1/namespaces/docs/documents/manuals%2Fpump.md",
        "/v1/namespaces/{namespace}/documents/{document_id}",
    )
    listed = world.rest(
        "documents", "GET", "/v1/namespaces/docs/documents", "/v1/namespaces/{namespace}/documents"
    )
    assert one["source"] == PATH and [d["source"] for d in listed["documents"]] == [PATH]
    assert leaks(world, [one, listed]) == []

    # hosting search (offline: no model endpoint)
    hosted = world.container.hosting_search.search(
        Principal(tenant_id="acme", scopes=frozenset({"search"})),
        HostingSearchRequest.model_validate({"query": "How do I prime the pump?", "mode": "fast"}),
    )
    assert hosted.chunks and {c.source for c in hosted.chunks} == {PATH}
    assert leaks(world, hosted.model_dump(mode="json")) == []

    # chat: the sources cited, and the tool results the model read
    args: dict[str, object] = {"query": "prime the pump"}
    search: Turn = [("search", args)]
    model = ScriptedChatModel([search, [f'Prime it with clean water <citation ids="{PATH}#0"/>.']])
    chat = world.with_parts(chat_model=model)
    request = ChatRequest.model_validate({"messages": [{"role": "user", "content": "How do I prime it?"}]})
    answer = ChatResponse.collect(
        chat.chat.answer_chat(Principal(tenant_id="acme", scopes=frozenset({"chat"})), request)
    )
    assert answer.error is None and [s.source for s in answer.sources] == [PATH]
    assert leaks(world, answer.model_dump(mode="json")) == []
    shown_to_model = [m.model_dump(mode="json") for messages, _ in model.seen for m in messages]
    assert any(PATH in json.dumps(m) for m in shown_to_model)  # the results reached it
    assert leaks(world, shown_to_model) == []
