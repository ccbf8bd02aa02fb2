"""A replay is an authorised read of a recorded result (issue 25 #1, #2), through the real routes
with real keys, on the embedded backend and on DynamoDB (moto).

Given an admin key and a reader key allow-listed to ``docs`` of one tenant (``private`` holds
payroll), when a key replays another key's ``Idempotency-Key`` with the same body, then it gets the
recorded result only if its reach for the run is the same — else 422 ``idempotency_key_reused``,
never the other key's answer. When a document is deleted after a run, a replay of the run no longer
shows its text.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.cli.serve import LambdaContext
from ragline.domain.models import TenantScope
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.conftest import examples_at_scale
from tests.e2e.test_cached_authorisation import container  # noqa: F401 (the two-backend fixture)
from tests.support.lambda_harness import call_rest, chat_client, chat_headers, load_handler

pytestmark = pytest.mark.e2e
FUNCTIONS = {
    name: load_handler(name) for name in ("authorizer", "search", "hosting_search", "chat", "documents")
}
PAYROLL = "Acme payroll is secret."
PLANS = "Acme rocket plans."
TEXT_OF = {"docs": PLANS, "private": PAYROLL}
KEYS = {  # name: (scopes, allow-list)
    "admin": (["chat", "search", "ingest", "admin"], []),
    "reader": (["chat", "search"], ["docs"]),
    "private_reader": (["chat", "search"], ["private"]),
    "both": (["chat", "search"], ["docs", "private"]),
}


class World:
    def __init__(self, c: Container) -> None:
        self.c = c
        c.tenancy.create_tenant("acme")
        c.registry.create_namespace(new_namespace("acme", "docs"))
        c.registry.create_namespace(new_namespace("acme", "private", default=True))
        for ns, text in TEXT_OF.items():
            scope = TenantScope(tenant_id="acme", namespace_id=ns)
            c.ingest.ingest(scope, filename=f"{ns}.txt", data=text.encode(), document_id=f"{ns}.txt")
        self.contexts = {}
        for name, (scopes, allowed) in KEYS.items():
            key, _ = c.tenancy.create_key("acme", scopes=scopes, namespaces=allowed)
            event = {
                "type": "REQUEST",
                "methodArn": "arn:aws:execute-api:us-east-1:123456789012:abc/dev/POST/v1/chat",
                "headers": {"Authorization": f"Bearer {key}"},
            }
            answer = FUNCTIONS["authorizer"].lambda_handler(event, LambdaContext(), container=c)
            self.contexts[name] = dict(answer["context"])

    def chat(
        self, key: str, idem: str, namespaces: Any, question: str = "payroll rocket?"
    ) -> tuple[int, Any]:
        body = {
            "messages": [{"role": "user", "content": question}],
            "namespaces": namespaces,
            "stream": False,
        }
        headers = chat_headers(self.contexts[key], **{"idempotency-key": idem})
        with chat_client(FUNCTIONS["chat"], self.c) as client:
            resp = client.post("/v1/chat", json=body, headers=headers)
        return resp.status_code, resp.json()

    def search(
        self, key: str, idem: str, namespace: str, query: str = "payroll rocket plans"
    ) -> tuple[int, Any]:
        path = f"/v1/namespaces/{namespace}/search"
        return self.rest(
            "search", key, idem, "POST", path, "/v1/namespaces/{namespace}/search", {"query": query}
        )

    def hosting(self, key: str, idem: str, namespaces: list[str]) -> tuple[int, Any]:
        body = {"query": "payroll rocket plans", "namespaces": namespaces, "mode": "fast"}
        return self.rest(
            "hosting_search", key, idem, "POST", "/v1/hosting-search", "/v1/hosting-search", body
        )

    def rest(
        self, fn: str, key: str, idem: str, method: str, path: str, resource: str, body: Any
    ) -> tuple[int, Any]:
        return call_rest(
            FUNCTIONS[fn], self.c, method, path, resource=resource, authorizer=self.contexts[key],
            body=body, headers={"Idempotency-Key": idem},
        )  # fmt: skip


@pytest.fixture
def world(container: Container) -> World:  # noqa: F811 (the imported fixture)
    return World(container)


@pytest.mark.parametrize("namespaces", ["auto", []])
def test_a_reader_replaying_an_admins_routed_chat_gets_422_not_its_answer(
    world: World, namespaces: Any
) -> None:
    status, first = world.chat("admin", "chat-1", namespaces)
    assert status == 200 and first["exitReason"] == "answered"

    status, body = world.chat("reader", "chat-1", namespaces)  # the same body under the same key

    assert (status, body["error"]["code"]) == (422, "idempotency_key_reused")
    assert PAYROLL not in json.dumps(body)
    again = world.chat("admin", "chat-1", namespaces)[1]  # the same key still gets its replay
    assert again["replayed"] is True and again["answer"] == first["answer"]


def test_a_reader_replaying_an_admins_default_hosting_search_gets_422(world: World) -> None:
    status, first = world.hosting("admin", "host-1", [])  # the default namespace is private
    assert status == 200 and PAYROLL in json.dumps(first)

    status, body = world.hosting("reader", "host-1", [])

    assert (status, body["error"]["code"]) == (422, "idempotency_key_reused")
    assert PAYROLL not in json.dumps(body)


def test_a_replay_after_a_document_is_deleted_no_longer_shows_its_text(world: World) -> None:
    status, searched = world.search("admin", "s-1", "private")
    _, hosted = world.hosting("admin", "h-1", ["private"])
    _, chatted = world.chat("admin", "c-1", ["private"], question="What is the payroll?")
    assert status == 200 and PAYROLL in json.dumps(searched) and PAYROLL in json.dumps(hosted)
    assert chatted["answer"]

    path = "/v1/namespaces/private/documents/private.txt"  # When the document is deleted
    deleted = world.rest(
        "documents",
        "admin",
        "d-1",
        "DELETE",
        path,
        "/v1/namespaces/{namespace}/documents/{document_id}",
        None,
    )
    assert deleted[0] == 200

    for status, body in (world.search("admin", "s-1", "private"), world.hosting("admin", "h-1", ["private"])):
        assert status == 200 and body["replayed"] is True  # Then the replays are still free replays
        assert PAYROLL not in json.dumps(body)  # without the deleted document's text
        assert "replay_masked" in [w["code"] for w in body["warnings"]]
        assert body.get("queries", []) == []  # a hosting search's queries may quote what it found
        assert body.get("plan") is None  # and so may its plan's
    status, body = world.chat("admin", "c-1", ["private"], question="What is the payroll?")
    assert status == 200 and body["replayed"] is True and body["answer"] == ""
    assert chatted["grounding"]["sentences"] and PAYROLL not in json.dumps(body)  # its grounding is gone too
    assert chatted["plan"]["retrievals"] and body["plan"] is None  # and its query plan
    assert body["usage"] == chatted["usage"]  # the charge is the first run's, not a new one


def readable(key: str) -> set[str]:
    allowed = KEYS[key][1]
    return set(allowed) if allowed else set(TEXT_OF)


RUNS = st.sampled_from(
    ["search:docs", "search:private", "hosting:", "hosting:docs", "chat:auto", "chat:docs"]
)


@settings(
    max_examples=examples_at_scale() // 4,  # two requests each, on two backends
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(pair=st.permutations(sorted(KEYS)).map(lambda keys: tuple(keys[:2])), run=RUNS)
def test_no_replay_crosses_a_keys_reach(world: World, pair: tuple[str, str], run: str) -> None:
    """Hypothesis: a key runs, another key with a different reach replays the same request under the
    same Idempotency-Key; whatever the second gets holds no text of a namespace it may not read."""
    first, second = pair
    kind, _, target = run.partition(":")
    idem = uuid.uuid4().hex

    def send(key: str) -> tuple[int, Any]:
        if kind == "search":
            return world.search(key, idem, target)
        if kind == "hosting":
            return world.hosting(key, idem, [target] if target else [])
        return world.chat(key, idem, target if target == "auto" else [target])

    send(first)
    status, body = send(second)
    text = json.dumps(body)
    for namespace, secret in TEXT_OF.items():
        if namespace not in readable(second):
            assert secret not in text, (first, second, run, status, body)
    if status == 200 and body.get("replayed"):  # a replay is served only to the same reach
        assert readable(first) == readable(second), (first, second, run)
