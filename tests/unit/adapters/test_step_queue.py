"""The SQS step queue's request (pure) and the step's message body: a reindex step survives the queue
as itself, an S3 notification is never taken for one, and a delay is capped at SQS's 900 s."""

from __future__ import annotations

import json

from ragline.adapters.aws.step_queue import send_request
from ragline.domain.generations import ReindexStep


def test_a_step_survives_its_message_body() -> None:
    step = ReindexStep("acme", "docs", 3, "retire", "bow-b")
    assert ReindexStep.parse(step.body()) == step


def test_other_messages_are_not_steps() -> None:
    notification = json.dumps({"Records": [{"eventName": "ObjectCreated:Put"}]})
    assert ReindexStep.parse(notification) is None
    assert ReindexStep.parse("not json") is None
    assert ReindexStep.parse(json.dumps({"ragline-reindex": "x"})) is None


def test_the_send_request_caps_the_delay_at_sqs_limit() -> None:
    step = ReindexStep("acme", "docs", 2)
    request = send_request("https://sqs/q", step, 3600.0)
    assert request == {"QueueUrl": "https://sqs/q", "MessageBody": step.body(), "DelaySeconds": 900}
    assert send_request("https://sqs/q", step, 0.4)["DelaySeconds"] == 0
