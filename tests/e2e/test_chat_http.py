"""The chat ASGI app over real HTTP (uvicorn on 127.0.0.1): SSE order, citations, JSON mode, disconnect."""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import uvicorn

from ragline.adapters.embedded.documents import SqliteDocumentRegistry
from ragline.adapters.embedded.ledger import SqliteUsageLedger, current_period
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.adapters.local_models.extractive_chat import ExtractiveChatModel
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.config import Settings
from ragline.documents.chunker import WordCachedCounter
from ragline.domain.chat import TextDelta, TokenUsage, TurnEnd
from ragline.domain.models import TenantScope
from ragline.ports import ChatModel, VectorStoreProvider
from ragline.services.chat import ChatService
from ragline.services.ingest import IngestService, IngestSettings
from ragline.services.namespaces import new_namespace
from ragline.services.search import SearchService

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).parents[2]
APP = ROOT / "functions" / "chat" / "app.py"
EMBEDDER = LocalOnnxEmbedder()
CONTEXT = json.dumps({"requestId": "gw-req-1", "authorizer": {"tenantId": "acme", "scopes": "chat"}})


def load_app() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chat_app", APP)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class Served:
    def __init__(self, stores: VectorStoreProvider, tmp: Path, model: ChatModel) -> None:
        self.registry = SqliteTenantRegistry(tmp / "tenants.sqlite")
        self.registry.create_namespace(new_namespace("acme", "northwind", default=True))
        self.ledger = SqliteUsageLedger(tmp / "usage.sqlite")
        ingest = IngestService(
            registry=self.registry,
            documents=SqliteDocumentRegistry(tmp / "documents.sqlite"),
            stores=stores,
            embedder=EMBEDDER,
            tokenizer=WordCachedCounter(EMBEDDER),
            settings=IngestSettings(),
        )
        scope = TenantScope(tenant_id="acme", namespace_id="northwind")
        for path in sorted((ROOT / "samples" / "northwind").iterdir()):
            ingest.ingest(scope, filename=path.name, data=path.read_bytes())
        search = SearchService(registry=self.registry, stores=stores, embedder=EMBEDDER)
        self.service = ChatService(
            registry=self.registry, stores=stores, search=search, model=model, ledger=self.ledger
        )
        self.module = load_app()
        self.module.chat_service = lambda: self.service
        config = uvicorn.Config(
            self.module.app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1/chat"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def serve(stores: VectorStoreProvider, tmp: Path, model: ChatModel | None = None) -> Iterator[Served]:
    served = Served(stores, tmp, model or ExtractiveChatModel())
    try:
        yield served
    finally:
        served.stop()


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


@pytest.fixture
def on_opensearch(opensearch_url: str, tmp_path: Path) -> Iterator[Served]:
    stores = OpenSearchVectorStoreProvider(
        build_client(Settings(opensearch_url=opensearch_url)),
        index=f"test-{uuid.uuid4().hex[:10]}",
        dimension=384,
    )
    try:
        yield from serve(stores, tmp_path)
    finally:
        stores.client.indices.delete(index=stores.index, ignore_unavailable=True)
        stores.close()


@pytest.fixture
def on_sqlite(tmp_path: Path) -> Iterator[Served]:
    yield from serve(SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=384), tmp_path)


@pytest.mark.opensearch
def test_streamed_chat_over_http_on_opensearch_cites_retrieved_chunks(on_opensearch: Served) -> None:
    body = {"messages": [{"role": "user", "content": "How often should I lubricate the chain?"}]}
    with httpx.Client(timeout=60) as client:
        resp = client.post(on_opensearch.url, json=body, headers={"x-amzn-request-context": CONTEXT})
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(resp.text)
    kinds = [k for k, _ in events]
    assert kinds[0] == "tool_start" and kinds[1] == "tool_end"
    assert kinds[-2:] == ["sources", "final"]
    first_text = kinds.index("text")
    assert all(k in ("tool_start", "tool_end") for k in kinds[:first_text])
    answer = "".join(d["text"] for k, d in events if k == "text")
    assert "200 kilometres" in answer or "200 km" in answer
    sources = {c["id"] for c in events[-2][1]["chunks"]}
    cited = {i for ids in __import__("re").findall(r'ids="([^"]+)"', answer) for i in ids.split(",")}
    assert cited and cited <= sources
    final = events[-1][1]
    assert final["run_id"] == "gw-req-1" and final["exit_reason"] == "answered"
    assert on_opensearch.ledger.period_runs("acme", current_period()) == 1


def test_json_mode_and_idempotency_key(on_sqlite: Served) -> None:
    body = {
        "messages": [{"role": "user", "content": "Can I return a used bike?"}],
        "stream": False,
        "mode": "fast",
    }
    headers = {"x-amzn-request-context": CONTEXT, "idempotency-key": "client-key-1"}
    with httpx.Client(timeout=60) as client:
        first = client.post(on_sqlite.url, json=body, headers=headers).json()
        second = client.post(on_sqlite.url, json=body, headers=headers).json()
    assert first["runId"] == second["runId"] == "client-key-1"
    assert "final sale" in first["answer"] and first["sources"]
    assert on_sqlite.ledger.period_runs("acme", current_period()) == 1


@pytest.mark.parametrize(
    ("body", "headers", "status", "code"),
    [
        ({"messages": [{"role": "user", "content": "hi"}]}, {}, 401, "unauthorized"),
        ({"messages": []}, {"x-amzn-request-context": CONTEXT}, 400, "invalid_request"),
        (
            {"messages": [{"role": "user", "content": "hi"}], "tenant_id": "globex"},
            {"x-amzn-request-context": CONTEXT},
            400,
            "invalid_request",
        ),
        (
            {"messages": [{"role": "user", "content": "hi"}], "namespaces": ["nope"]},
            {"x-amzn-request-context": CONTEXT},
            404,
            "namespace_not_found",
        ),
    ],
)
def test_bad_requests_get_one_error_shape(
    on_sqlite: Served, body: Any, headers: dict[str, str], status: int, code: str
) -> None:
    resp = httpx.post(on_sqlite.url, json=body, headers=headers, timeout=30)
    assert resp.status_code == status and resp.json()["error"]["code"] == code


class SlowModel:
    """Streams a long answer slowly, counting how far it got."""

    name = "slow"

    def __init__(self) -> None:
        self.produced = 0

    def stream(self, messages: Any, tools: Any, options: Any) -> Iterator[Any]:
        for i in range(200):
            time.sleep(0.02)
            self.produced += 1
            yield TextDelta(text=f"word{i} ")
        yield TokenUsage(input_tokens=10, output_tokens=200)
        yield TurnEnd()


def test_client_disconnect_aborts_the_run_and_charges_it_once(tmp_path: Path) -> None:
    model = SlowModel()
    for served in serve(SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=384), tmp_path, model):
        body = {"messages": [{"role": "user", "content": "Tell me everything."}]}
        with (
            httpx.Client(timeout=30) as client,
            client.stream("POST", served.url, json=body, headers={"x-amzn-request-context": CONTEXT}) as resp,
        ):
            for _ in resp.iter_bytes():
                break  # read the first event, then hang up
        deadline = time.time() + 10
        while served.ledger.period_runs("acme", current_period()) == 0 and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        assert served.ledger.period_runs("acme", current_period()) == 1
        assert model.produced < 200, "the run kept generating after the client left"
