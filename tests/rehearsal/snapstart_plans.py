"""What each SnapStart function serves in the snapshot rehearsal (``test_snapshot_safety.py``): the
events that prime it before the snapshot and those each of the two restores serves, each through the
function's own entry — API Gateway's REST events for the API functions, the ingestion queue's SQS
event carrying S3's notification of an object put in the bucket, the delivery queue's SQS event
carrying an event the bus's rule routed there — and what must hold afterwards besides the driver's
own checks."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.rehearsal.api_calls import rest_event
from tests.rehearsal.host import ROOT
from tests.rehearsal.signed_proxy import SignedProxy
from tests.rehearsal.steps import DOCS, sqs_records
from tests.rehearsal.world import World
from tests.support.openai_replay import text
from tests.support.webhook_receiver import Receiver

TENANT = f"snap{uuid.uuid4().hex[:8]}"
"""A tenant of its own (its indexes are its own too: the run's index prefix)."""
CTX = {"tenantId": TENANT, "scopes": "admin,chat,ingest,search", "namespaces": "", "keyId": "k-snap"}
"""The authorizer's context for the tenant's admin key (the authorizer itself has its own rehearsal)."""
HOOK = "/hook"
"""The tenant's webhook's path on the scene's receiver."""
SEARCH = "/v1/namespaces/{namespace}/search"
BOTH = ("opensearch", "bedrock")

Event = dict[str, Any]


@dataclass
class Scene:
    """The world the restores run in: the stack's stand-ins, the SigV4-checking proxy in front of the
    OpenSearch node, a folder for the driver's plans and reports, the tenant's webhook receiver."""

    w: World
    proxy: SignedProxy
    io: Path
    receiver: Receiver


@dataclass
class Plan:
    prime: list[Event]
    restores: list[list[Event]]
    reaches: tuple[str, ...] = ()
    """Where each restore's requests must arrive signed with its own fresh key: ``opensearch``
    (through the proxy) and ``bedrock`` (the model server)."""
    env: dict[str, str] = field(default_factory=dict)
    """Settings not from the template (a loopback receiver)."""
    check: Callable[[dict[str, Any]], None] = lambda report: None


def search(query: str) -> Event:
    return rest_event(
        "POST", "/v1/namespaces/docs/search", SEARCH, CTX, {"query": query, "k": 3, "rerank": True}
    )


def namespaces(_: Scene) -> Plan:
    route = "/v1/namespaces"
    listing = rest_event("GET", route, route, CTX)
    made = [
        rest_event("POST", route, route, CTX, {"namespaceId": f"snap{n}{uuid.uuid4().hex[:6]}"})
        for n in (0, 1)
    ]
    return Plan([listing], [[made[0], listing], [made[1], listing]])


def keys(_: Scene) -> Plan:
    listing = rest_event("GET", "/v1/keys", "/v1/keys", CTX)
    usage = rest_event("GET", "/v1/usage", "/v1/usage", CTX)
    issue = [
        rest_event("POST", "/v1/keys", "/v1/keys", CTX, {"name": f"restore-{n}", "scopes": ["search"]})
        for n in (0, 1)
    ]
    return Plan([listing], [[issue[0], usage], [issue[1], usage]])


def searches(_: Scene) -> Plan:
    """Each restore's two searches are its own (the embedding cache would spare the second a Bedrock
    call); each restore charges its own two runs."""

    def check(report: dict[str, Any]) -> None:
        runs = [r for child in report["restores"] for r in child["run_ids"]]
        assert len(runs) == len(set(runs)) == 4, runs

    restores = [[search(f"return a used bike {n}"), search(f"chain lubrication {n}")] for n in (0, 1)]
    return Plan([search("warm-up")], restores, BOTH, check=check)


def hosting_search(s: Scene) -> Plan:
    """The planner asks the chat model twice a search (its queries, its verdict); the restores run at
    once, so one reply serves as either, whichever comes first."""
    route = "/v1/hosting-search"
    reply = {"queries": [{"type": "keyword", "query": "return used bike refund"}], "canAnswer": True}
    s.w.model.script([text(json.dumps(reply))] * 6)

    def ask(question: str) -> Event:
        body = {"messages": [{"role": "user", "content": question}], "namespaces": ["docs"], "topK": 3}
        return rest_event("POST", route, route, CTX, body)

    def check(_: dict[str, Any]) -> None:
        assert not s.w.model.remaining, "the planner did not ask for its queries and its verdicts"

    restores = [[ask("Can I return a used bike?")], [ask("How often should I lubricate the chain?")]]
    return Plan([ask("warm-up")], restores, BOTH, check=check)


def documents(_: Scene) -> Plan:
    faq = (ROOT / "samples/northwind/faq.txt").read_text()
    path = "/v1/namespaces/docs/documents"
    listing = rest_event("GET", path, DOCS, CTX)
    # Each restore's text its own: the two share the sandbox's /tmp, and the embedding cache in it
    # would spare one of them its Bedrock call.
    add = [
        rest_event("POST", path, DOCS, CTX, {"filename": f"faq-{n}-{uuid.uuid4().hex[:8]}.txt",
                   "text": f"{faq}\nRestore {n} ({uuid.uuid4().hex}) stocks helmets."})
        for n in (0, 1)
    ]  # fmt: skip
    return Plan([listing], [[add[0], listing], [add[1], listing]], BOTH)


def ingestion(s: Scene) -> Plan:
    """Three files put in the tenant's folder of the bucket: S3's notification of each (on the
    ingestion queue, as the template wires it) is one SQS event."""
    w = s.w
    keys = [f"{TENANT}/docs/snap-{uuid.uuid4().hex[:8]}.txt" for _ in range(3)]
    for n, key in enumerate(keys):
        w.s3.put_object(Bucket=w.bucket, Key=key, Body=f"Store {n} repairs bikes on Sundays.".encode())
    named = [quote(key, safe="") for key in keys]  # as S3's notification names them
    first, *rest = [{"Records": [r]} for r in queued(w, w.queue_url, named, "ingest")]
    return Plan([first], [[e] for e in rest], BOTH)


def webhook_delivery(s: Scene) -> Plan:
    """Three events put on the bus as the stack puts them: the template's rule routes each to the
    delivery queue, and each (one SQS event) reaches the tenant's receiver, signed."""
    from ragline.adapters.aws.events import entry
    from ragline.domain.events import Event as RaglineEvent
    from ragline.domain.events import event_id

    w = s.w
    events = [
        RaglineEvent(
            event_id("document.indexed", TENANT, uuid.uuid4().hex), "document.indexed", TENANT,
            datetime.now(UTC), {"namespaceId": "docs", "documentId": f"snap-{n}.txt"},
        )
        for n in range(3)
    ]  # fmt: skip
    w.events.put_events(Entries=[entry(e, w.bus) for e in events])
    ids = [e.id for e in events]
    first, *rest = [{"Records": [r]} for r in queued(w, w.delivery_url, ids, "webhooks")]

    def check(_: dict[str, Any]) -> None:
        got = {d.event_id: d.verified for d in s.receiver.accepted(HOOK)}
        assert {i: got.get(i) for i in ids} == dict.fromkeys(ids, True), got

    env = {"RAGLINE_WEBHOOK_LOOPBACK_HTTP": "1"}  # the receiver is on 127.0.0.1
    return Plan([first], [[e] for e in rest], env=env, check=check)


def queued(w: World, queue_url: str, wanted: list[str], queue: str) -> list[dict[str, Any]]:
    """The SQS records of the queue's messages naming each of ``wanted`` (in its order)."""
    found: dict[str, dict[str, Any]] = {}
    for _ in range(30):
        got = w.sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        for message in got.get("Messages", []):
            found |= {key: message for key in wanted if key in message["Body"]}
        if len(found) == len(wanted):
            break
    assert set(found) == set(wanted), f"not on the queue: {set(wanted) - set(found)}"
    return sqs_records([found[key] for key in wanted], queue)


PLANS: dict[str, Callable[[Scene], Plan]] = {
    "NamespacesFunction": namespaces,
    "KeysFunction": keys,
    "SearchFunction": searches,
    "HostingSearchFunction": hosting_search,
    "DocumentsFunction": documents,
    "IngestionFunction": ingestion,
    "WebhookDeliveryFunction": webhook_delivery,
}
"""Every SnapStart function of the template → its plan (a function the template gives SnapStart
without a plan here fails ``test_every_snapstart_function_is_rehearsed``)."""
