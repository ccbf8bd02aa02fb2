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


def test_the_local_thread_runs_a_step_again_that_waits_on_something_in_flight() -> None:
    # Given a step whose first run waits on a document being written (as an SQS message would)
    import threading

    from ragline import errors
    from ragline.adapters.embedded.step_queue import ThreadStepQueue

    runs: list[ReindexStep] = []
    done = threading.Event()

    def run(step: ReindexStep) -> None:
        runs.append(step)
        if len(runs) == 1:
            raise errors.DocumentBusy("d1.txt is being written", document_id="d1.txt")
        done.set()

    # When the local server's queue runs it, then the step comes back and runs again
    ThreadStepQueue(run, retry_seconds=0.01).submit(ReindexStep("acme", "docs", 2, after=""))
    assert done.wait(10)
    assert runs == [ReindexStep("acme", "docs", 2, after="")] * 2
