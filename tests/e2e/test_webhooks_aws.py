"""Events on AWS, on moto: the EventBridge publisher puts each event on the bus, the template's rule
(its own event pattern) routes it to the delivery queue, the delivery function POSTs it signed to a
receiver on 127.0.0.1 — once per subscription, whatever the redeliveries — and a receiver that keeps
failing sees its messages moved to the delivery DLQ after the queue's ``maxReceiveCount``."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest

from ragline.adapters.aws.events import EventBridgePublisher
from ragline.adapters.aws.webhooks import DynamoDbOnceMarks, DynamoDbWebhookStore
from ragline.adapters.webhook_http import HttpWebhookTransport
from ragline.cli.serve import LambdaContext
from ragline.config import Settings
from ragline.domain import events
from ragline.domain.webhook_api import NewWebhook
from ragline.services.authentication import Principal
from ragline.services.webhooks import WebhookDelivery, WebhookService
from ragline.wiring import Container
from tests.support.cfn_tables import create_table_from_template, load_template
from tests.support.lambda_harness import load_handler
from tests.support.moto_server import REGION
from tests.support.webhook_receiver import Receiver

pytestmark = pytest.mark.e2e
T = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)


def every_event() -> list[events.Event]:
    return [
        events.document_event("document.indexed", tenant_id="acme", namespace_id="docs", document_id="a.md",
                              change="0001", generation=1, time=T, extra={"chunks": 3}),
        events.document_event("document.failed", tenant_id="acme", namespace_id="docs", document_id="b.pdf",
                              change="0002", generation=1, time=T,
                              extra={"reason": {"code": "unreadable_document", "message": "truncated"}}),
        events.document_event("document.deleted", tenant_id="acme", namespace_id="docs", document_id="a.md",
                              change="0003", generation=2, time=T),
        events.namespace_reindexed(tenant_id="acme", namespace_id="docs", generation=2, model="bow",
                                   documents=1, time=T),
        events.quota_threshold(tenant_id="acme", period="2026-03", percent=80, limit=10, runs=8, time=T),
        *(events.run_ended(tenant_id="acme", run_id=f"run-{status}", status=status, exit_reason=reason,
                           time=T.timestamp())
          for status, reason in (("completed", "answered"), ("failed", "error"), ("cancelled", "cancelled"))),
    ]  # fmt: skip


class Stack:
    """The template's bus, rule, queues and tables on moto, and the delivery function's container."""

    def __init__(self, endpoint: str, receiver: Receiver) -> None:
        session = boto3.session.Session(region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
        self.events = session.client("events", endpoint_url=endpoint)
        self.sqs = session.client("sqs", endpoint_url=endpoint)
        ddb = session.client("dynamodb", endpoint_url=endpoint)
        suffix = uuid.uuid4().hex[:8]
        resources = load_template()["Resources"]
        self.bus = f"ragline-test-{suffix}"
        self.events.create_event_bus(Name=self.bus)
        dlq = self.sqs.create_queue(QueueName=f"dlq-{suffix}")["QueueUrl"]
        self.dlq = dlq
        redrive = resources["WebhookDeliveryQueue"]["Properties"]["RedrivePolicy"]
        self.max_receives = int(redrive["maxReceiveCount"])
        policy = {"deadLetterTargetArn": self.arn(dlq), "maxReceiveCount": str(self.max_receives)}
        self.queue = self.sqs.create_queue(
            QueueName=f"deliveries-{suffix}",
            Attributes={"VisibilityTimeout": "0", "RedrivePolicy": json.dumps(policy)},  # retries at once
        )["QueueUrl"]
        rule = resources["WebhookEventsRule"]["Properties"]
        self.events.put_rule(
            Name=f"r-{suffix}", EventBusName=self.bus, EventPattern=json.dumps(rule["EventPattern"])
        )
        self.events.put_targets(
            Rule=f"r-{suffix}",
            EventBusName=self.bus,
            Targets=[{"Id": "delivery", "Arn": self.arn(self.queue)}],
        )
        tenants = create_table_from_template(ddb, "TenantsTable", f"tenants-{suffix}")
        usage = create_table_from_template(ddb, "UsageTable", f"usage-{suffix}")
        store = DynamoDbWebhookStore(tenants, client=ddb)
        marks = DynamoDbOnceMarks(usage, client=ddb)
        self.webhooks = WebhookService(store, loopback_http=True)
        self.publisher = EventBridgePublisher(self.bus, client=self.events)
        transport = HttpWebhookTransport(total_seconds=5, allow_loopback=True)
        delivery = WebhookDelivery(store, marks, transport, loopback_http=True)
        settings = Settings(backend="aws", tenants_table=tenants, usage_table=usage, event_bus_name=self.bus)
        self.container = Container(settings, webhook_store=store, once_marks=marks, webhook_delivery=delivery)
        self.receiver = receiver

    def arn(self, url: str) -> str:
        attrs = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
        return str(attrs["Attributes"]["QueueArn"])

    def subscribe(self, path: str) -> None:
        body = NewWebhook.model_validate({"url": self.receiver.url(path)})
        self.receiver.secrets[path] = self.webhooks.create(Principal.operator("acme"), body).secret

    def drain(self, rounds: int = 40) -> None:
        """The event source mapping: receive a batch, invoke the function, delete what it did not fail."""
        handler = load_handler("webhooks").lambda_handler
        for _ in range(rounds):
            got = self.sqs.receive_message(QueueUrl=self.queue, MaxNumberOfMessages=10).get("Messages", [])
            if not got:
                return
            records = [{"messageId": m["MessageId"], "body": m["Body"]} for m in got]
            result = handler({"Records": records}, LambdaContext(), container=self.container)
            failed = {f["itemIdentifier"] for f in result["batchItemFailures"]}
            for m in got:
                if m["MessageId"] not in failed:
                    self.sqs.delete_message(QueueUrl=self.queue, ReceiptHandle=m["ReceiptHandle"])

    def dead(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for _ in range(5):
            got = self.sqs.receive_message(QueueUrl=self.dlq, MaxNumberOfMessages=10).get("Messages", [])
            out += [json.loads(m["Body"]) for m in got]
            if not got:
                break
        return out


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def stack(moto_endpoint: str, moto_aws_env: dict[str, str], receiver: Receiver) -> Stack:
    return Stack(moto_endpoint, receiver)


def test_every_event_is_delivered_signed_once_through_the_bus(stack: Stack, receiver: Receiver) -> None:
    # Given a webhook that fails its first two deliveries, and one that never fails
    stack.subscribe("/flaky")
    stack.subscribe("/steady")
    receiver.script["/flaky"].extend([500, 500])
    # When every event is published, and published again (a redelivered ingestion message re-announces)
    stack.publisher.publish(every_event())
    stack.publisher.publish(every_event())
    stack.drain()
    # Then each receiver kept each event exactly once, every delivery signed
    ids = sorted(e.id for e in every_event())
    for path in ("/flaky", "/steady"):
        assert sorted(d.event_id for d in receiver.accepted(path)) == ids, path
    assert all(d.verified for d in receiver.deliveries)
    assert {d.body["type"] for d in receiver.accepted("/steady")} == set(events.EVENT_TYPES)
    assert stack.dead() == []


def test_a_receiver_that_keeps_failing_is_dead_lettered(stack: Stack, receiver: Receiver) -> None:
    # Given a webhook whose receiver always answers 500
    stack.subscribe("/down")
    receiver.always["/down"] = 500
    # When an event is published and the queue drained
    (event,) = every_event()[:1]
    stack.publisher.publish([event])
    stack.drain()
    # Then it was tried maxReceiveCount times, then moved to the DLQ, as EventBridge's envelope
    assert [d.status for d in receiver.deliveries] == [500] * stack.max_receives
    (dead,) = stack.dead()
    assert dead["detail"]["id"] == event.id and dead["detail-type"] == "document.indexed"
