"""``ragline.client.RaglineClient`` against ``ragline serve --api-keys`` over real HTTP (uvicorn on
127.0.0.1): every call, typed events from the SSE stream, typed errors, idempotent retries."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from ragline import errors
from ragline.agents.events import AnswerDelta, Collections, RunFinished, Sources
from ragline.cli.serve import build_app
from ragline.client import RaglineClient
from ragline.config import Settings
from ragline.domain.billing import current_period
from ragline.wiring import Container

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]


class Server:
    def __init__(self, home: Path, **settings: Any) -> None:
        self.container = Container(Settings(home=home, **settings))
        self.container.tenancy.create_tenant("acme")
        self.container.tenancy.create_tenant("globex")
        self.admin, _ = self.container.tenancy.create_key(
            "acme", scopes=["chat", "search", "ingest", "admin"]
        )
        self.globex, _ = self.container.tenancy.create_key(
            "globex", scopes=["chat", "search", "ingest", "admin"]
        )
        app = build_app(ROOT / "functions", "acme", self.container, api_keys=True)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def runs(self, tenant: str = "acme") -> int:
        return self.container.ledger.period_runs(tenant, current_period())

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.container.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(tmp_path_factory.mktemp("home"))
    yield s
    s.stop()


@pytest.fixture
def rl(server: Server) -> Iterator[RaglineClient]:
    with RaglineClient(server.url, server.admin, backoff_s=0.01) as client:
        yield client


def test_admin_documents_search_and_usage(rl: RaglineClient, server: Server) -> None:
    ns = rl.create_namespace("docs", description="Shop policies", default=True)
    assert ns.namespace_id == "docs" and ns.default
    assert [n.namespace_id for n in rl.list_namespaces().namespaces] == ["docs"]
    assert (
        rl.update_namespace("docs", description="Bicycle shop policies").description
        == "Bicycle shop policies"
    )
    doc = rl.add_text("docs", "warranty.md", "The frame warranty lasts ten years from the date of purchase.")
    assert doc.document_id == "warranty.md" and doc.status == "ready" and doc.chunk_count == 1
    rl.add_text("docs", "notes/returns.md", "Bicycles can be returned within thirty days.")
    assert rl.get_document("docs", "notes/returns.md").document_id == "notes/returns.md"  # a "/" in an id
    assert {d.document_id for d in rl.list_documents("docs").documents} == {"warranty.md", "notes/returns.md"}
    before = server.runs()
    found = rl.search("docs", "frame warranty", k=3)
    assert found.hits[0].document_id == "warranty.md" and found.hits[0].scores is not None
    assert server.runs() == before + 1 and rl.usage().runs == before + 1
    key = rl.create_key(["search"], name="reader", namespaces=["docs"])
    assert key.api_key.startswith("rl_") and key.key_id in {k.key_id for k in rl.list_keys().keys}
    assert rl.revoke_key(key.key_id).key_id == key.key_id
    assert rl.delete_document("docs", "notes/returns.md").status == "deleted"


def test_chat_streams_typed_events_and_ask_returns_the_body(rl: RaglineClient, server: Server) -> None:
    events = list(rl.chat("How long is the frame warranty?"))
    assert isinstance(events[0], Collections) and events[0].namespaces == ["docs"]
    assert any(isinstance(e, AnswerDelta) for e in events)
    sources = next(e for e in events if isinstance(e, Sources))
    final = events[-1]
    assert isinstance(final, RunFinished) and final.exit_reason == "answered"
    assert "warranty.md#0" in [s.id for s in sources.chunks] and "ten years" in final.answer
    body = rl.ask("How long is the frame warranty?", namespaces=["docs"], agent="deep_search")
    assert body.exit_reason == "answered" and body.sources and body.run_id
    # each carries its typed query plan: what it searched, at which step
    assert final.plan is not None and final.plan.agent == "agentic" and final.plan.collections is not None
    assert [r.step for r in final.plan.retrievals] and all(
        r.namespaces == ["docs"] for r in final.plan.retrievals
    )
    assert body.plan is not None and body.plan.agent == "deep_search" and len(body.plan.rounds) == 1


def test_an_idempotency_key_replays_instead_of_charging_again(rl: RaglineClient, server: Server) -> None:
    before = server.runs()
    first = rl.search("docs", "warranty", idempotency_key="client-test-1")
    again = rl.search("docs", "warranty", idempotency_key="client-test-1")
    assert again.replayed and again.run_id == first.run_id == "client-test-1"
    assert server.runs() == before + 1


def test_errors_are_the_servers_typed_errors(rl: RaglineClient, server: Server) -> None:
    with pytest.raises(errors.NamespaceNotFound) as missing:
        rl.search("nope", "x")
    assert missing.value.status == 404 and "nope" in missing.value.message  # type: ignore[attr-defined]
    with pytest.raises(errors.InvalidRequest):
        rl.search("docs", "   ")
    # another tenant: the same 404
    with RaglineClient(server.url, server.globex) as other, pytest.raises(errors.NamespaceNotFound):
        other.search("docs", "warranty")
    with RaglineClient(server.url, "rl_" + "x" * 40) as bad, pytest.raises(errors.Unauthorized) as denied:
        bad.list_namespaces()
    assert denied.value.status == 401  # type: ignore[attr-defined]


class Flaky(httpx.BaseTransport):
    """Answers the first ``failures`` requests with ``status`` (and a Retry-After), then forwards."""

    def __init__(self, inner: httpx.BaseTransport, failures: int, status: int) -> None:
        self.inner, self.failures, self.status = inner, failures, status
        self.seen: list[tuple[str, str | None]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append((request.method, request.headers.get("idempotency-key")))
        if self.failures > 0:
            self.failures -= 1
            body = {"error": {"code": "dependency_unavailable", "message": "try again", "details": {}}}
            return httpx.Response(self.status, json=body, headers={"retry-after": "0"})
        return self.inner.handle_request(request)


@pytest.mark.parametrize("status", [429, 503])
def test_runs_are_retried_under_one_idempotency_key(server: Server, status: int) -> None:
    flaky = Flaky(httpx.HTTPTransport(), failures=2, status=status)
    before = server.runs()
    with RaglineClient(server.url, server.admin, transport=flaky, backoff_s=0.01) as rl:
        assert rl.search("docs", "warranty").hits
    keys = {key for _, key in flaky.seen}
    assert len(flaky.seen) == 3 and len(keys) == 1 and None not in keys  # one run, one key
    assert server.runs() == before + 1


def test_a_write_that_may_have_happened_is_not_retried(server: Server) -> None:
    flaky = Flaky(httpx.HTTPTransport(), failures=1, status=503)
    client = RaglineClient(server.url, server.admin, transport=flaky, backoff_s=0.01)
    with client as rl, pytest.raises(errors.DependencyUnavailable) as failed:
        rl.create_key(["search"])
    assert len(flaky.seen) == 1 and failed.value.status == 503  # type: ignore[attr-defined]


def test_retries_give_up_after_the_limit(server: Server) -> None:
    flaky = Flaky(httpx.HTTPTransport(), failures=10, status=503)
    client = RaglineClient(server.url, server.admin, transport=flaky, max_retries=2, backoff_s=0.01)
    with client as rl, pytest.raises(errors.DependencyUnavailable):
        rl.list_namespaces()
    assert len(flaky.seen) == 3


def test_document_metadata_and_access_through_the_client(rl: RaglineClient) -> None:
    """Issue 29 #1: the client sets, changes and reads a document's metadata and access, and declares
    the namespace's metadata types; a clash is the typed 409."""
    rl.create_namespace("labelled")
    ns = rl.update_namespace("labelled", metadata_schema={"published": "date"})
    assert ns.metadata_schema == {"published": "date"}
    doc = rl.add_text(
        "labelled", "guide.md", "Brakes are bled every spring.",
        metadata={"published": "2024-03-01", "year": 2024}, groups=["mechanics"],
    )  # fmt: skip
    assert doc.metadata == {"published": "2024-03-01T00:00:00Z", "year": 2024.0}
    assert doc.access is not None and doc.access.groups == ["mechanics"] and not doc.access.everyone
    hits = rl.search("labelled", "brakes", mode="keyword").hits
    assert hits and hits[0].metadata == doc.metadata
    done = rl.update_document("labelled", "guide.md", metadata={"year": 2025}, users=[], groups=[])
    assert done.status == "updated" and done.document.metadata == {"year": 2025.0}
    assert done.document.access is not None and done.document.access.everyone
    with pytest.raises(errors.Conflict) as clash:
        rl.update_document("labelled", "guide.md", metadata={"year": "next"})
    assert clash.value.code == "metadata_type_clash"
    assert rl.get_document("labelled", "guide.md").metadata == {"year": 2025.0}


def test_the_client_acts_for_end_users_and_sets_the_identity_provider(server: Server) -> None:
    from tests.support.identity_tokens import SigningKey, claims

    with RaglineClient(server.url, server.admin, max_retries=0) as admin:
        made = admin.create_key(["search"], name="users", assert_user=True)
        assert (made.assert_user, made.require_user) == (True, False)
        with RaglineClient(server.url, made.api_key, max_retries=0) as keyed:
            alice = keyed.for_user("alice", ["hr", "eng"])
            assert alice.list_namespaces().namespaces is not None  # the right: accepted
        with pytest.raises(errors.Forbidden):  # the admin key has no right to name a user
            admin.for_user("alice").list_namespaces()
        signer, issuer = SigningKey("client-1"), "https://idp.client.test/"
        view = admin.set_identity_provider({"issuer": issuer, "audiences": ["app"], "jwks": [signer.jwk]})
        assert admin.get_identity_provider() == view and view.scopes == ["chat", "search"]
        with RaglineClient(server.url, signer.token(claims(issuer)), max_retries=0) as browser:
            assert browser.list_namespaces().namespaces is not None  # a token is a bearer credential too
        assert admin.delete_identity_provider().deleted is True
        with pytest.raises(errors.NotFound):
            admin.get_identity_provider()
