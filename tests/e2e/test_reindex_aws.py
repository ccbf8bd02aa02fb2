"""Issue 29 #4 on the aws backend: a reindex switches the embedding model under concurrent searches
with DynamoDB registries, S3 originals (moto), one OpenSearch index per model (the shared node), and
its steps carried by SQS and run by the real ingestion function — every search answers from exactly
one generation, none fails, none comes back empty."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from ragline.adapters.aws.documents import DynamoDbDocumentRegistry
from ragline.adapters.aws.objects import S3ObjectStore
from ragline.adapters.aws.step_queue import SqsStepQueue
from ragline.adapters.aws.tenants import DynamoDbTenantRegistry
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.cli.serve import LambdaContext
from ragline.config import Settings
from ragline.domain.api import NamespacePatch, SearchRequest
from ragline.domain.generations import storage_scope
from ragline.domain.models import TenantScope
from ragline.services.authentication import Principal
from ragline.services.generations import ModelCatalog, Space
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.integration.test_reindex import SHORT, WORDS, ModelA, ModelB, document, generation_of
from tests.support.cfn_tables import create_table_from_template
from tests.support.lambda_harness import load_handler
from tests.support.vectors import DIM

pytestmark = [pytest.mark.e2e, pytest.mark.opensearch]
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
INGESTION = load_handler("ingestion")


@pytest.fixture
def world(
    moto_endpoint: str, moto_aws_env: dict[str, str], opensearch_url: str, tmp_path: Path
) -> Iterator[tuple[Container, Any, str]]:
    session = boto3.session.Session(region_name="us-east-1")
    s3 = session.client("s3", endpoint_url=moto_endpoint)
    sqs = session.client("sqs", endpoint_url=moto_endpoint)
    ddb = session.client("dynamodb", endpoint_url=moto_endpoint)
    suffix = uuid.uuid4().hex[:8]
    s3.create_bucket(Bucket=f"docs-{suffix}")
    queue_url = sqs.create_queue(QueueName=f"ingest-{suffix}")["QueueUrl"]
    client = build_client(Settings(opensearch_url=opensearch_url))
    a, b = ModelA(), ModelB()
    stores_a = OpenSearchVectorStoreProvider(client, index=f"test-a-{suffix}", dimension=DIM)
    stores_b = OpenSearchVectorStoreProvider(client, index=f"test-b-{suffix}", dimension=DIM)
    catalog = ModelCatalog(
        a.model_id, {a.model_id: lambda: Space(a, a, stores_a), b.model_id: lambda: Space(b, b, stores_b)}
    )
    settings = Settings(
        home=tmp_path, reindex_queue_url=queue_url, reindex_step_documents=3, reindex_retire_seconds=5
    )
    c = Container(
        settings,
        registry=DynamoDbTenantRegistry(
            create_table_from_template(ddb, "TenantsTable", f"t-{suffix}"), client=ddb
        ),
        documents=DynamoDbDocumentRegistry(
            create_table_from_template(ddb, "DocumentsTable", f"d-{suffix}"), client=ddb
        ),
        objects=S3ObjectStore(f"docs-{suffix}", client=s3),
        embedder=a,
        tokenizer=a,
        stores=stores_a,
        catalog=catalog,
        step_queue=SqsStepQueue(queue_url, client=sqs),
    )
    c.tenancy.create_tenant("acme")
    c.registry.create_namespace(new_namespace("acme", "docs", default=True))
    for i in range(8):
        c.ingest.ingest(SCOPE, filename=f"d{i}.txt", data=document(i).encode())
    yield c, sqs, queue_url
    stores_a.drop()
    stores_b.drop()


def deliver(c: Container, sqs: Any, queue_url: str, wait: int = 0) -> list[str]:
    """Hand the queued messages to the ingestion function, as its SQS event source would; their kinds."""
    resp = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=wait)
    messages = resp.get("Messages", [])
    if not messages:
        return []
    records = [
        {"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"]}
        for m in messages
    ]
    out = INGESTION.lambda_handler({"Records": records}, LambdaContext(), container=c)
    assert out["batchItemFailures"] == []
    for m in messages:
        sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=m["ReceiptHandle"])
    return ["retire" if '"retire"' in m["Body"] else "build" for m in messages]


def test_the_model_switches_under_concurrent_searches_on_aws(world: tuple[Container, Any, str]) -> None:
    c, sqs, queue_url = world
    principal = Principal(tenant_id="acme", scopes=frozenset({"admin", "search"}))
    stop, switched = threading.Event(), threading.Event()
    after_switch = [threading.Event() for _ in range(3)]
    seen: list[set[int]] = []
    failures: list[BaseException] = []

    def searcher(n: int) -> None:
        while not stop.is_set():
            began_after_switch = switched.is_set()
            try:
                request = SearchRequest(query=f"{WORDS[n]} {WORDS[n + 1]}{n}", k=3)
                hits = c.search.search(principal, "docs", request).hits
            except BaseException as exc:
                failures.append(exc)
                return
            seen.append(generation_of(hits) if hits else set())
            if began_after_switch:
                after_switch[n].set()

    threads = [threading.Thread(target=searcher, args=(n,), daemon=True) for n in range(3)]
    for t in threads:
        t.start()
    try:
        patch = {"embeddingModel": "bow-b", "chunkTokens": SHORT, "chunkOverlapTokens": 2}
        c.namespaces.update(principal, "docs", NamespacePatch.model_validate(patch))
        kinds: list[str] = []
        while c.registry.get_namespace("acme", "docs").settings.generation == 1 and len(kinds) < 50:
            kinds += deliver(c, sqs, queue_url)  # the build steps, one SQS message each
        switched.set()
        for e in after_switch:  # every run bound to the old generation has ended
            assert e.wait(120)
        for _ in range(30):  # the retire step, delayed on the queue
            kinds += deliver(c, sqs, queue_url, wait=1)
            if "retire" in kinds:
                break
        assert kinds.count("retire") == 1 and kinds.count("build") >= 3
        more = len(seen) + 2 * len(threads)
        while len(seen) < more and not failures and all(t.is_alive() for t in threads):
            stop.wait(0.01)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert failures == []
    assert seen and all(len(g) == 1 for g in seen), [g for g in seen if len(g) != 1][:3]
    assert {next(iter(g)) for g in seen} == {1, 2}
    view = c.namespaces.get(principal, "docs")
    assert (view.generation, view.embedding_model) == (2, "bow-b")
    assert view.rebuild is not None and (view.rebuild.documents_done, view.rebuild.documents_total) == (8, 8)
    old = c.stores.scoped(storage_scope(SCOPE, 1))
    assert all(old.count(f"d{i}.txt") == 0 for i in range(8))  # the old generation was dropped


def test_deleting_the_tenant_purges_every_model_s_store(world: tuple[Container, Any, str]) -> None:
    # Given a namespace rebuilt with another model, whose generation lives in that model's index
    c, sqs, queue_url = world
    principal = Principal(tenant_id="acme", scopes=frozenset({"admin"}))
    c.namespaces.update(principal, "docs", NamespacePatch.model_validate({"embeddingModel": "bow-b"}))
    for _ in range(50):
        if c.registry.get_namespace("acme", "docs").settings.generation == 2:
            break
        deliver(c, sqs, queue_url)
    b = c.catalog.space("bow-b")
    assert b is not None and b.stores.scoped(storage_scope(SCOPE, 2)).count() > 0
    # When the tenant is deleted, then nothing of it is left in either model's index
    c.tenant_deletion.delete("acme")
    assert b.stores.scoped(storage_scope(SCOPE, 2)).count() == 0
    assert c.stores.scoped(SCOPE).count() == 0
