"""The chat agents end to end: ``deep_search``, ``chain_of_rag`` and the routers, through the real
model adapters against the scripted servers (the OpenAI adapter on the OpenAI-compatible replay, the
Bedrock adapter on the local Converse server, one script for both), the real retrieval path and ledger, on
the SQLite store and the OpenSearch node alike; and each agent offline (no model endpoint)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.agents.events import ChatResponse, RunEvent
from ragline.config import Settings
from ragline.domain.api import ChatRequest
from ragline.domain.billing import current_period
from ragline.domain.models import TenantScope
from ragline.ports import VectorStoreProvider
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.model_endpoints import ChatEndpoint
from tests.support.openai_replay import error, text, tool_call
from tests.support.tool_results import tool_results

pytestmark = pytest.mark.integration

DOCS = {
    "docs": {
        "warranty.txt": "The frame warranty lasts ten years from the date of purchase.",
        "returns.txt": "Bicycles can be returned within thirty days for a full refund.",
        "tyres.txt": "Road tyres run between five and seven bar of pressure.",
    },
    "hr": {"holidays.txt": "Staff holidays: twenty five days of paid leave each year."},
}
QUESTION = "How long is the frame warranty, and can I return a bike?"
ACME = Principal(tenant_id="acme", scopes=frozenset({"chat"}))
ANSWER = (
    'The frame warranty lasts ten years <citation ids="warranty.txt#0"/>. Bikes can be returned within'
    ' thirty days <citation ids="returns.txt#0"/>.'
)


def build(home: Path, stores: VectorStoreProvider, settings: dict[str, Any]) -> Container:
    c = Container(
        Settings(home=home, **settings), stores=stores, embedder=BowEmbedder(), tokenizer=BowEmbedder()
    )
    c.tenancy.create_tenant("acme")
    for ns, files in DOCS.items():
        c.registry.create_namespace(new_namespace("acme", ns, default=ns == "docs"))
        for name, body in files.items():
            c.ingest.ingest(TenantScope(tenant_id="acme", namespace_id=ns), filename=name, data=body.encode())
    return c


@pytest.fixture
def world(
    both_stores: tuple[str, VectorStoreProvider], chat_endpoint: ChatEndpoint, tmp_path: Path
) -> Iterator[Container]:
    # no reranker: the LLM listwise one would take scripted turns (rerank has its own tests)
    yield build(tmp_path / "home", both_stores[1], {"reranker": "none", **chat_endpoint.values()})


@pytest.fixture
def offline(tmp_path: Path) -> Iterator[Container]:
    from ragline.adapters.embedded.store import SqliteVectorStoreProvider

    stores = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=BowEmbedder().dimension)
    yield build(tmp_path / "home", stores, {})
    stores.close()


def ask(c: Container, **body: Any) -> tuple[list[RunEvent], ChatResponse]:
    request = ChatRequest.model_validate({"messages": [{"role": "user", "content": QUESTION}], **body})
    events = list(c.chat.answer_chat(ACME, request))
    return events, ChatResponse.collect(events)


def kinds(events: list[RunEvent]) -> list[str]:
    """Event types, consecutive text events folded into one."""
    out: list[str] = []
    for e in events:
        if not (e.type == "text" and out and out[-1] == "text"):
            out.append(e.type)
    return out


def charged(c: Container) -> int:
    return c.ledger.period_runs("acme", current_period())


def js(**body: Any) -> Any:
    return text(json.dumps(body), usage=(100, 10))


def tool_message(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The passages the answer step showed the model."""
    tool = [m for m in request["messages"] if m["role"] == "tool"]
    assert len(tool) == 1
    return list(tool_results(tool[0]["content"]))


# -- deep_search --------------------------------------------------------------------------------------
def test_deep_search_decomposes_searches_filters_reflects_and_answers_with_citations(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script(
        [
            js(subQueries=["frame warranty length", "returning a bike"]),
            js(relevant=["warranty.txt#0", "returns.txt#0", "invented#9"]),
            js(gapQueries=["frame warranty length"]),  # nothing new: the search stops
            text(ANSWER, usage=(400, 30)),
        ]
    )
    events, body = ask(world, agent="deep_search", namespaces=["docs"])

    assert kinds(events) == ["tool_start", "tool_start", "tool_end", "tool_end", "text", "sources", "final"]
    assert [e.label for e in body.steps if e.type == "tool_start"] == [
        "frame warranty length",
        "returning a bike",
    ]
    assert body.exit_reason == "answered" and body.error is None and body.warnings == []
    assert [s.id for s in body.sources] == ["warranty.txt#0", "returns.txt#0"]
    assert body.answer == ANSWER  # both citations verified and kept
    requests = chat_endpoint.chat_requests
    assert len(requests) == 4 and all(not r.get("tools") for r in requests)
    shown = tool_message(requests[-1])
    assert {p["id"] for p in shown} == {"warranty.txt#0", "returns.txt#0"}  # the filter dropped the tyres
    assert "Evidence rules" in requests[-1]["messages"][0]["content"]
    assert body.usage.llm_input_tokens == 700 and body.usage.llm_output_tokens == 60
    assert body.usage.retrievals == 2
    assert charged(world) == 1


def test_deep_search_runs_gap_queries_in_a_second_round(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script(
        [
            js(subQueries=["frame warranty length"]),
            js(relevant=["warranty.txt#0", "returns.txt#0"]),
            js(gapQueries=["returning a bike for a refund"]),
            # round 2 finds only passages round 1 already judged: no second relevance call
            js(gapQueries=["Frame warranty length!", "how old is the shop"]),
            text(ANSWER),  # round 3 is the last: no reflection after it
        ]
    )
    _, body = ask(world, agent="deep_search", namespaces=["docs"])
    labels = [e.label for e in body.steps if e.type == "tool_start"]
    # the repeated query (normalised) is not searched again
    assert labels == ["frame warranty length", "returning a bike for a refund", "how old is the shop"]
    assert body.exit_reason == "answered" and len(body.sources) == 2
    assert len(chat_endpoint.chat_requests) == 5
    reflect = json.dumps(chat_endpoint.chat_requests[2]["messages"])
    assert "frame warranty length" in reflect and "warranty lasts ten years" in reflect
    second_reflect = json.dumps(chat_endpoint.chat_requests[3]["messages"])
    assert "returning a bike for a refund" in second_reflect  # the searches as run, not normalised


def test_deep_search_tolerates_prose_and_think_around_the_json(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script(
        [
            text('<think>two parts</think>Here: {"subQueries": ["frame warranty", "bike returns"]} done'),
            text("no json at all"),  # relevance unreadable: every passage is kept, with a warning
            js(gapQueries=[]),
            text(ANSWER),
        ]
    )
    _, body = ask(world, agent="deep_search", namespaces=["docs"])
    assert body.exit_reason == "answered"
    assert [w.code for w in body.warnings] == ["planner_reply_invalid"]
    assert len(tool_message(chat_endpoint.chat_requests[-1])) >= 2


def test_deep_search_upstream_error_ends_in_an_error_event_and_one_charge(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script([js(subQueries=["frame warranty"]), error(500, times=None)])
    events, body = ask(world, agent="deep_search", namespaces=["docs"])
    assert kinds(events)[-3:] == ["error", "sources", "final"]
    assert body.exit_reason == "error" and body.error is not None and body.error.code.startswith("dependency")
    assert body.usage.retrievals == 1 and charged(world) == 1


# -- chain_of_rag ---------------------------------------------------------------------------------------
def test_chain_of_rag_hops_until_the_question_is_answered(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script(
        [
            js(query="how long is the frame warranty"),
            js(answer="Ten years.", supportingIds=["warranty.txt#0"], questionAnswered=False),
            js(query="can a bike be returned"),
            js(answer="Within thirty days.", supportingIds=["returns.txt#0"], questionAnswered=True),
            text(ANSWER, usage=(400, 30)),
        ]
    )
    events, body = ask(world, agent="chain_of_rag", namespaces=["docs"])

    assert kinds(events) == ["tool_start", "tool_end", "tool_start", "tool_end", "text", "sources", "final"]
    assert body.exit_reason == "answered" and body.warnings == []
    assert [s.id for s in body.sources] == ["warranty.txt#0", "returns.txt#0"]
    requests = chat_endpoint.chat_requests
    assert len(requests) == 5
    second_follow_up = json.dumps(requests[2]["messages"])
    assert "how long is the frame warranty" in second_follow_up and "Ten years." in second_follow_up
    system = requests[-1]["messages"][0]["content"]
    assert "Intermediate findings" in system and "Within thirty days." in system
    assert {p["id"] for p in tool_message(requests[-1])} == {"warranty.txt#0", "returns.txt#0"}
    assert body.usage.llm_output_tokens == 70 and body.usage.retrievals == 2
    assert charged(world) == 1


def test_chain_of_rag_stops_at_four_hops(world: Container, chat_endpoint: ChatEndpoint) -> None:
    turns = []
    for q in ("warranty", "refund", "tyres", "holidays"):
        turns += [js(query=f"about {q}"), js(answer="partly", supportingIds=[], questionAnswered=False)]
    chat_endpoint.script([*turns, text("Not fully answered.")])
    _, body = ask(world, agent="chain_of_rag", namespaces=["docs"])
    assert len([e for e in body.steps if e.type == "tool_start"]) == 4
    assert body.exit_reason == "answered" and len(chat_endpoint.chat_requests) == 9
    # no hop named supporting passages: the answer step sees what was retrieved
    assert tool_message(chat_endpoint.chat_requests[-1])
    assert [w.code for w in body.warnings] == ["ungrounded_answer"]


def test_chain_of_rag_upstream_error(world: Container, chat_endpoint: ChatEndpoint) -> None:
    chat_endpoint.script([error(503, times=None)])
    events, body = ask(world, agent="chain_of_rag", namespaces=["docs"])
    assert kinds(events) == ["error", "sources", "final"]
    # the model failed before its first reply and nothing was retrieved: no work, no charge (issue 24 #8)
    assert body.exit_reason == "error" and body.usage.retrievals == 0 and charged(world) == 0


# -- routing ----------------------------------------------------------------------------------------------
def test_auto_routes_collections_then_agent_and_streams_both_choices(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script(
        [
            text("<think>several parts</think>2"),
            js(subQueries=["frame warranty"]),
            js(relevant=["warranty.txt#0"]),
            js(gapQueries=[]),
            text('Ten years <citation ids="warranty.txt#0"/>.'),
        ]
    )
    events, body = ask(world, agent="auto")
    assert kinds(events)[:2] == ["collections", "route"]
    # neither namespace has a description: both are searched, the default first, with no model call
    assert body.collections is not None and body.collections.namespaces == ["docs", "hr"]
    assert body.route is not None and (body.route.agent, body.route.fallback) == ("deep_search", False)
    assert body.exit_reason == "answered" and [s.id for s in body.sources] == ["warranty.txt#0"]
    assert len(chat_endpoint.chat_requests) == 5 and charged(world) == 1


def test_auto_router_fallback_runs_the_default_agent_with_a_warning(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script(
        [
            text("10"),
            tool_call("search", {"query": "frame warranty"}),
            text('Ten years <citation ids="warranty.txt#0"/>.'),
        ]
    )
    events, body = ask(world, agent="auto", namespaces=["docs"])
    assert kinds(events)[:2] == ["route", "warning"]
    assert body.route is not None and (body.route.agent, body.route.fallback) == ("agentic", True)
    assert [w.code for w in body.warnings] == ["router_fallback"]
    assert body.exit_reason == "answered" and charged(world) == 1


def test_collections_picked_by_the_model_over_descriptions(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    for ns, description in (
        ("docs", "Bicycle manuals and shop policies"),
        ("hr", "Staff handbook: leave, pay"),
    ):
        space = world.registry.get_namespace("acme", ns)
        world.registry.update_namespace(space.model_copy(update={"description": description}))
    world.registry.create_namespace(new_namespace("acme", "legal"))  # no description: always searched
    chat_endpoint.script(
        [
            js(namespaces=["hr", "ghost", "hr"]),
            tool_call("search", {"query": "paid leave days"}),
            text('Twenty five days <citation ids="holidays.txt#0"/>.'),
        ]
    )
    events, body = ask(world, agent="agentic")
    assert kinds(events)[:2] == ["collections", "warning"]
    # the default first, then the model's valid pick, then the undescribed namespace
    assert body.collections is not None and body.collections.namespaces == ["docs", "hr", "legal"]
    assert [w.code for w in body.warnings] == ["collection_router_unknown"]
    offered = chat_endpoint.chat_requests[0]["messages"][0]["content"]
    assert "- hr: Staff handbook" in offered and "legal" not in offered and "- docs" not in offered
    assert [s.id for s in body.sources] == ["holidays.txt#0"] and charged(world) == 1


# -- offline ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("agent", ["auto", "agentic", "deep_search", "chain_of_rag"])
def test_every_agent_runs_offline_and_cites(offline: Container, agent: str) -> None:
    _, body = ask(offline, agent=agent, namespaces=["docs"])
    assert body.exit_reason == "answered" and body.error is None
    assert "warranty.txt#0" in [s.id for s in body.sources]
    if agent == "auto":
        assert body.route is not None and body.route.agent == "agentic" and "offline" in body.route.reason
    searches = [e.label for e in body.steps if e.type == "tool_start"]
    if agent == "deep_search":  # split at the clause: two sub-queries searched at once
        assert searches == ["How long is the frame warranty", "can I return a bike"]
    if agent == "chain_of_rag":  # one hop: the question itself
        assert searches == [QUESTION]
    assert charged(offline) == 1


def test_offline_collection_router_searches_every_readable_namespace(offline: Container) -> None:
    _, body = ask(offline, agent="deep_search")
    assert body.collections is not None and body.collections.namespaces == ["docs", "hr"]
    limited = Principal(tenant_id="acme", scopes=frozenset({"chat"}), namespaces=frozenset({"hr"}))
    request = ChatRequest.model_validate(
        {"messages": [{"role": "user", "content": "holidays"}], "namespaces": "auto"}
    )
    body = ChatResponse.collect(offline.chat.answer_chat(limited, request))
    assert body.collections is not None and body.collections.namespaces == ["hr"]
    assert {s.namespace for s in body.sources} <= {"hr"}
