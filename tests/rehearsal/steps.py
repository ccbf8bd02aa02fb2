"""The rehearsal's scenario steps: what a user does through the built stack, one route at a time,
with the route table every step is checked against (:data:`ROUTES`)."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any
from unittest.mock import ANY

from tests.rehearsal.api_calls import call, cli, rest_event
from tests.rehearsal.cloudformation import ACCOUNT, REGION
from tests.rehearsal.host import (
    ROOT,
    split_stream,
)
from tests.rehearsal.world import World
from tests.support.openai_replay import text, tool_call

HOSTING_EXITS = {"can_answer", "token_budget", "max_evals", "no_new_queries", "error"}
NS = "/v1/namespaces/{namespace}"
DOCS = f"{NS}/documents"
DOC = f"{DOCS}/{{document_id}}"
ROUTES = {
    ("POST", "/v1/namespaces"): "the scenario's start",
    ("GET", "/v1/namespaces"): "namespace_lifecycle",
    ("GET", NS): "namespace_lifecycle",
    ("PATCH", NS): "namespace_lifecycle",
    ("DELETE", NS): "namespace_lifecycle",
    ("POST", "/v1/namespaces/{namespace}/reindex"): "reindex_namespace",
    ("GET", "/v1/keys"): "key_lifecycle",
    ("POST", "/v1/keys"): "key_lifecycle",
    ("DELETE", "/v1/keys/{key_id}"): "key_lifecycle",
    ("GET", "/v1/usage"): "runs_charged",
    ("GET", "/v1/tenant/identity-provider"): "end_users",
    ("PUT", "/v1/tenant/identity-provider"): "end_users",
    ("DELETE", "/v1/tenant/identity-provider"): "end_users",
    ("POST", "/v1/namespaces/{namespace}/search"): "the scenario's search",
    ("POST", "/v1/hosting-search"): "hosting_search",
    ("GET", DOCS): "ingest_from_s3",
    ("POST", DOCS): "document_writes",
    ("GET", DOC): "document_writes",
    ("DELETE", DOC): "document_writes",
    ("PATCH", DOC): "document_writes",
    ("POST", "/v1/chat"): "chat_streams, chat_agents",
    ("GET", "/v1/runs/{run_id}"): "runs_and_conversations",
    ("GET", "/v1/runs/{run_id}/events"): "runs_and_conversations",
    ("POST", "/v1/runs/{run_id}/cancel"): "runs_and_conversations",
    ("GET", "/v1/conversations"): "runs_and_conversations",
    ("GET", "/v1/conversations/{conversation_id}"): "runs_and_conversations",
    ("DELETE", "/v1/conversations/{conversation_id}"): "runs_and_conversations",
    ("POST", "/v1/evaluations"): "evaluations",
    ("GET", "/v1/evaluations"): "evaluations",
    ("GET", "/v1/evaluations/{evaluation_id}"): "evaluations",
    ("GET", "/v1/evaluations/{evaluation_id}/report"): "evaluations",
    ("GET", f"{NS}/sources"): "data_sources",
    ("POST", f"{NS}/sources"): "data_sources",
    ("GET", f"{NS}/sources/{{source_id}}"): "data_sources",
    ("PATCH", f"{NS}/sources/{{source_id}}"): "data_sources",
    ("DELETE", f"{NS}/sources/{{source_id}}"): "data_sources",
    ("POST", f"{NS}/sources/{{source_id}}/sync"): "data_sources",
    ("GET", "/v1/webhooks"): "webhooks",
    ("POST", "/v1/webhooks"): "webhooks",
    ("GET", "/v1/webhooks/{webhook_id}"): "webhooks",
    ("DELETE", "/v1/webhooks/{webhook_id}"): "webhooks",
    ("POST", "/v1/webhooks/{webhook_id}/rotate-secret"): "webhooks",
}
"""Every API route → the scenario step that calls it through the built stack; checked against the
translated template both ways (a new route without a step fails), and every route is called in
each provider's run."""
EVENT_SOURCES = {
    "sqs:IngestQueue": "ingest_from_s3",
    "sqs:WebhookDeliveryQueue": "webhooks",
    "sqs:RunsQueue": "runs_and_conversations, evaluations",
}
"""Every event source mapping → the step that delivers its events."""


def bootstrap_tenant(w: World) -> dict[str, Any]:
    """The operator's CLI makes a tenant and its admin key; the authorizer turns the key into a context."""
    cli(w, "tenants", "create", "acme", "--quota", "50")
    return key_context(w, "chat,search,ingest,admin", "POST/v1/namespaces")


def key_context(w: World, scopes: str, route: str) -> dict[str, Any]:
    """A new key of the tenant with these scopes, as the authorizer's context for ``route``."""
    created = cli(w, "keys", "create", "--tenant", "acme", "--scopes", scopes)
    key = re.search(r"rl_[A-Za-z0-9_-]{40,}", created)
    assert key, created
    arn = f"arn:aws:execute-api:{REGION}:{ACCOUNT}:api/dev/{route}"
    event = {"type": "REQUEST", "methodArn": arn, "headers": {"Authorization": f"Bearer {key.group(0)}"}}
    policy = w.start("AuthorizerFunction").invoke_json(event)
    assert policy["context"]["tenantId"] == "acme"
    assert policy["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    return dict(policy["context"])


def deliver_s3_events(w: World) -> None:
    """S3's messages on the queue, as the ingestion function's SQS event: none may fail."""
    messages: list[dict[str, Any]] = []
    for _ in range(20):
        got = w.sqs.receive_message(QueueUrl=w.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        messages += [m for m in got.get("Messages", []) if "Records" in json.loads(m["Body"])]
        if messages:
            break
    assert messages, "S3 sent no notification to the queue"
    assert w.deliver("sqs:IngestQueue", {"Records": sqs_records(messages)}) == {"batchItemFailures": []}


def sqs_records(messages: list[dict[str, Any]], queue: str = "ingest") -> list[dict[str, Any]]:
    """SQS's messages (``ReceiveMessage``'s) as the records of the event the queue's event source
    mapping gives its function."""
    source = {"eventSource": "aws:sqs", "eventSourceARN": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{queue}"}
    return [
        {"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
         "attributes": {}, "messageAttributes": {}, "md5OfBody": m["MD5OfBody"], **source}
        for m in messages
    ]  # fmt: skip


def ingest_from_s3(w: World, ctx: dict[str, Any]) -> None:
    """A file lands in S3; S3's message on the queue is the ingestion function's SQS event."""
    faq = (ROOT / "samples/northwind/faq.txt").read_bytes()
    w.s3.put_object(Bucket=w.bucket, Key="acme/docs/faq.txt", Body=faq)
    deliver_s3_events(w)
    docs = "/v1/namespaces/{namespace}/documents"
    status, listing = call(w, "DocumentsFunction", "GET", "/v1/namespaces/docs/documents", docs, ctx)
    assert status == 200
    assert [(d["documentId"], d["status"]) for d in listing["documents"]] == [("faq.txt", "ready")]


def read_a_scan(w: World, ctx: dict[str, Any]) -> None:
    """A screenshot lands in S3 (namespace ``scans``); with ``DocumentOcr=textract`` the ingestion
    function reads it through Textract (the stand-in) — nothing decoded in the function — and a
    search finds the text on it."""
    assert w.textract is not None
    status, body = call(w, "NamespacesFunction", "POST", "/v1/namespaces", "/v1/namespaces", ctx,
                        {"namespaceId": "scans"})  # fmt: skip
    assert status == 201, body
    before = len(w.textract.requests)
    png = (ROOT / "tests/fixtures/scans/error-dialog.png").read_bytes()
    w.s3.put_object(Bucket=w.bucket, Key="acme/scans/error-dialog.png", Body=png)
    deliver_s3_events(w)
    assert [r["target"] for r in w.textract.requests[before:]] == ["Textract.DetectDocumentText"]
    route = "/v1/namespaces/{namespace}/search"
    ask = {"query": "error NW-4021", "k": 3}
    status, found = call(w, "SearchFunction", "POST", "/v1/namespaces/scans/search", route, ctx, ask)
    assert status == 200 and found["hits"] and found["hits"][0]["documentId"] == "error-dialog.png", found
    assert "timed out after 30 seconds" in found["hits"][0]["text"], found


def delete_from_s3(w: World, ctx: dict[str, Any]) -> None:
    """A file deleted through the API: its object goes, and S3's ObjectRemoved event finds the key gone
    (S3 says 404 only to a role that may list the bucket; 403 would fail the message to the DLQ)."""
    w.s3.put_object(Bucket=w.bucket, Key="acme/docs/gone.txt", Body=b"Gift cards never expire.")
    deliver_s3_events(w)
    route, path = (
        "/v1/namespaces/{namespace}/documents/{document_id}",
        "/v1/namespaces/docs/documents/gone.txt",
    )
    status, body = call(w, "DocumentsFunction", "DELETE", path, route, ctx)
    assert (status, body["status"]) == (202, "deleting"), body
    deliver_s3_events(w)
    status, body = call(w, "DocumentsFunction", "GET", path, route, ctx)
    assert status == 200 and body["status"] == "deleted", body


def chat_streams(w: World, ctx: dict[str, Any]) -> None:
    """Chat through the real Web Adapter: the answer leaves the app while the run goes on."""
    w.model.script(
        [
            tool_call("search", {"query": "return a used bike"}),
            text("Used bikes ", "can be returned ", '<citation ids="faq.txt#0"/>', delay_s=0.4),
        ]
    )
    question = {
        "messages": [{"role": "user", "content": "Can I return a used bike?"}],
        "namespaces": ["docs"],
    }
    status_code, raw = w.api("ChatFunction", rest_event("POST", "/v1/chat", "/v1/chat", ctx, question))
    prelude, payload = split_stream(raw)
    assert status_code == 200 and prelude and prelude.get("statusCode") == 200, raw[:300]
    events = [
        dict(line.split(": ", 1) for line in block.splitlines())
        for block in payload.decode().split("\n\n")
        if block.strip()
    ]
    kinds = [event["event"] for event in events]
    assert kinds[-1] == "final" and "text" in kinds and "sources" in kinds, kinds
    assert [int(event["id"]) for event in events] == list(range(1, len(events) + 1))  # SSE ids: resumable
    final = json.loads(events[-1]["data"])
    assert final["exitReason"] == "answered" and "faq.txt#0" in final["answer"]
    # the built layer checks the cited sentence against its chunk (the template's default scorer)
    grounding = final["grounding"]
    assert grounding["status"] == "scored" and grounding["scorer"] == "verifier", grounding
    assert grounding["sentences"][0]["citations"] == ["faq.txt#0"], grounding
    posts = w.taps["ChatFunction"].response_posts()
    assert posts, "the adapter never posted a response"
    first_text = next(t for t, data in posts[-1] if b"event: text" in data)
    final_at = next(t for t, data in posts[-1] if b"event: final" in data)
    assert final_at - first_text >= 0.3, "the first text event did not leave before the run ended"


def chat_agents(w: World, ctx: dict[str, Any]) -> None:
    """``agent: auto`` with no namespaces, as JSON: the collection router takes the tenant's only
    namespace without a model call, the RAG router (the chat model) picks ``deep_search``, which
    decomposes, searches, filters, reflects and answers with a verified citation; charged once."""
    before = runs_charged(w, ctx)
    w.model.script(
        [
            text("<think>two parts</think>2"),
            text(json.dumps({"subQueries": ["return a used bike"]})),
            text(json.dumps({"relevant": ["faq.txt#0"]})),
            text(json.dumps({"gapQueries": []})),
            text('Used bikes can be returned <citation ids="faq.txt#0"/>.'),
        ]
    )
    question = {"messages": [{"role": "user", "content": "Can I return a used bike?"}], "agent": "auto",
                "stream": False}  # fmt: skip
    retry = {"Idempotency-Key": f"rehearsal-{uuid.uuid4().hex}"}
    event = rest_event("POST", "/v1/chat", "/v1/chat", ctx, question, retry)
    status_code, raw = w.api("ChatFunction", event)
    prelude, payload = split_stream(raw)
    assert status_code == 200 and prelude and prelude.get("statusCode") == 200, raw[:300]
    body = json.loads(payload)
    assert body["collections"]["namespaces"] == ["docs"], body
    assert body["route"] == {"type": "route", "agent": "deep_search", "reason": ANY, "fallback": False}, body
    assert body["exitReason"] == "answered" and [s["id"] for s in body["sources"]] == ["faq.txt#0"], body
    assert [s["label"] for s in body["steps"] if s["type"] == "tool_start"] == ["return a used bike"], body
    assert not w.model.remaining, "the router and deep_search did not make their five model calls"
    # A retry with its Idempotency-Key replays the recorded answer (its documents re-read), uncharged.
    status_code, raw = w.api("ChatFunction", event)
    prelude, payload = split_stream(raw)
    again = json.loads(payload)
    assert prelude and prelude.get("statusCode") == 200 and again["replayed"] is True, raw[:300]
    assert (again["runId"], again["answer"]) == (body["runId"], body["answer"]), again
    assert runs_charged(w, ctx) == before + 1


def runs_charged(w: World, ctx: dict[str, Any]) -> int:
    status, usage = call(w, "KeysFunction", "GET", "/v1/usage", "/v1/usage", ctx)
    assert status == 200, usage
    return int(usage["runs"])


def hosting_search(w: World, admin: dict[str, Any]) -> None:
    """Hosting search with a search-only key: the planner (the chat model) proposes a query and judges
    the pool, Bedrock reranks it; charged once, also when retried with its Idempotency-Key; a body
    with an unknown field is a 400 in the one error shape, before any work."""
    ctx = key_context(w, "search", "POST/v1/hosting-search")
    before = runs_charged(w, admin)
    w.model.script(
        [
            text(json.dumps({"queries": [{"type": "keyword", "query": "return used bike refund"}]})),
            text(json.dumps({"canAnswer": True})),
        ]
    )
    route = "/v1/hosting-search"
    body = {
        "messages": [{"role": "user", "content": "Can I return a used bike?"}],
        "namespaces": ["docs"],
        "topK": 3,
    }
    retry = {"Idempotency-Key": f"rehearsal-{uuid.uuid4().hex}"}
    status, found = call(w, "HostingSearchFunction", "POST", route, route, ctx, body, retry)
    assert status == 200, found
    assert found["exitReason"] in HOSTING_EXITS, found
    assert found["exitReason"] == "can_answer", found  # the scripted verdict of round 1
    assert found["chunks"] and {c["namespace"] for c in found["chunks"]} == {"docs"}, found
    assert found["chunks"][0]["documentId"] == "faq.txt" and len(found["chunks"]) <= 3, found
    assert [(q["round"], q["type"]) for q in found["queries"]] == [(1, "hybrid"), (1, "keyword")], found
    assert found["totalQueries"] == 2 and found["rounds"][0]["canAnswer"] is True, found
    assert found["rerank"] == {"reranker": "bedrock:cohere.rerank-v3-5:0", "fellBack": False}, found
    assert found["usage"]["llmInputTokens"] == 200 and found["usage"]["llmOutputTokens"] == 20, found
    assert not w.model.remaining, "the planner did not ask for its query generation and its verdict"

    status, again = call(w, "HostingSearchFunction", "POST", route, route, ctx, body, retry)
    assert status == 200 and again["replayed"] is True and again["runId"] == found["runId"], again

    status, refused = call(w, "HostingSearchFunction", "POST", route, route, ctx, {**body, "colour": "red"})
    assert status == 400, refused
    assert set(refused) == {"error"} and refused["error"]["code"] == "invalid_request", refused
    assert set(refused["error"]) == {"code", "message", "details"}, refused
    assert runs_charged(w, admin) == before + 1


def namespace_lifecycle(w: World, ctx: dict[str, Any]) -> None:
    """An admin key creates, lists, reads, changes and deletes a namespace; a namespace that still
    holds documents cannot be deleted."""
    fn = "NamespacesFunction"
    status, made = call(w, fn, "POST", "/v1/namespaces", "/v1/namespaces", ctx,
                        {"namespaceId": "scratch", "description": "for a while"})  # fmt: skip
    assert status == 201 and made["namespaceId"] == "scratch" and made["default"] is False, made
    status, listed = call(w, fn, "GET", "/v1/namespaces", "/v1/namespaces", ctx)
    assert status == 200 and {n["namespaceId"] for n in listed["namespaces"]} == {"docs", "scratch"}, listed
    status, changed = call(w, fn, "PATCH", "/v1/namespaces/scratch", NS, ctx, {"description": "renamed"})
    assert status == 200 and changed["description"] == "renamed", changed
    status, gone = call(w, fn, "DELETE", "/v1/namespaces/scratch", NS, ctx)
    assert status == 200 and gone == {"namespaceId": "scratch", "deleted": True}, gone
    status, missing = call(w, fn, "GET", "/v1/namespaces/scratch", NS, ctx)
    assert status == 404 and missing["error"]["code"] == "namespace_not_found", missing
    status, held = call(w, fn, "DELETE", "/v1/namespaces/docs", NS, ctx)
    assert status == 409 and held["error"]["code"] == "conflict", held


def key_lifecycle(w: World, ctx: dict[str, Any]) -> None:
    """An admin key issues a search key (its plaintext once), lists it, revokes it."""
    fn = "KeysFunction"
    status, made = call(w, fn, "POST", "/v1/keys", "/v1/keys", ctx, {"name": "ci", "scopes": ["search"]})
    assert status == 201 and made["apiKey"].startswith("rl_") and made["scopes"] == ["search"], made
    status, listed = call(w, fn, "GET", "/v1/keys", "/v1/keys", ctx)
    mine = [k for k in listed["keys"] if k["keyId"] == made["keyId"]]
    assert status == 200 and len(mine) == 1 and "apiKey" not in mine[0] and not mine[0]["revoked"], listed
    route = "/v1/keys/{key_id}"
    status, revoked = call(w, fn, "DELETE", f"/v1/keys/{made['keyId']}", route, ctx)
    assert status == 200 and revoked["keyId"] == made["keyId"] and revoked["revoked"] is True, revoked


def authorize(w: World, credential: str, route: str) -> dict[str, Any]:
    """The built authorizer's answer for ``Authorization: Bearer <credential>`` (raises if refused)."""
    arn = f"arn:aws:execute-api:{REGION}:{ACCOUNT}:api/dev/{route}"
    event = {"type": "REQUEST", "methodArn": arn, "headers": {"Authorization": f"Bearer {credential}"}}
    return dict(w.start("AuthorizerFunction").invoke_json(event)["context"])


def end_users(w: World, ctx: dict[str, Any]) -> None:
    """A key with the right names its user in headers; the tenant's identity provider is set through
    the API, and its token passes the built authorizer (PyJWT and cryptography in the layer) and
    searches as its user; a token for another audience is refused; the provider is removed."""
    from tests.support.identity_tokens import SigningKey, claims

    search, route = "/v1/namespaces/docs/search", "POST/v1/namespaces/docs/search"
    created = cli(w, "keys", "create", "--tenant", "acme", "--scopes", "search", "--assert-user")
    key = re.search(r"rl_[A-Za-z0-9_-]{40,}", created)
    assert key and "user context: may be asserted" in created, created
    asserting = authorize(w, key.group(0), route)
    assert asserting["assertUser"] == "allowed" and "userId" not in asserting, asserting
    user = {"Ragline-User-Id": "u-42", "Ragline-User-Groups": "hr,emea"}
    status, found = call(
        w, "SearchFunction", "POST", search, f"{NS}/search", asserting, {"query": "bike"}, user
    )
    assert status == 200, found
    status, refused = call(w, "SearchFunction", "POST", search, f"{NS}/search", ctx, {"query": "bike"}, user)
    assert status == 403 and refused["error"]["code"] == "forbidden", refused

    fn, idp = "KeysFunction", "/v1/tenant/identity-provider"
    signer, issuer = SigningKey("rehearsal-1"), "https://idp.rehearsal.test/"
    body = {"issuer": issuer, "audiences": ["app"], "jwks": [signer.jwk], "namespaces": ["docs"]}
    status, view = call(w, fn, "PUT", idp, idp, ctx, body)
    assert status == 200 and view["issuer"] == issuer and view["scopes"] == ["chat", "search"], view
    status, shown = call(w, fn, "GET", idp, idp, ctx)
    assert status == 200 and shown == view, shown
    token_ctx = authorize(w, signer.token(claims(issuer, user="erin", groups=["hr"])), route)
    assert (token_ctx["tenantId"], token_ctx["userId"], token_ctx["groups"]) == ("acme", "erin", '["hr"]')
    status, found = call(w, "SearchFunction", "POST", search, f"{NS}/search", token_ctx, {"query": "bike"})
    assert status == 200, found
    other = signer.token(claims(issuer, audience="other"))
    arn = f"arn:aws:execute-api:{REGION}:{ACCOUNT}:api/dev/{route}"
    wrong = {"type": "REQUEST", "methodArn": arn, "headers": {"Authorization": f"Bearer {other}"}}
    status, answer = w.start("AuthorizerFunction").invoke(wrong)
    assert b"Unauthorized" in answer, answer
    status, gone = call(w, fn, "DELETE", idp, idp, ctx)
    assert status == 200 and gone == {"deleted": True}, gone


def document_writes(w: World, ctx: dict[str, Any]) -> None:
    """Text added through the API is indexed at once (embedded, metered) and deleted with its chunks
    (200); deleting the S3-sourced document deletes its object, and the chunks follow its event (202)."""
    fn = "DocumentsFunction"
    added_text = {
        "filename": "notes.md", "text": "Helmets are sold at the front desk of every store.",
        "metadata": {"year": 2024}, "access": {"groups": ["staff"]},
    }  # fmt: skip
    status, added = call(w, fn, "POST", "/v1/namespaces/docs/documents", DOCS, ctx, added_text)
    assert status == 201 and (added["documentId"], added["status"]) == ("notes.md", "ready"), added
    assert added["metadata"] == {"year": 2024.0}, added
    # Metadata changes: an API document is re-labelled at once (its chunks rewritten, no embedding); an
    # S3 document's sidecar is written, and its event (the ingestion function) re-labels it.
    relabel = {"metadata": {"year": 2025, "topic": "safety"}}
    status, done = call(w, fn, "PATCH", "/v1/namespaces/docs/documents/notes.md", DOC, ctx, relabel)
    assert status == 200 and done["document"]["metadata"] == {"year": 2025.0, "topic": "safety"}, done
    status, done = call(
        w, fn, "PATCH", "/v1/namespaces/docs/documents/faq.txt", DOC, ctx, {"metadata": {"shelf": "b"}}
    )
    assert status == 202 and done["status"] == "updating", done
    deliver_s3_events(w)
    status, faq = call(w, fn, "GET", "/v1/namespaces/docs/documents/faq.txt", DOC, ctx)
    assert status == 200 and faq["metadata"] == {"shelf": "b"}, faq
    status, got = call(w, fn, "GET", "/v1/namespaces/docs/documents/notes.md", DOC, ctx)
    assert status == 200 and got["documentId"] == "notes.md" and got["status"] == "ready", got
    status, deleted = call(w, fn, "DELETE", "/v1/namespaces/docs/documents/notes.md", DOC, ctx)
    assert status == 200 and (deleted["documentId"], deleted["status"]) == ("notes.md", "deleted"), deleted
    status, deleting = call(w, fn, "DELETE", "/v1/namespaces/docs/documents/faq.txt", DOC, ctx)
    assert status == 202 and (deleting["documentId"], deleting["status"]) == ("faq.txt", "deleting"), deleting
    remaining = w.s3.list_objects_v2(Bucket=w.bucket, Prefix="acme/docs/").get("Contents", [])
    assert not remaining, remaining


def reindex_namespace(w: World, ctx: dict[str, Any]) -> None:
    """A reindex with another chunk size: the namespaces function queues the first step, the
    ingestion function runs the steps from the queue (each queueing the next), the namespace switches
    to generation 2 in one write, and a search answers from it."""
    fn, route = "NamespacesFunction", "/v1/namespaces/{namespace}/reindex"
    status, started = call(w, fn, "POST", "/v1/namespaces/docs/reindex", route, ctx, {"chunkTokens": 120})
    assert status == 202 and started["rebuild"]["state"] == "building", started
    for _ in range(20):
        status, ns = call(w, fn, "GET", "/v1/namespaces/docs", NS, ctx)
        assert status == 200, ns
        if ns["generation"] == 2:
            break
        got = w.sqs.receive_message(QueueUrl=w.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        records = sqs_records(got.get("Messages", []))
        if records:
            assert w.deliver("sqs:IngestQueue", {"Records": records}) == {"batchItemFailures": []}
    assert ns["generation"] == 2 and ns["chunkTokens"] == 120, ns
    assert ns["rebuild"] is None or ns["rebuild"]["state"] != "failed", ns
    status, found = call(w, "SearchFunction", "POST", "/v1/namespaces/docs/search",
                         "/v1/namespaces/{namespace}/search", ctx,
                         {"query": "Can I return a used bike?", "k": 3})  # fmt: skip
    assert status == 200 and found["hits"] and found["hits"][0]["documentId"] == "faq.txt", found


def webhooks(w: World, ctx: dict[str, Any]) -> None:
    """An admin key subscribes a webhook (its secret once), reads, rotates and deletes it; the events
    the earlier steps published (ingestion, the reindex, text documents) reached the delivery queue
    through the template's rule, and the delivery function, given them, tries the webhook — whose
    name does not resolve here, so every event is reported failed, to come back (SQS's retry)."""
    fn, hooks, one = "KeysFunction", "/v1/webhooks", "/v1/webhooks/{webhook_id}"
    body = {"url": "https://hooks.rehearsal.invalid/ragline", "eventTypes": []}
    status, made = call(w, fn, "POST", hooks, hooks, ctx, body)
    assert status == 201 and made["secret"].startswith("whsec_"), made
    hook = made["webhookId"]
    status, listed = call(w, fn, "GET", hooks, hooks, ctx)
    assert status == 200 and [h["webhookId"] for h in listed["webhooks"]] == [hook], listed
    status, got = call(w, fn, "GET", f"{hooks}/{hook}", one, ctx)
    assert status == 200 and "secret" not in got, got
    rotate = "/v1/webhooks/{webhook_id}/rotate-secret"
    status, rotated = call(w, fn, "POST", f"{hooks}/{hook}/rotate-secret", rotate, ctx)
    assert status == 200 and rotated["secret"] != made["secret"], rotated
    messages: list[dict[str, Any]] = []
    for _ in range(5):
        got_messages = w.sqs.receive_message(
            QueueUrl=w.delivery_url, MaxNumberOfMessages=10, WaitTimeSeconds=1
        )
        messages += got_messages.get("Messages", [])
        if len(messages) >= 10 or not got_messages.get("Messages"):
            break
    kinds = {json.loads(m["Body"])["detail-type"] for m in messages}
    assert "document.indexed" in kinds, kinds
    records = [{"messageId": m["MessageId"], "body": m["Body"], "eventSource": "aws:sqs"} for m in messages]
    result = w.deliver("sqs:WebhookDeliveryQueue", {"Records": records})
    # Every event comes back: a message whose event another copy in the batch was sending at that
    # moment is reported done (that copy holds the receiver, and its failure brings the event back)
    event_of = {m["MessageId"]: json.loads(m["Body"])["detail"]["id"] for m in messages}
    failed = {f["itemIdentifier"] for f in result["batchItemFailures"]}
    assert {event_of[m] for m in failed} == set(event_of.values()), (failed, event_of)
    status, gone = call(w, fn, "DELETE", f"{hooks}/{hook}", one, ctx)
    assert status == 200 and gone["webhookId"] == hook, gone


def data_sources(w: World, ctx: dict[str, Any]) -> None:
    """A Confluence space as a data source through the built stack. The namespaces function keeps its
    credentials in Secrets Manager and its schedule in EventBridge Scheduler, and queues its first
    sync; the schedule's own message (its target's input, on the queue its role may send to) starts
    another. The ingestion function runs the syncs from the queue: the credentials read, the pages
    listed from the Confluence stand-in and indexed through the pipeline with their readers. A PATCH
    replaces the credentials and the schedule; a sync asked for changes nothing; a removal deletes
    the credentials and the schedule at once, then (in steps) its documents and the source."""
    from ragline.domain.sources import ItemAccess
    from tests.support.confluence_server import ConfluenceWorld

    site = ConfluenceWorld()
    try:
        site.put("pump", "The feed pump runs at 1450 rpm and is oiled every quarter.")
        site.put("budget", "The budget for pump spares is 12000 euros.", ItemAccess.only(groups=["finance"]))
        fn, many = "NamespacesFunction", f"{NS}/sources"
        one = f"{many}/{{source_id}}"
        path = _added_and_scheduled(w, ctx, site)
        view = _synced(w, ctx, path, one, run=1)  # the first sync, and the schedule's (nothing new)
        assert view["counts"]["listed"] == 2 and not view["lastError"], view
        status, docs = call(w, "DocumentsFunction", "GET", "/v1/namespaces/docs/documents", DOCS, ctx)
        synced = [d for d in docs["documents"] if d["documentId"].startswith("sources/")]
        assert status == 200 and len(synced) == 2 and all(d["status"] == "ready" for d in synced), docs
        status, found = call(w, "SearchFunction", "POST", "/v1/namespaces/docs/search",
                             "/v1/namespaces/{namespace}/search", ctx,
                             {"query": "how fast does the feed pump run", "k": 3})  # fmt: skip
        assert status == 200 and found["hits"][0]["source"].startswith(site.server.url), found

        fresh = site.credentials()
        status, changed = call(w, fn, "PATCH", path, one, ctx, {"everyMinutes": 120, "credentials": fresh})
        assert status == 200 and changed["everyMinutes"] == 120, changed
        status, listed = call(w, fn, "GET", "/v1/namespaces/docs/sources", many, ctx)
        assert status == 200 and [s["sourceId"] for s in listed["sources"]] == [path.rsplit("/", 1)[1]], (
            listed
        )
        status, asked = call(w, fn, "POST", f"{path}/sync", f"{one}/sync", ctx, {})
        assert status == 202, asked
        view = _synced(w, ctx, path, one, run=view["run"] + 1)
        assert (view["counts"]["indexed"], view["counts"]["unchanged"]) == (0, 2), view

        status, removing = call(w, fn, "DELETE", path, one, ctx)
        assert status == 202, removing
        assert w.scheduler.list_schedules(GroupName=w.schedule_group)["Schedules"] == []
        for _ in range(10):
            got = w.sqs.receive_message(QueueUrl=w.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
            records = sqs_records(got.get("Messages", []))
            if records:
                assert w.deliver("sqs:IngestQueue", {"Records": records}) == {"batchItemFailures": []}
            status, gone = call(w, fn, "GET", path, one, ctx)
            if status == 404:
                break
        assert status == 404, gone
    finally:
        site.close()


def _added_and_scheduled(w: World, ctx: dict[str, Any], site: Any) -> str:
    """The source added (credentials kept, never shown) with its schedule, whose message is then sent
    as EventBridge Scheduler would: its target's input, to the queue its role may send to."""
    from ragline.adapters.aws.sync_scheduler import schedule_name

    many = f"{NS}/sources"
    body = {"kind": "confluence", "confluence": site.settings(), "credentials": site.credentials()}
    status, made = call(
        w, "NamespacesFunction", "POST", "/v1/namespaces/docs/sources", many, ctx, body | {"everyMinutes": 60}
    )
    assert status == 201 and made["hasCredentials"] and "credentials" not in made, made
    assert site.requests() == 0, "the API never reaches the source itself: syncs do"
    source = made["sourceId"]
    schedule = w.scheduler.get_schedule(
        Name=schedule_name("acme", "docs", source), GroupName=w.schedule_group
    )
    role = w.stack.resolve(w.art.translated["Resources"]["SyncSchedulerRole"]["Properties"])
    granted = role["Policies"][0]["PolicyDocument"]["Statement"][0]
    assert schedule["ScheduleExpression"] == "rate(60 minutes)", schedule
    assert schedule["Target"]["Arn"] == w.stack.attributes["IngestQueue.Arn"] == granted["Resource"]
    assert schedule["Target"]["RoleArn"] == w.stack.attributes["SyncSchedulerRole.Arn"]
    assert granted["Action"] == "sqs:SendMessage"
    w.sqs.send_message(QueueUrl=w.queue_url, MessageBody=schedule["Target"]["Input"])  # the schedule fires
    return f"/v1/namespaces/docs/sources/{source}"


def _synced(w: World, ctx: dict[str, Any], path: str, route: str, *, run: int) -> dict[str, Any]:
    """The source once its ``run``-th sync has ended: the queue's steps given to the ingestion function."""
    view: dict[str, Any] = {}
    for _ in range(20):
        got = w.sqs.receive_message(QueueUrl=w.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        records = sqs_records(got.get("Messages", []))
        if records:
            assert w.deliver("sqs:IngestQueue", {"Records": records}) == {"batchItemFailures": []}
        status, view = call(w, "NamespacesFunction", "GET", path, route, ctx)
        assert status == 200, view
        if view["status"] == "idle" and view["run"] >= run and not records:
            return view
    raise AssertionError(f"the sync did not end: {view}")
