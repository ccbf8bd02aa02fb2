"""The permission probe over the wire (issue 29): the same world and hostile model as
``test_permission_probe.py``, reached the ways a caller reaches Ragline — the real authorizer and REST
handlers (search, hosting search, documents) and the chat app (streamed and not), with the user
asserted by a key (``Ragline-User-Id``/``Ragline-User-Groups``) or carried by the tenant's identity
provider's token; and ``ragline serve`` under uvicorn through the Python client and MCP's ``/mcp``.
No response, event stream or error carries a trace of a document the user may not read, and what is
unreadable answers as what does not exist."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent, TextResourceContents

from ragline.cli.serve import build_app
from ragline.client import RaglineClient
from ragline.config import Settings
from ragline.domain.access import UserContext
from ragline.domain.identity import IdentityProvider
from ragline.domain.tenancy import ALL_SCOPES
from ragline.wiring import Container
from tests.support.acl_world import (
    DOCS,
    NAMESPACES,
    USERS,
    WIDENING_FILTERS,
    HostileModel,
    build,
    hostile_calls,
    leaks,
    readable,
)
from tests.support.fakes import BowEmbedder
from tests.support.identity_tokens import SigningKey, claims
from tests.support.lambda_harness import call_rest, chat_client, chat_headers, load_handler

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]
ISSUER = "https://idp.acme.test/"
IDP_KEY = SigningKey("acme-probe")
FUNCTIONS = {
    name: load_handler(name) for name in ("authorizer", "search", "chat", "documents", "hosting_search")
}
NS = "/v1/namespaces/{namespace}"
QUESTION = "What are the hr salaries, the exec plan and alice's payroll notes?"
WHO = sorted(n for n in USERS if USERS[n] is not None)


class Api:
    def __init__(self, home: Path) -> None:
        self.c = Container(
            Settings(home=home),
            embedder=BowEmbedder(),
            tokenizer=BowEmbedder(),
            chat_model=HostileModel(hostile_calls()),
        )
        build(self.c)
        self.key = self.c.tenancy.create_key("acme", scopes=list(ALL_SCOPES), assert_user=True)[0]
        self.c.registry.put_identity_provider(
            "acme", IdentityProvider(issuer=ISSUER, audiences=("app",), jwks=(IDP_KEY.jwk,))
        )

    def credentials(self, user: UserContext, kind: str) -> tuple[str, dict[str, str]]:
        """A bearer credential and the headers that make a request act for ``user``."""
        if kind == "token":
            return IDP_KEY.token(claims(ISSUER, user=user.user_id, groups=sorted(user.groups))), {}
        headers = {"Ragline-User-Id": user.user_id}
        if user.groups:
            headers["Ragline-User-Groups"] = ",".join(sorted(user.groups))
        return self.key, headers

    def authorize(self, credential: str) -> dict[str, str]:
        event = {
            "type": "REQUEST",
            "methodArn": "arn:aws:execute-api:us-east-1:123456789012:abc123/dev/POST/v1/chat",
            "headers": {"Authorization": f"Bearer {credential}"},
        }
        return dict(FUNCTIONS["authorizer"].lambda_handler(event, None, container=self.c)["context"])

    def rest(
        self, context: dict[str, str], headers: dict[str, str], fn: str, method: str, path: str,
        resource: str, body: Any = None,
    ) -> tuple[int, Any]:  # fmt: skip
        return call_rest(FUNCTIONS[fn], self.c, method, path, resource=resource, authorizer=context,
                         body=body, headers=headers)  # fmt: skip

    def chat(self, context: dict[str, str], headers: dict[str, str], body: dict[str, Any]) -> tuple[int, str]:
        with chat_client(FUNCTIONS["chat"], self.c) as client:
            response = client.post("/v1/chat", json=body, headers=chat_headers(context, **headers))
        return response.status_code, response.text


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    a = Api(tmp_path_factory.mktemp("acl-http"))
    yield a
    a.c.close()


def sealed(user: UserContext, route: str, payload: Any) -> None:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    assert leaks(user, text) == [], (route, text[:1500])


@pytest.mark.parametrize("kind", ["asserted", "token"])
@pytest.mark.parametrize("who", WHO)
def test_every_route_through_the_authorizer_leaks_nothing(api: Api, who: str, kind: str) -> None:
    user = USERS[who]
    assert user is not None
    credential, headers = api.credentials(user, kind)
    context = api.authorize(credential)
    for ns in NAMESPACES:
        for mode in ("semantic", "keyword", "hybrid"):
            body = {"query": "kettle payroll salary plan notes", "mode": mode, "k": 100}
            status, hits = api.rest(
                context, headers, "search", "POST", f"/v1/namespaces/{ns}/search", NS + "/search", body
            )
            assert status == 200, hits
            sealed(user, f"search {ns} {mode}", hits)
            got = {(h["documentId"], h["sequenceNumber"]) for h in hits["hits"]}
            assert got == {
                (d.document_id, i) for d in DOCS if d.namespace == ns and readable(user, d) for i in range(3)
            }
        for where in WIDENING_FILTERS[:4]:
            body = {"query": "payroll", "k": 100, "filter": where}
            status, hits = api.rest(
                context, headers, "search", "POST", f"/v1/namespaces/{ns}/search", NS + "/search", body
            )
            assert status == 200, hits
            sealed(user, "filtered search", hits)
    status, found = api.rest(
        context, headers, "hosting_search", "POST", "/v1/hosting-search", "/v1/hosting-search",
        {"query": QUESTION, "namespaces": list(NAMESPACES), "topK": 100},
    )  # fmt: skip
    assert status == 200, found
    sealed(user, "hosting search", found)
    for agent in ("agentic", "deep_search", "chain_of_rag", "auto"):
        for stream in (True, False):
            body = {"messages": [{"role": "user", "content": QUESTION}], "namespaces": list(NAMESPACES),
                    "agent": agent, "stream": stream}  # fmt: skip
            status, text = api.chat(context, headers, body)
            assert status == 200, text
            sealed(user, f"chat {agent} stream={stream}", text)


@pytest.mark.parametrize("kind", ["asserted", "token"])
@pytest.mark.parametrize("who", WHO)
def test_documents_through_the_authorizer_hide_what_the_user_may_not_read(
    api: Api, who: str, kind: str
) -> None:
    user = USERS[who]
    assert user is not None
    credential, headers = api.credentials(user, kind)
    context = api.authorize(credential)
    path = "/v1/namespaces/docs/documents"
    status, listed = api.rest(context, headers, "documents", "GET", path, NS + "/documents")
    assert status == 200
    assert {d["documentId"] for d in listed["documents"]} == {
        d.document_id for d in DOCS if d.namespace == "docs" and readable(user, d)
    }
    sealed(user, "documents list", listed)
    missing = api.rest(
        context, headers, "documents", "GET", path + "/no-such-doc", NS + "/documents/{document_id}"
    )
    for doc in DOCS:
        if doc.namespace != "docs" or readable(user, doc):
            continue
        got = api.rest(
            context, headers, "documents", "GET", f"{path}/{doc.document_id}", NS + "/documents/{document_id}"
        )
        assert got[0] == missing[0] == 404
        assert json.dumps(got[1]) == json.dumps(missing[1]).replace("no-such-doc", doc.document_id)


class Served:
    """``ragline serve``'s whole app (REST, chat and ``/mcp``) with API keys, under uvicorn."""

    def __init__(self, c: Container) -> None:
        app = build_app(ROOT / "functions", "acme", c, api_keys=True)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def served(api: Api) -> Iterator[Served]:
    s = Served(api.c)
    yield s
    s.stop()


@pytest.mark.parametrize("who", WHO)
def test_the_python_client_acting_for_a_user_leaks_nothing(api: Api, served: Served, who: str) -> None:
    user = USERS[who]
    assert user is not None
    with RaglineClient(served.url, api.key).for_user(user.user_id, sorted(user.groups)) as rl:
        outputs: list[Any] = [
            rl.search("docs", "payroll salary", k=100),
            rl.search("docs", "payroll", filter=WIDENING_FILTERS[0]),
            rl.hosting_search(QUESTION, namespaces=list(NAMESPACES)),
            rl.ask(QUESTION, namespaces=list(NAMESPACES)),
            rl.list_documents("docs"),
            *rl.chat(QUESTION, namespaces=list(NAMESPACES), agent="deep_search"),
        ]
        for output in outputs:
            sealed(user, "client", output.model_dump_json())


@pytest.mark.parametrize("who", WHO)
def test_mcp_over_http_acting_for_a_user_leaks_nothing(api: Api, served: Served, who: str) -> None:
    user = USERS[who]
    assert user is not None
    _, headers = api.credentials(user, "asserted")
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {api.key}", **headers}, timeout=httpx2.Timeout(120.0)
    )
    client = Client(streamable_http_client(served.url + "/mcp", http_client=http), read_timeout_seconds=120)

    async def steps() -> list[str]:
        async with client:
            texts = []
            for name, arguments in (
                ("search", {"namespace": "docs", "query": "payroll salary", "k": 100}),
                ("search", {"namespace": "docs", "query": "payroll", "filter": WIDENING_FILTERS[1]}),
                ("hosting_search", {"query": QUESTION, "namespaces": list(NAMESPACES)}),
                ("ask", {"question": QUESTION, "namespaces": list(NAMESPACES), "agent": "chain_of_rag"}),
            ):
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.content
                texts += [c.text for c in result.content if isinstance(c, TextContent)]
            resource = await client.read_resource("ragline://namespaces/docs")
            texts += [c.text for c in resource.contents if isinstance(c, TextResourceContents)]
            return texts

    texts = anyio.run(steps)
    for text in texts:
        sealed(user, "mcp over http", text)
    readable_here = [d for d in DOCS if d.namespace == "docs" and readable(user, d)]
    assert json.loads(texts[-1])["documentCount"] == len(readable_here)  # a count is no oracle
