"""Runs that survive and conversations, through the built chat function under the real Web Adapter
(issue 42): a streamed run's events carry their sequence numbers, and a client that dropped after any
of them resumes with ``Last-Event-ID`` and gets exactly the rest; the run's final event names its
conversation, whose second turn sends only its own message; a background run is queued (202), its
message on the runs queue is the chat function's SQS event (the adapter's ``/events`` path), it runs
with no client and announces ``run.completed`` once through the template's bus and rule; a queued
run cancelled before its worker gets it never runs. Charged once per run that did work."""

from __future__ import annotations

import json
from typing import Any

from tests.rehearsal.api_calls import rest_event
from tests.rehearsal.host import split_stream
from tests.rehearsal.steps import runs_charged, sqs_records
from tests.rehearsal.world import World
from tests.support.openai_replay import text, tool_call

ASK = "Can I return a used bike?"
RUN = "/v1/runs/{run_id}"
EVENTS = f"{RUN}/events"
CONVERSATION = "/v1/conversations/{conversation_id}"


def chat_fn(
    w: World, method: str, path: str, resource: str, ctx: dict[str, Any], body: Any = None, **headers: str
) -> tuple[int, dict[str, Any], bytes]:
    """One request to the chat function through the adapter: (status, response headers, body)."""
    status, raw = w.api("ChatFunction", rest_event(method, path, resource, ctx, body, headers or None))
    prelude, payload = split_stream(raw)
    assert status == 200 and prelude, raw[:300]
    return int(prelude["statusCode"]), dict(prelude.get("headers") or {}), payload


def blocks(payload: bytes) -> list[dict[str, str]]:
    return [
        dict(line.split(": ", 1) for line in block.splitlines())
        for block in payload.decode().split("\n\n")
        if block.strip()
    ]


def runs_and_conversations(w: World, ctx: dict[str, Any]) -> None:
    before = runs_charged(w, ctx)
    run_id, final = resumed(w, ctx)
    conversation(w, ctx, run_id, final)
    background(w, ctx)
    assert runs_charged(w, ctx) == before + 3  # the streamed run, turn 2 and the background run


def resumed(w: World, ctx: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A streamed run: every event numbered, the run named in a header; read again after any event."""
    w.model.script([tool_call("search", {"query": "return a used bike"}),
                    text("Used bikes ", "can be returned ", '<citation ids="faq.txt#0"/>.')])  # fmt: skip
    question = {"messages": [{"role": "user", "content": ASK}], "namespaces": ["docs"]}
    status, headers, payload = chat_fn(w, "POST", "/v1/chat", "/v1/chat", ctx, question)
    full = blocks(payload)
    run_id = headers["ragline-run-id"]
    assert status == 200 and [int(b["id"]) for b in full] == list(range(1, len(full) + 1)), full
    final = json.loads(full[-1]["data"])
    assert full[-1]["event"] == "final" and final["runId"] == run_id and final["exitReason"] == "answered"
    # Dropped after any event: the rest, exactly, from the run's log in DynamoDB
    for k in range(len(full) + 1):
        status, _, rest = chat_fn(
            w, "GET", f"/v1/runs/{run_id}/events", EVENTS, ctx, **{"Last-Event-ID": str(k)}
        )
        assert status == 200 and blocks(rest) == full[k:], k
    status, _, body = chat_fn(w, "GET", f"/v1/runs/{run_id}", RUN, ctx)
    view = json.loads(body)
    assert status == 200 and view["status"] == "completed" and view["result"] == final, view
    return run_id, final


def conversation(w: World, ctx: dict[str, Any], run_id: str, final: dict[str, Any]) -> None:
    """Turn 2 sends only its own message and is answered from turn 1; listed, read, deleted."""
    conversation = final["conversationId"]
    w.model.script([tool_call("search", {"query": "used bike refund"}), text("Within 30 days.")])
    follow_up = {"messages": [{"role": "user", "content": "And how long do I have?"}],
                 "namespaces": ["docs"], "conversationId": conversation, "stream": False}  # fmt: skip
    status, _, body = chat_fn(w, "POST", "/v1/chat", "/v1/chat", ctx, follow_up)
    second = json.loads(body)
    assert status == 200 and second["conversationId"] == conversation, second
    shown = w.model.last_conversation()
    assert shown[:3] == [("user", ASK), ("assistant", final["answer"]), ("user", "And how long do I have?")]
    status, _, body = chat_fn(w, "GET", "/v1/conversations", "/v1/conversations", ctx)
    listed = json.loads(body)["conversations"]  # the key sees every conversation of its tenant
    assert status == 200 and listed[0]["conversationId"] == conversation and listed[0]["turnCount"] == 2
    one = f"/v1/conversations/{conversation}"
    status, _, body = chat_fn(w, "GET", one, CONVERSATION, ctx)
    kept = json.loads(body)
    assert status == 200 and [t["runId"] for t in kept["turns"]] == [run_id, second["runId"]], kept
    assert chat_fn(w, "DELETE", one, CONVERSATION, ctx)[0] == 204
    assert chat_fn(w, "GET", one, CONVERSATION, ctx)[0] == 404


def background(w: World, ctx: dict[str, Any]) -> None:
    """A background run: 202 at once, its message the chat function's SQS event, announced once; a
    queued run cancelled before its worker gets it never runs."""
    question = {"messages": [{"role": "user", "content": ASK}], "namespaces": ["docs"]}
    w.model.script([tool_call("search", {"query": "return a used bike"}), text("Yes, within 30 days.")])
    status, _, body = chat_fn(w, "POST", "/v1/chat", "/v1/chat", ctx, {**question, "background": True})
    queued = json.loads(body)
    assert status == 202 and queued["status"] == "queued", queued
    delivered = deliver_runs(w)
    assert delivered == {"ran": [queued["runId"]], "failed": []}, delivered
    status, _, body = chat_fn(w, "GET", f"/v1/runs/{queued['runId']}", RUN, ctx)
    done = json.loads(body)
    assert done["status"] == "completed" and done["result"]["exitReason"] == "answered", done
    assert announced(w, queued["runId"]) == ["run.completed"]

    # A queued run cancelled before its worker gets it: it never runs (its message does nothing)
    status, _, body = chat_fn(w, "POST", "/v1/chat", "/v1/chat", ctx, {**question, "background": True})
    waiting = json.loads(body)["runId"]
    status, _, body = chat_fn(w, "POST", f"/v1/runs/{waiting}/cancel", f"{RUN}/cancel", ctx)
    assert status == 200 and json.loads(body)["status"] == "cancelled", body
    calls = len(w.model.bedrock.converse_requests) + len(w.model.llm.chat_requests)
    assert deliver_runs(w) == {"ran": [], "failed": []}  # claimed by nobody: it was cancelled
    assert len(w.model.bedrock.converse_requests) + len(w.model.llm.chat_requests) == calls
    status, _, body = chat_fn(w, "GET", f"/v1/runs/{waiting}", RUN, ctx)
    ended = json.loads(body)
    assert ended["status"] == "cancelled" and ended["result"]["exitReason"] == "cancelled", ended
    assert announced(w, waiting) == ["run.cancelled"]


def deliver_runs(w: World) -> dict[str, Any]:
    """The runs queue's message, as its event source mapping gives it to the chat function (one per
    invocation, through the adapter's ``/events`` path): what the app answered."""
    messages: list[dict[str, Any]] = []
    for _ in range(5):
        got = w.sqs.receive_message(QueueUrl=w.runs_url, MaxNumberOfMessages=1, WaitTimeSeconds=1)
        messages += got.get("Messages", [])
        if messages:
            break
    assert len(messages) == 1, "the background run was not queued"
    status, raw = w.deliver_streamed("sqs:RunsQueue", {"Records": sqs_records(messages, "runs")})
    prelude, payload = split_stream(raw)
    assert status == 200 and prelude and prelude["statusCode"] == 200, raw[:300]
    w.sqs.delete_message(QueueUrl=w.runs_url, ReceiptHandle=messages[0]["ReceiptHandle"])
    return dict(json.loads(payload))


def announced(w: World, run_id: str) -> list[str]:
    """The run.* events of ``run_id`` the template's rule put on the delivery queue."""
    kinds: list[str] = []
    for _ in range(5):
        got = w.sqs.receive_message(QueueUrl=w.delivery_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        for message in got.get("Messages", []):
            event = json.loads(message["Body"])
            if event["detail-type"].startswith("run.") and event["detail"]["detail"]["run_id"] == run_id:
                kinds.append(event["detail-type"])
                w.sqs.delete_message(QueueUrl=w.delivery_url, ReceiptHandle=message["ReceiptHandle"])
        if kinds:
            break
    return kinds
