"""Ragline's MCP server through the SDK's own client, over both transports: ``ragline mcp`` spawned as a
stdio subprocess, and ``/mcp`` of ``ragline serve``'s app under uvicorn (streamable HTTP).

Two tenants with namespaces, documents and keys share one home (the default offline models, as the
subprocess builds them). Scopes, allow-lists, tenant isolation and the one charge per run are the REST
routes' own; errors are tool errors carrying the one error shape.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
import uvicorn
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent, TextResourceContents
from starlette.testclient import TestClient

from ragline.cli.serve import build_app
from ragline.config import Settings
from ragline.domain.billing import current_period
from ragline.domain.models import TenantScope
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]
DOCS = {
    ("acme", "docs", "Shop policies"): {
        "warranty.txt": "The frame warranty lasts ten years from the date of purchase.",
        "returns.txt": "Bicycles can be returned within thirty days for a full refund.",
    },
    ("acme", "payroll", "Staff pay"): {"salaries.txt": "Acme salaries are paid on the last Friday."},
    ("globex", "docs", "Globex notes"): {"tulips.txt": "Globex tulip bulbs are planted in October."},
    ("globex", "bulbs", ""): {"bulbs.txt": "Globex stores bulbs at nine degrees."},
}
ACME_IDS = {"warranty.txt", "returns.txt", "salaries.txt"}
GLOBEX_IDS = {"tulips.txt", "bulbs.txt"}
QUESTION = "How long does the frame warranty last?"


class World:
    """The home both transports serve, its container, and one key per kind of caller."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.c = Container(Settings(home=home))
        for tenant in ("acme", "globex"):
            self.c.tenancy.create_tenant(tenant)
        for (tenant, ns, description), files in DOCS.items():
            self.c.registry.create_namespace(new_namespace(tenant, ns, description, default=ns == "docs"))
            for name, text in files.items():
                scope = TenantScope(tenant_id=tenant, namespace_id=ns)
                self.c.ingest.ingest(scope, filename=name, data=text.encode())
        tenancy = self.c.tenancy
        self.keys = {
            "acme": tenancy.create_key("acme", scopes=["chat", "search"])[0],
            # search only, and only the docs namespace
            "acme_docs_search": tenancy.create_key("acme", scopes=["search"], namespaces=["docs"])[0],
            "globex": tenancy.create_key("globex", scopes=["chat", "search"])[0],
        }

    def runs(self, tenant: str) -> int:
        return self.c.ledger.period_runs(tenant, current_period())


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    w = World(tmp_path_factory.mktemp("mcp") / "home")
    yield w
    w.c.close()


@pytest.fixture(scope="module")
def http_url(world: World) -> Iterator[str]:
    """``ragline serve``'s whole app (with ``/mcp``) under uvicorn on a free port of 127.0.0.1."""
    app = build_app(ROOT / "functions", "acme", world.c)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    thread.join(timeout=10)


def stdio(world: World, key: str | None) -> StdioServerParameters:
    env = {"RAGLINE_HOME": str(world.home)}
    if key is not None:
        env["RAGLINE_API_KEY"] = key
    return StdioServerParameters(command=sys.executable, args=["-m", "ragline.cli.app", "mcp"], env=env)


def over_stdio(world: World, key: str, mode: str = "auto") -> Client:
    """``mode``: ``auto`` (the 2026-07-28 protocol, found by discovery) or ``legacy`` (the handshake)."""
    return Client(stdio(world, key), read_timeout_seconds=120, mode=mode)


def over_http(url: str, key: str, mode: str = "auto") -> Client:
    headers = {"Authorization": f"Bearer {key}"}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120.0))
    return Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120, mode=mode)


def session(client: Client, steps: Callable[[Client], Awaitable[Any]]) -> Any:
    """Run ``steps`` on a connected ``client`` (the SDK is async; the tests are not)."""

    async def main() -> Any:
        async with client:
            return await steps(client)

    return anyio.run(main)


def json_of(content: object) -> Any:
    assert isinstance(content, TextContent | TextResourceContents), content
    return json.loads(content.text)


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    body = json_of(result.content[0])
    assert result.structured_content == body
    return dict(body)


def refused(result: CallToolResult) -> dict[str, Any]:
    """A tool error's one error shape."""
    assert result.is_error
    body = json_of(result.content[0])
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    return dict(body["error"])


@contextmanager
def charged(world: World, tenant: str, runs: int) -> Iterator[None]:
    before = world.runs(tenant)
    yield
    assert world.runs(tenant) - before == runs


def cited_ids(body: dict[str, Any]) -> set[str]:
    chunks = body.get("hits") or body.get("chunks") or body.get("sources") or []
    return {c["documentId"] for c in chunks}


# -- stdio -----------------------------------------------------------------------------------------


def test_stdio_serves_the_tools_and_resources_as_the_environment_key(world: World) -> None:
    # Given `ragline mcp` spawned with acme's chat+search key in RAGLINE_API_KEY
    async def steps(client: Client) -> dict[str, Any]:
        tools = await client.list_tools()
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        docs = await client.read_resource("ragline://namespaces/docs")
        return {
            "tools": {t.name: t for t in tools.tools},
            "resources": {r.uri: r for r in resources.resources},
            "templates": [t.uri_template for t in templates.resource_templates],
            "docs": docs.contents[0],
            "search": await client.call_tool(
                "search", {"namespace": "docs", "query": "frame warranty", "mode": "hybrid", "k": 3}
            ),
            "hosting": await client.call_tool(
                "hosting_search",
                {"query": QUESTION, "namespaces": ["docs"], "maxEvals": 2, "topK": 5, "mode": "fast"},
            ),
            "ask": await client.call_tool("ask", {"question": QUESTION, "namespaces": ["docs"]}),
        }

    with charged(world, "acme", 3), charged(world, "globex", 0):
        out = session(over_stdio(world, world.keys["acme"]), steps)

    # Then the three tools are listed, with input and output schemas
    assert set(out["tools"]) == {"search", "hosting_search", "ask"}
    assert out["tools"]["search"].input_schema["required"] == ["query", "namespace"]
    assert "question" in out["tools"]["ask"].input_schema["properties"]
    assert all(t.output_schema for t in out["tools"].values())
    # and the key's namespaces are the resources, each with its description
    assert set(out["resources"]) == {"ragline://namespaces/docs", "ragline://namespaces/payroll"}
    assert out["resources"]["ragline://namespaces/docs"].description == "Shop policies"
    assert out["templates"] == ["ragline://namespaces/{namespace}"]
    docs = json_of(out["docs"])
    assert docs["namespaceId"] == "docs" and docs["documentCount"] == 2 and docs["default"] is True
    # and search answers the route's body: hits with ids, text, filename and scores
    hits = ok(out["search"])["hits"]
    assert hits[0]["id"] == "warranty.txt#0" and hits[0]["filename"] == "warranty.txt"
    assert "ten years" in hits[0]["text"] and hits[0]["scores"]["fusedScore"] is not None
    # and hosting search its chunks, rounds and exit reason
    hosting = ok(out["hosting"])
    assert hosting["chunks"] and hosting["rounds"] and hosting["exitReason"]
    assert "warranty.txt" in cited_ids(hosting)
    # and ask the final answer with its verified sources and usage (the extractive model, offline)
    answer = ok(out["ask"])
    assert "ten years" in answer["answer"] and '<citation ids="warranty.txt#0"/>' in answer["answer"]
    assert cited_ids(answer) == {"warranty.txt"} and answer["usage"]["retrievals"] >= 1
    assert answer["runId"] and answer["exitReason"]
    # with its grounding: each cited sentence checked against the chunk it cites (issue 30 #1)
    grounding = answer["grounding"]
    assert grounding["status"] == "scored" and 0.0 <= grounding["score"] <= 1.0
    assert grounding["sentences"][0]["citations"] == ["warranty.txt#0"]


def test_stdio_tool_errors_carry_the_one_error_shape(world: World) -> None:
    # Given `ragline mcp` as acme's key, and a client of the handshake era
    async def steps(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool("search", {"namespace": "bulbs", "query": "bulbs"}),  # globex's
            await client.call_tool("search", {"namespace": "nope", "query": "bulbs"}),
            await client.call_tool("search", {"namespace": "docs", "query": "x", "mode": "fuzzy"}),
            await client.call_tool("hosting_search", {"namespaces": ["docs"]}),
        ]

    with charged(world, "acme", 0), charged(world, "globex", 0):
        other, missing, bad_mode, neither = session(over_stdio(world, world.keys["acme"], "legacy"), steps)

    # Then another tenant's namespace is the same not-found as a missing one (nothing is charged)
    assert refused(other)["code"] == "namespace_not_found"
    assert refused(missing)["code"] == "namespace_not_found"
    assert refused(other)["message"] == "namespace 'bulbs' does not exist"
    # and invalid arguments are the route's 400 code, naming the field
    invalid = refused(bad_mode)
    assert invalid["code"] == "invalid_request" and invalid["details"]["problems"][0]["loc"] == ["mode"]
    assert refused(neither)["code"] == "invalid_request"


@pytest.mark.parametrize(
    ("key", "message"),
    [(None, "RAGLINE_API_KEY is not set"), ("rl_" + "x" * 40, "unknown or revoked API key")],
)
def test_stdio_refuses_to_start_without_a_valid_key(world: World, key: str | None, message: str) -> None:
    # Given `ragline mcp` with no key, or one no tenant has
    params = stdio(world, key)
    env = {"PATH": os.environ.get("PATH", ""), **(params.env or {})}

    # When it starts, Then it exits at once with the reason, before reading any request
    done = subprocess.run(
        [params.command, *params.args],
        env=env,
        stdin=subprocess.DEVNULL,  # were it to serve, it would read EOF and end: exit 0, not 2
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert f"error [unauthorized]: {message}" in done.stderr


# -- streamable HTTP -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_http_answers_each_request_as_its_own_key(world: World, http_url: str, mode: str) -> None:
    # Given /mcp on `ragline serve`, globex's key, and a client of either protocol era
    async def steps(client: Client) -> dict[str, Any]:
        resources = await client.list_resources()
        return {
            "resources": sorted(r.uri for r in resources.resources),
            "search": await client.call_tool("search", {"namespace": "docs", "query": "warranty tulips"}),
            "hosting": await client.call_tool("hosting_search", {"query": "frame warranty tulips"}),
            "ask": await client.call_tool("ask", {"question": "When are tulips planted?"}),
            "acme_only": await client.call_tool("search", {"namespace": "payroll", "query": "salaries"}),
        }

    with charged(world, "globex", 3), charged(world, "acme", 0):
        out = session(over_http(http_url, world.keys["globex"], mode), steps)

    # Then globex sees, searches and is answered from globex's documents only
    assert out["resources"] == ["ragline://namespaces/bulbs", "ragline://namespaces/docs"]
    assert cited_ids(ok(out["search"])) == {"tulips.txt"}
    assert cited_ids(ok(out["hosting"])) <= GLOBEX_IDS
    answer = ok(out["ask"])
    assert "October" in answer["answer"] and cited_ids(answer) <= GLOBEX_IDS
    everything = json.dumps([ok(out[name]) for name in ("search", "hosting", "ask")])
    assert not any(doc in everything for doc in ACME_IDS)
    # and acme's namespace is the same not-found as a missing one
    assert refused(out["acme_only"])["code"] == "namespace_not_found"


def test_http_holds_the_keys_scopes_and_allow_list(world: World, http_url: str) -> None:
    # Given acme's key with only the `search` scope, limited to the docs namespace
    async def steps(client: Client) -> dict[str, Any]:
        resources = await client.list_resources()
        try:
            await client.read_resource("ragline://namespaces/payroll")
            hidden: MCPError | None = None
        except MCPError as exc:
            hidden = exc
        return {
            "resources": [r.uri for r in resources.resources],
            "hidden": hidden,
            "docs": json_of((await client.read_resource("ragline://namespaces/docs")).contents[0]),
            "ask": await client.call_tool("ask", {"question": QUESTION}),
            "payroll": await client.call_tool("search", {"namespace": "payroll", "query": "salaries"}),
            "docs_search": await client.call_tool("search", {"namespace": "docs", "query": "refund"}),
        }

    with charged(world, "acme", 1):
        out = session(over_http(http_url, world.keys["acme_docs_search"]), steps)

    # Then it lists and reads only its namespace; the other is not found (not forbidden)
    assert out["resources"] == ["ragline://namespaces/docs"]
    assert out["docs"]["documentCount"] == 2
    assert out["hidden"] is not None and out["hidden"].data["error"]["code"] == "namespace_not_found"
    # and it cannot ask (no `chat` scope) or search outside its list; only its one search is charged
    forbidden = refused(out["ask"])
    assert forbidden["code"] == "forbidden" and forbidden["details"] == {"scopes": ["chat"]}
    assert refused(out["payroll"])["code"] == "namespace_not_found"
    hits = ok(out["docs_search"])["hits"]
    assert hits[0]["documentId"] == "returns.txt" and {h["namespace"] for h in hits} == {"docs"}


@pytest.mark.parametrize("authorization", [None, "Bearer rl_" + "x" * 40, "Basic abc"])
def test_http_without_a_valid_key_is_a_401_in_the_one_error_shape(
    world: World, http_url: str, authorization: str | None
) -> None:
    # Given /mcp, When a request comes with no key, an unknown one or another scheme
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if authorization:
        headers["authorization"] = authorization
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    reply = httpx.post(http_url, json=ping, headers=headers, timeout=30)

    # Then it is refused before MCP sees it, in the one error shape
    assert reply.status_code == 401
    assert reply.json()["error"]["code"] == "unauthorized"


def test_http_keys_are_checked_per_request(world: World, http_url: str) -> None:
    # Given a key that worked, revoked while its client is connected
    plaintext, record = world.c.tenancy.create_key("acme", scopes=["search"])

    async def steps(client: Client) -> tuple[CallToolResult, Exception | None]:
        first = await client.call_tool("search", {"namespace": "docs", "query": "warranty"})
        world.c.tenancy.revoke_key("acme", record.key_id)
        try:
            await client.call_tool("search", {"namespace": "docs", "query": "warranty"})
        except MCPError as exc:  # the transport's HTTP 401
            return first, exc
        return first, None

    # When it calls again, Then the call is refused and only the first search was charged
    with charged(world, "acme", 1):
        first, refusal = session(over_http(http_url, plaintext), steps)
    assert ok(first)["hits"]
    assert refusal is not None and refusal.message == "Server returned an error response"


def test_http_endpoint_runs_with_each_lifespan_of_its_app(world: World) -> None:
    # Given `ragline serve`'s app, and a tools/list request with a valid key
    app = build_app(ROOT / "functions", "acme", world.c)
    headers = {
        "authorization": f"Bearer {world.keys['acme']}",
        "accept": "application/json, text/event-stream",
    }
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}

    # When the app has not started, Then /mcp says so in the one error shape (no bare 500)
    idle = TestClient(app, base_url="http://localhost").post("/mcp", json=listing, headers=headers)
    assert idle.status_code == 503 and idle.json()["error"]["code"] == "dependency_unavailable"
    # and When it is started, stopped and started again, Then /mcp answers each time
    for _ in range(2):
        with TestClient(app, base_url="http://localhost") as client:
            reply = client.post("/mcp", json=listing, headers=headers)
        assert reply.status_code == 200, reply.text
        assert {t["name"] for t in reply.json()["result"]["tools"]} == {"search", "hosting_search", "ask"}


def test_http_refuses_a_user_context_from_a_key_without_the_right(world: World, http_url: str) -> None:
    # Given /mcp and a key created without assertUser, When a request names an end user
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "authorization": f"Bearer {world.keys['acme']}",
        "ragline-user-id": "alice",
    }
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    reply = httpx.post(http_url, json=ping, headers=headers, timeout=30)

    # Then it is refused before MCP sees it, as on every other route
    assert (reply.status_code, reply.json()["error"]["code"]) == (403, "forbidden")
