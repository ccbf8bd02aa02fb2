"""A chat run over two namespaces that both hold ``guide.md``: citations and ``expand`` resolve to the
namespace the chunk really came from — on the SQLite store and on the OpenSearch node alike."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.agents.events import RunEvent, RunFinished, Sources, ToolFinished
from ragline.config import Settings
from ragline.domain.api import ChatRequest
from ragline.domain.chat import (
    ChatMessage,
    ChatOptions,
    ModelEvent,
    TextDelta,
    TokenUsage,
    ToolCall,
    ToolCallsReady,
    ToolSpec,
    TurnEnd,
)
from ragline.domain.models import TenantScope
from ragline.ports import VectorStoreProvider
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.contract.vector_store_contract import make_chunks
from tests.support.fakes import BowEmbedder
from tests.support.tool_results import tool_results
from tests.support.vectors import DIM

pytestmark = pytest.mark.integration

DOCS = ["The blue pump must be primed before use.", "Prime it with two litres of water."]
SUPPORT = ["The red valve must be closed before use.", "Close it by turning it clockwise."]


class ReadingModel:
    """A model that reads its tool results: search, expand the valve document, cite pump and valve."""

    name = "reading"

    def __init__(self) -> None:
        self.tool_results: list[list[dict[str, object]]] = []

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]:
        self.tool_results = [tool_results(m.content) for m in messages if m.role == "tool"]
        if not self.tool_results:
            yield from self._call("search", {"query": "pump valve before use", "mode": "semantic"})
            return
        found = self.tool_results[0]
        valve = next(c for c in found if "valve" in str(c["text"]))
        if len(self.tool_results) == 1:
            yield from self._call("expand", {"documentId": valve["documentId"], "sequenceNumber": 0})
            return
        pump = next(c for c in found if "pump" in str(c["text"]))
        clockwise = next(c for c in self.tool_results[1] if "clockwise" in str(c["text"]))
        yield TextDelta(text=f'Prime the pump <citation ids="{pump["id"]}"/> ')
        yield TextDelta(text=f'and close the valve <citation ids="{valve["id"]},{clockwise["id"]}"/>.')
        yield TokenUsage(input_tokens=10, output_tokens=10)
        yield TurnEnd()

    def _call(self, name: str, args: dict[str, object]) -> Iterator[ModelEvent]:
        yield ToolCallsReady(calls=(ToolCall(id=f"call-{name}", name=name, arguments=json.dumps(args)),))
        yield TokenUsage(input_tokens=10, output_tokens=5)
        yield TurnEnd(finish_reason="tool_calls")


@pytest.fixture(params=["sqlite", pytest.param("opensearch", marks=pytest.mark.opensearch)])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStoreProvider]:
    if request.param == "sqlite":
        sqlite = SqliteVectorStoreProvider(tmp_path / "store.sqlite", dimension=DIM)
        yield sqlite
        sqlite.close()
        return
    url = request.getfixturevalue("opensearch_url")
    client = build_client(Settings(opensearch_url=url))
    provider = OpenSearchVectorStoreProvider(client, index=f"test-{uuid.uuid4().hex[:12]}", dimension=DIM)
    yield provider
    provider.drop()
    provider.close()


def test_two_namespaces_holding_guide_md_resolve_citations_and_expand_to_their_own(
    stores: VectorStoreProvider, tmp_path: Path
) -> None:
    # Given two namespaces of one tenant, each with its own guide.md
    model = ReadingModel()
    c = Container(Settings(home=tmp_path), stores=stores, embedder=BowEmbedder(), chat_model=model)
    for ns, texts in (("docs", DOCS), ("support", SUPPORT)):
        c.registry.create_namespace(new_namespace("acme", ns))
        stores.scoped(TenantScope(tenant_id="acme", namespace_id=ns)).upsert(make_chunks("guide.md", texts))
    request = ChatRequest.model_validate(
        {"messages": [{"role": "user", "content": "How do I prepare?"}], "namespaces": ["docs", "support"]}
    )

    # When the model searches both, expands the valve guide and cites what it read
    events: list[RunEvent] = list(c.chat.answer_chat(Principal.operator("acme"), request, run_id="two-ns"))

    # Then the model saw two different ids for the two guide.md documents
    ids = [str(chunk["id"]) for chunk in model.tool_results[0]]
    assert len(ids) == len(set(ids)) and all(i.rsplit("#", 1)[0].endswith("guide.md") for i in ids)
    # and expand read the support namespace's guide.md (the chunk after the valve), not the docs one
    expand = [e for e in events if isinstance(e, ToolFinished)][1]
    assert expand.error is None and expand.hits == len(SUPPORT) - 1
    assert [str(chunk["text"]) for chunk in model.tool_results[1]] == SUPPORT[1:]
    # and every cited source names the namespace its text came from
    sources = next(e for e in events if isinstance(e, Sources)).chunks
    assert {(s.namespace, s.text) for s in sources} == {
        ("docs", DOCS[0]),
        ("support", SUPPORT[0]),
        ("support", SUPPORT[1]),
    }
    assert all(s.document_id == "guide.md" for s in sources)
    final = events[-1]
    assert isinstance(final, RunFinished) and final.exit_reason == "answered"
    assert all(s.id in final.answer for s in sources)  # every citation survived verification
