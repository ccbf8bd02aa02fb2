"""``ragline serve``'s app: the real handlers (chat, search, documents, namespaces, keys) on the embedded
backend, as the local operator of tenant ``local``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from unittest.mock import ANY

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from ragline.cli.app import app as cli
from ragline.cli.serve import build_app
from ragline.config import Settings
from ragline.wiring import Container

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    home = tmp_path / "home"
    result = CliRunner().invoke(
        cli,
        ["ingest", str(ROOT / "samples" / "northwind"), "-n", "northwind", "--create", "--home", str(home)],
    )
    assert result.exit_code == 0, result.output
    container = Container(Settings.from_env(home=home))
    with TestClient(build_app(ROOT / "functions", "local", container), base_url="http://localhost") as c:
        yield c
    container.close()


def test_search_documents_and_chat_routes_answer(client: TestClient) -> None:
    # Given the northwind samples ingested by the CLI
    # When a search runs, Then its hits are chunk views in camelCase
    hits = client.post("/v1/namespaces/northwind/search", json={"query": "tyre pressure", "k": 3})
    assert hits.status_code == 200 and "maintenance-guide.html" in hits.json()["hits"][0]["id"]
    assert hits.json()["hits"][0]["documentId"] == "maintenance-guide.html" and hits.json()["runId"]
    # and the documents route lists all seven
    docs = client.get("/v1/namespaces/northwind/documents")
    assert docs.status_code == 200 and len(docs.json()["documents"]) == 7
    # and a non-streaming chat answers from them
    chat = client.post(
        "/v1/chat",
        json={
            "messages": [{"role": "user", "content": "Which store has a workshop?"}],
            "namespaces": ["northwind"],
            "stream": False,
        },
    )
    assert chat.status_code == 200 and "Leeds" in chat.json()["answer"]
    assert chat.json()["exitReason"] and chat.json()["runId"]
    # and a namespace that does not exist is a 404 with its code
    missing = client.post("/v1/namespaces/nope/search", json={"query": "x"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "namespace_not_found"


def test_namespaces_and_keys_routes_answer(client: TestClient) -> None:
    # Given the northwind namespace the CLI created
    # When the namespaces routes are called, Then they list, create, change and delete
    listing = client.get("/v1/namespaces")
    assert listing.status_code == 200
    assert [n["namespaceId"] for n in listing.json()["namespaces"]] == ["northwind"]
    one = client.get("/v1/namespaces/northwind")
    assert one.status_code == 200 and one.json()["embeddingModel"]
    created = client.post("/v1/namespaces", json={"namespaceId": "notes", "description": "scratch"})
    assert created.status_code == 201 and created.json()["description"] == "scratch"
    patched = client.patch("/v1/namespaces/notes", json={"description": "kept"})
    assert patched.status_code == 200 and patched.json()["description"] == "kept"
    deleted = client.delete("/v1/namespaces/notes")
    assert deleted.status_code == 200 and deleted.json() == {"namespaceId": "notes", "deleted": True}
    # and a snake_case field is refused, not ignored
    snake = client.post("/v1/namespaces", json={"namespace_id": "other"})
    assert snake.status_code == 400 and snake.json()["error"]["code"] == "invalid_request"

    # When the keys routes are called, Then the local tenant has no keys and its usage counts one run
    keys = client.get("/v1/keys")
    assert keys.status_code == 200 and keys.json() == {"keys": []}
    assert client.post("/v1/namespaces/northwind/search", json={"query": "tyre"}).status_code == 200
    usage = client.get("/v1/usage")
    assert usage.status_code == 200 and usage.json()["runs"] == 1
    assert usage.json()["usage"]["retrievals"] == 1 and "embeddedTokens" in usage.json()["usage"]


def test_hosting_search_route_answers_offline_and_refuses_extra_fields(client: TestClient) -> None:
    # Given the northwind samples and no model endpoint, When hosting search runs through the real handler
    out = client.post(
        "/v1/hosting-search",
        json={"query": "How long can I return a bicycle?", "namespaces": ["northwind"], "mode": "fast"},
    )
    body = out.json()
    # Then the offline loop ran for real and the best chunk holds the returns policy
    assert out.status_code == 200, body
    assert body["model"] == "extractive (offline, no LLM)" and body["runId"]
    assert body["totalQueries"] == len(body["queries"]) >= 2 and body["rounds"][0]["round"] == 1
    assert body["exitReason"] in ("can_answer", "max_evals", "no_new_queries")
    assert body["chunks"][0]["documentId"] == "returns-policy.md" and body["usage"]["retrievals"] >= 2
    # and an unknown field is a 400 in the one error shape
    bad = client.post("/v1/hosting-search", json={"query": "x", "colour": "red"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_request"


def sse_events(raw: str) -> list[dict[str, object]]:
    return [
        json.loads(line.removeprefix("data: "))
        for block in raw.split("\n\n")
        for line in block.splitlines()
        if line.startswith("data: ")
    ]


@pytest.mark.parametrize("agent", ["auto", "agentic", "deep_search", "chain_of_rag"])
def test_every_agent_streams_over_http_offline(client: TestClient, agent: str) -> None:
    # Given no model endpoint and no namespaces named, When a chat with this agent streams over HTTP
    question = "How long is the frame warranty, and can I return a used bike?"
    out = client.post("/v1/chat", json={"messages": [{"role": "user", "content": question}], "agent": agent})
    assert out.status_code == 200 and out.headers["content-type"].startswith("text/event-stream")
    events = sse_events(out.text)
    kinds = [e["type"] for e in events]
    # Then the collection router picked the only namespace, and (auto) the router named the offline default
    assert events[0] == {"type": "collections", "namespaces": ["northwind"], "reason": ANY}
    if agent == "auto":
        assert events[1] == {"type": "route", "agent": "agentic", "reason": ANY, "fallback": False}
        assert "offline" in str(events[1]["reason"])
    assert "tool_start" in kinds and kinds[-2:] == ["sources", "final"]
    final = events[-1]
    assert final["exitReason"] == "answered" and events[-2]["chunks"], events[-2:]
    searches = [e["label"] for e in events if e["type"] == "tool_start"]
    if agent == "deep_search":  # split at the clause into two sub-queries
        assert len(searches) == 2


def test_an_unknown_agent_is_a_400_in_the_one_error_shape(client: TestClient) -> None:
    out = client.post("/v1/chat", json={"messages": [{"role": "user", "content": "hi"}], "agent": "magic"})
    assert out.status_code == 400 and out.json()["error"]["code"] == "invalid_request"
    assert set(out.json()["error"]) == {"code", "message", "details"}


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:8000", "localhost.evil.example", "127.0.0.1.nip.io:8000", "10.0.0.5", ""],
)
def test_a_request_addressed_to_another_name_is_refused_before_any_route(
    client: TestClient, host: str
) -> None:
    # Given a page of another site whose name was rebound to 127.0.0.1 (DNS rebinding): its requests
    # reach this server but name that site in Host
    for method, path in (("GET", "/v1/namespaces/northwind/documents"), ("POST", "/mcp"), ("GET", "/")):
        # When it reads the documents, calls MCP or loads the playground
        reply = client.request(method, path, headers={"host": host}, json={})
        # Then it is refused in the one error shape, and nothing is served
        assert reply.status_code == 403, (host, path, reply.text)
        assert set(reply.json()) == {"error"} and reply.json()["error"]["code"] == "forbidden"


@pytest.mark.parametrize("host", ["localhost:8000", "127.0.0.1:8000", "LOCALHOST", "[::1]:8000", "127.0.0.1"])
def test_loopback_names_are_served(client: TestClient, host: str) -> None:
    reply = client.get("/v1/namespaces/northwind/documents", headers={"host": host})
    assert reply.status_code == 200 and len(reply.json()["documents"]) == 7


def test_the_operators_tenant_exists_from_the_first_request(tmp_path: Path) -> None:
    """``ragline serve`` (no ``--api-keys``): a key can be made at once, no ``tenants create`` first."""
    from ragline.cli.serve import operator_tenant

    container = Container(Settings.from_env(home=tmp_path / "home"))
    try:
        with TestClient(build_app(ROOT / "functions", "local", container), base_url="http://localhost") as c:
            before = c.post("/v1/keys", json={"scopes": ["search"]})
            assert before.status_code == 404, before.text  # what a newcomer met before
            operator_tenant(container, "local")
            operator_tenant(container, "local")  # again: the record is kept, not replaced
            made = c.post("/v1/keys", json={"scopes": ["search"]})
            assert made.status_code == 201, made.text
        assert [k.key_id for k in container.tenancy.list_keys("local")] == [made.json()["keyId"]]
    finally:
        container.close()


def test_ragline_serve_makes_its_operators_tenant_and_not_with_api_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    from ragline.errors import NotFound

    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: None)  # the server itself is not started
    functions = str(ROOT / "functions")
    for home, flags in ((tmp_path / "keys", ["--api-keys"]), (tmp_path / "operator", [])):
        result = CliRunner().invoke(cli, ["serve", "--home", str(home), "--functions", functions, *flags])
        assert result.exit_code == 0, result.output
    for home, exists in ((tmp_path / "keys", False), (tmp_path / "operator", True)):
        container = Container(Settings.from_env(home=home))
        try:
            try:
                container.registry.get_tenant("local")
                found = True
            except NotFound:
                found = False
            assert found == exists, home
        finally:
            container.close()
