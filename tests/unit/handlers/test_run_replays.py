"""Run idempotency at the edge: a replayed ``Idempotency-Key`` returns the recorded result and does no
work (no embedding, no retrieval, no model call); a run still going is 409, another request under the
key 422, a key over 255 characters 400 — with nothing charged and nothing done."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from ragline import errors
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.config import Settings
from ragline.domain.billing import current_period
from ragline.domain.models import TenantScope
from ragline.domain.tenancy import Tenant
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder, ScriptedChatModel
from tests.support.lambda_harness import (
    authorizer_context,
    call_rest,
    chat_client,
    chat_headers,
    load_handler,
)
from tests.support.vectors import DIM

pytestmark = pytest.mark.unit
SEARCH = load_handler("search")
CHAT = load_handler("chat")
CHAT_HEADERS = {**chat_headers(authorizer_context("acme")), "content-type": "application/json"}


class CountingEmbedder(BowEmbedder):
    """Counts query embeddings: every retrieval embeds its query first."""

    def __init__(self) -> None:
        self.queries = 0

    def embed_query(self, text: str) -> NDArray[np.float32]:
        self.queries += 1
        return super().embed_query(text)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return super().embed_documents(texts)


class World:
    def __init__(self, root: Path, quota: int | None = None) -> None:
        self.stores = SqliteVectorStoreProvider(root / "s.sqlite", dimension=DIM)
        self.embedder = CountingEmbedder()
        self.model = ScriptedChatModel([[("search", {"query": "rockets"})], ["Rockets launch at dawn."]] * 3)
        self.c = Container(
            Settings(home=root), stores=self.stores, embedder=self.embedder, chat_model=self.model
        )
        if quota is not None:
            self.c.registry.create_tenant(Tenant(tenant_id="acme", max_runs_per_period=quota))
        self.c.registry.create_namespace(new_namespace("acme", "docs"))
        # ingested as the API does (a document record with its chunks): a replay re-reads the record
        self.c.ingest.ingest(
            TenantScope(tenant_id="acme", namespace_id="docs"),
            filename="d.txt",
            data=b"Acme rockets launch at dawn.\n\nRockets need fuel.",
            document_id="d",
        )

    def runs(self) -> int:
        return self.c.ledger.period_runs("acme", current_period())

    def search(self, query: str = "rockets", key: str | None = None, request_id: str = "gw-1") -> Any:
        return call_rest(
            SEARCH,
            self.c,
            "POST",
            "/v1/namespaces/docs/search",
            resource="/v1/namespaces/{namespace}/search",
            authorizer=authorizer_context("acme", scopes="search"),
            body={"query": query},
            request_id=request_id,
            headers={"Idempotency-Key": key} if key is not None else None,
        )

    def chat(self, key: str | None, *, stream: bool, question: str = "When do rockets launch?") -> Any:
        body = {"messages": [{"role": "user", "content": question}], "namespaces": ["docs"], "stream": stream}
        headers = {**CHAT_HEADERS, **({"idempotency-key": key} if key is not None else {})}
        with chat_client(CHAT, self.c) as client:
            return client.post("/v1/chat", content=json.dumps(body), headers=headers)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    yield w
    w.stores.close()


def sse_events(text: str) -> list[dict[str, Any]]:
    return [
        json.loads(dict(line.split(": ", 1) for line in b.splitlines())["data"])
        for b in text.strip().split("\n\n")
    ]


# -- search -----------------------------------------------------------------------------------------
def test_a_replayed_search_returns_the_recorded_response_without_searching(world: World) -> None:
    status, first = world.search(key="k-1")
    assert status == 200 and first["hits"] and "replayed" not in first
    searched = world.embedder.queries

    for _ in range(4):  # When the same request is replayed
        status, again = world.search(key="k-1", request_id="gw-other")
        # Then it is the recorded response, flagged, with no retrieval and no second charge
        assert status == 200 and again == {**first, "replayed": True}
    assert world.embedder.queries == searched
    assert world.runs() == 1


def test_another_search_under_a_used_key_is_422_and_does_nothing(world: World) -> None:
    world.search(key="k-1")
    searched = world.embedder.queries
    status, body = world.search(query="fuel", key="k-1")
    assert status == 422 and body["error"]["code"] == "idempotency_key_reused"
    assert world.embedder.queries == searched and world.runs() == 1


def test_a_search_while_its_key_is_running_is_409(world: World) -> None:
    world.c.ledger.reserve("acme", "k-1", None, "")  # Given a run under k-1 still in progress
    status, body = world.search(key="k-1")
    assert status == 409 and body["error"]["code"] == "run_in_progress"
    assert world.embedder.queries == 0 and world.runs() == 0


def test_a_key_over_255_characters_is_400_before_any_work(world: World) -> None:
    status, body = world.search(key="k" * 2100)
    assert status == 400 and body["error"]["code"] == "invalid_request"
    assert body["error"]["details"] == {"maxLength": 255, "length": 2100}
    assert world.embedder.queries == 0 and world.runs() == 0
    assert world.search(key="k" * 255)[0] == 200 and world.runs() == 1


def test_replays_at_the_quota_are_answered_and_new_runs_refused_uncharged(tmp_path: Path) -> None:
    w = World(tmp_path, quota=1)
    try:
        assert w.search(key="k-1")[0] == 200
        for _ in range(5):
            assert w.search(key="k-1")[0] == 200  # free replays
        for n in range(3):
            status, body = w.search(key=f"new-{n}")
            assert status == 429 and body["error"]["code"] == "quota_exceeded"
        assert w.runs() == 1 and w.embedder.queries == 1
    finally:
        w.stores.close()


class DownOnceEmbedder(CountingEmbedder):
    """Fails its first query embedding as an unreachable endpoint would, then works."""

    def __init__(self) -> None:
        super().__init__()
        self.down = True

    def embed_query(self, text: str) -> NDArray[np.float32]:
        if self.down:
            self.down = False
            raise errors.DependencyUnavailable("the embedding endpoint is unreachable")
        return super().embed_query(text)


def test_a_search_that_failed_before_any_work_takes_no_slot_and_its_key_runs_again(tmp_path: Path) -> None:
    # Given a tenant with room for one run, and an embedder down for the first query
    w = World(tmp_path, quota=1)
    embedder = DownOnceEmbedder()
    w.c = Container(Settings(home=tmp_path), stores=w.stores, embedder=embedder, registry=w.c.registry)
    try:
        # When a search fails before it could search, and the client retries under the same key
        status, body = w.search(key="k-1")
        assert status == 503 and body["error"]["code"] == "dependency_unavailable"
        assert w.runs() == 0  # Then the failed attempt took no quota slot
        status, again = w.search(key="k-1")
        # and the retry did the search (it is not a replay of nothing), charged once, in the one slot
        assert status == 200 and again["hits"] and "replayed" not in again
        assert w.runs() == 1
        assert w.search(key="k-1")[1] == {**again, "replayed": True}
    finally:
        w.stores.close()


# -- chat -------------------------------------------------------------------------------------------
def test_a_replayed_json_chat_returns_the_recorded_final_without_a_model_call(world: World) -> None:
    first = world.chat("c-1", stream=False).json()
    assert first["exitReason"] == "answered" and "replayed" not in first
    calls, searched = len(world.model.seen), world.embedder.queries

    again = world.chat("c-1", stream=False)

    assert again.status_code == 200
    body = again.json()
    assert body["replayed"] is True and body["runId"] == "c-1"
    assert (body["answer"], body["usage"], body["exitReason"]) == (
        first["answer"],
        first["usage"],
        first["exitReason"],
    )
    assert len(world.model.seen) == calls and world.embedder.queries == searched
    assert world.runs() == 1


def test_a_replayed_stream_is_one_final_event_flagged_replayed(world: World) -> None:
    first = sse_events(world.chat("c-1", stream=True).text)
    calls = len(world.model.seen)

    # When it is replayed, streamed or as JSON (``stream`` is not part of the request's identity)
    replay = sse_events(world.chat("c-1", stream=True).text)
    as_json = world.chat("c-1", stream=False).json()

    assert replay == [{**first[-1], "replayed": True}]
    assert as_json["replayed"] is True and as_json["answer"] == first[-1]["answer"]
    assert len(world.model.seen) == calls and world.runs() == 1


def test_another_chat_under_a_used_key_is_422(world: World) -> None:
    world.chat("c-1", stream=False)
    calls = len(world.model.seen)
    resp = world.chat("c-1", stream=True, question="How much fuel?")
    assert resp.status_code == 422 and resp.json()["error"]["code"] == "idempotency_key_reused"
    assert len(world.model.seen) == calls and world.runs() == 1


def test_a_chat_while_its_key_is_running_is_409(world: World) -> None:
    world.c.ledger.reserve("acme", "c-1", None, "")
    resp = world.chat("c-1", stream=True)
    assert resp.status_code == 409 and resp.json()["error"]["code"] == "run_in_progress"
    assert world.model.seen == [] and world.runs() == 0


@pytest.mark.parametrize("stream", [False, True])
def test_a_chat_key_over_255_characters_is_400_before_any_work(world: World, stream: bool) -> None:
    resp = world.chat("k" * 2100, stream=stream)
    assert resp.status_code == 400 and resp.json()["error"]["code"] == "invalid_request"
    assert world.model.seen == [] and world.embedder.queries == 0 and world.runs() == 0
