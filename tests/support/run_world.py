"""A tenant served over real HTTP by ``ragline serve``'s app (``tests.support.served_api``), on the
embedded backend or on DynamoDB (moto server: the ledger, the run log, the conversations, the tenants
and the document records in the template's tables; evaluation jobs in an S3 bucket): the world of the
runs, conversations and evaluations tests."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.config import Settings
from ragline.domain.billing import current_period
from ragline.domain.events import Event
from ragline.domain.models import TenantScope
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.served_api import PacedModel, ServedApi, read_events, sse_blocks
from tests.support.vectors import DIM

QUESTION = {"messages": [{"role": "user", "content": "When do rockets launch?"}], "namespaces": ["docs"]}


class Announced:
    """The event publisher: what was announced, in order."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def publish(self, events: Sequence[Event]) -> None:
        self.events.extend(events)


class World:
    def __init__(self, container: Container, model: PacedModel, announced: Announced) -> None:
        self.c, self.model, self.announced = container, model, announced
        c = container
        c.tenancy.create_tenant("acme")
        c.tenancy.create_tenant("globex")
        c.registry.create_namespace(new_namespace("acme", "docs", default=True))
        c.ingest.ingest(
            TenantScope(tenant_id="acme", namespace_id="docs"),
            filename="rockets.txt",
            data=b"Acme rockets launch at dawn from pad 39.",
            document_id="rockets.txt",
        )
        self.keys = {
            "operator": c.tenancy.create_key("acme", scopes=["chat", "admin"])[0],
            "users": c.tenancy.create_key("acme", scopes=["chat"], assert_user=True)[0],
            "limited": c.tenancy.create_key("acme", scopes=["chat"], namespaces=["docs"])[0],
            "search": c.tenancy.create_key("acme", scopes=["search"])[0],
            "globex": c.tenancy.create_key("globex", scopes=["chat", "admin"])[0],
        }
        self.api = ServedApi(container)

    def headers(self, key: str = "operator", user: str | None = None, **extra: str) -> dict[str, str]:
        headers = {"authorization": f"Bearer {self.keys[key]}", **extra}
        return {**headers, "ragline-user-id": user} if user else headers

    def runs(self) -> int:
        return self.c.ledger.period_runs("acme", current_period())

    def log(self, run_id: str, after: int = 0, **headers: str) -> list[dict[str, str]]:
        response = self.api.client.get(
            f"/v1/runs/{run_id}/events", headers={**self.headers(), "last-event-id": str(after), **headers}
        )
        assert response.status_code == 200, response.text
        return sse_blocks(response.text)

    def wait_until(self, run_id: str, *statuses: str, seconds: float = 20) -> dict[str, Any]:
        ends = time.monotonic() + seconds
        while True:
            view = self.api.client.get(f"/v1/runs/{run_id}", headers=self.headers()).json()
            if view["status"] in statuses or time.monotonic() > ends:
                return dict(view)
            time.sleep(0.05)


def build(container: Container, model: PacedModel, announced: Announced) -> Iterator[World]:
    world = World(container, model, announced)
    try:
        yield world
    finally:
        world.api.stop()
        queue = container.__dict__.get("run_queue")
        if queue is not None:
            queue.drain()
        container.close()


@pytest.fixture(params=["embedded", "dynamodb"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    model, announced = PacedModel(), Announced()
    parts: dict[str, Any] = {
        "stores": SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM),
        "embedder": BowEmbedder(),
        "tokenizer": BowEmbedder(),
        "chat_model": model,
        "reranker": None,
        "event_publisher": announced,
    }
    if request.param == "dynamodb":
        parts |= dynamodb_parts(request)
    yield from build(Container(Settings(home=tmp_path / "home"), **parts), model, announced)


def dynamodb_parts(request: pytest.FixtureRequest) -> dict[str, Any]:
    import boto3

    from ragline.adapters.aws.documents import DynamoDbDocumentRegistry
    from ragline.adapters.aws.ledger import DynamoDbUsageLedger
    from ragline.adapters.aws.objects import S3ObjectStore
    from ragline.adapters.aws.runs import DynamoDbConversationStore, DynamoDbRunLog
    from ragline.adapters.aws.tenants import DynamoDbTenantRegistry
    from tests.support.cfn_tables import create_table_from_template

    client = request.getfixturevalue("dynamodb_client")
    suffix = uuid.uuid4().hex[:8]
    usage = create_table_from_template(client, "UsageTable", f"usage-{suffix}")
    tenants = create_table_from_template(client, "TenantsTable", f"tenants-{suffix}")
    documents = create_table_from_template(client, "DocumentsTable", f"documents-{suffix}")
    s3 = boto3.session.Session().client("s3", endpoint_url=request.getfixturevalue("moto_endpoint"))
    bucket = f"evaluations-{suffix}"
    s3.create_bucket(Bucket=bucket)
    return {
        "evaluation_objects": S3ObjectStore(bucket, client=s3),
        "ledger": DynamoDbUsageLedger(usage, client=client),
        "run_log": DynamoDbRunLog(usage, client=client),
        "conversation_store": DynamoDbConversationStore(usage, client=client),
        "registry": DynamoDbTenantRegistry(tenants, client=client),
        "documents": DynamoDbDocumentRegistry(documents, client=client),
    }


def stream(
    world: World, body: dict[str, Any] | None = None, limit: int | None = None, **headers: str
) -> tuple[str, list[dict[str, str]]]:
    """A streamed chat, read to its end or until ``limit`` events (then the connection is dropped):
    its run id (the response header) and the events read."""
    with world.api.client.stream(
        "POST", "/v1/chat", json=body or QUESTION, headers={**world.headers(), **headers}
    ) as response:
        assert response.status_code == 200
        return response.headers["ragline-run-id"], read_events(response, limit)
