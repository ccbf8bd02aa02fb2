"""Issue 42 #3: every agent's result carries one typed query plan — each retrieval with what it asked for
(query, mode, namespaces, filter, k) and got (hits, rerank, time, error) and the step that issued it;
the routers' choices; ``deep_search``'s sub-questions and rounds; ``chain_of_rag``'s hops; hosting
search's rounds — through the real handlers (chat streamed and ``stream: false``, hosting search), a
scripted model and the real retrieval path on SQLite."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.agents.catalog import AGENTS
from ragline.agents.events import RunFinished
from ragline.agents.plan_recorder import PlanRecorder
from ragline.agents.prompts import (
    AGENT_ROUTER_PROMPT,
    DECOMPOSE_PROMPT,
    EVALUATE_QUERIES_PROMPT,
    FOLLOW_UP_PROMPT,
    GENERATE_QUERIES_PROMPT,
    INTERMEDIATE_PROMPT,
    REFLECT_PROMPT,
    RELEVANCE_PROMPT,
)
from ragline.agents.tools import ToolContext
from ragline.config import Settings
from ragline.domain.api import Usage
from ragline.domain.models import TenantScope
from ragline.domain.plans import PlannedRetrieval, QueryPlan
from ragline.domain.retrieval import EvidenceTable
from ragline.services.authentication import Principal
from ragline.services.chat_replays import recorded
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder, ScriptedChatModel, Turn
from tests.support.lambda_harness import (
    authorizer_context,
    call_rest,
    chat_client,
    chat_headers,
    load_handler,
)
from tests.unit.services.test_chat_service import RecordingReranker

pytestmark = pytest.mark.unit
CHAT = load_handler("chat")
HOSTING = load_handler("hosting_search")
QUESTION = "Which insects pollinate plants, and who leads a colony?"
DOCS = {
    "bees.txt": "Honey bees pollinate flowering plants.",
    "queen.txt": "A colony has one queen.",
    "honey.txt": "Bees make honey from nectar.",
}
STEP_PROMPTS = {
    "route": AGENT_ROUTER_PROMPT,
    "decompose": DECOMPOSE_PROMPT,
    "relevance": RELEVANCE_PROMPT,
    "reflect": REFLECT_PROMPT,
    "follow_up": FOLLOW_UP_PROMPT,
    "intermediate": INTERMEDIATE_PROMPT,
    "generate": GENERATE_QUERIES_PROMPT,
    "evaluate": EVALUATE_QUERIES_PROMPT,
}


def js(**body: object) -> Turn:
    return [json.dumps(body)]


class StepModel(ScriptedChatModel):
    """One model for every call of a run: each planning step (told apart by its system prompt) answers
    from that step's own script, the tool loop and the answer from ``turns``."""

    def __init__(self, steps: dict[str, list[Turn]], turns: list[Turn]) -> None:
        super().__init__(turns)
        self.steps = {name: list(replies) for name, replies in steps.items()}

    def stream(self, messages: Any, tools: Any, options: Any) -> Any:
        system = messages[0].content if messages[0].role == "system" else ""
        step = next((n for n, prompt in STEP_PROMPTS.items() if system.startswith(prompt[:40])), None)
        if step is not None:
            self.turns.insert(0, self.steps[step].pop(0))
        return super().stream(messages, tools, options)


@dataclass
class Case:
    """A run's script and the plan it must produce: ``retrievals`` as (step, issuedBy, query, mode,
    error), ``rounds`` as (round, queries, kept), ``hops`` as (hop, question, answer, supportingIds)."""

    body: dict[str, Any]
    steps: dict[str, list[Turn]] = field(default_factory=dict)
    turns: list[Turn] = field(default_factory=list)
    agent: str = ""
    retrievals: list[tuple[int, str, str, str, str | None]] = field(default_factory=list)
    sub_questions: list[str] = field(default_factory=list)
    rounds: list[tuple[int, list[str], int | None]] = field(default_factory=list)
    hops: list[tuple[int, str, str, list[str]]] = field(default_factory=list)
    route: dict[str, Any] | None = None
    collections: list[str] | None = None


ANSWER: Turn = [
    'Bees pollinate <citation ids="bees.txt#0"/>; a colony has one queen <citation ids="queen.txt#0"/>.'
]
DEEP_STEPS: dict[str, list[Turn]] = {
    "decompose": [js(subQueries=["bees pollinate", "colony queen"])],
    "relevance": [js(relevant=["bees.txt#0", "queen.txt#0"])] * 2,
    "reflect": [js(gapQueries=["honey nectar"]), js(gapQueries=[])],
}
DEEP_RETRIEVALS = [
    (1, "deep_search", "bees pollinate", "hybrid", None),
    (1, "deep_search", "colony queen", "hybrid", None),
    (2, "deep_search", "honey nectar", "hybrid", None),
]
# Round 2 finds only chunks round 1 judged already: nothing new to judge, none kept.
DEEP_ROUNDS = [(1, ["bees pollinate", "colony queen"], 2), (2, ["honey nectar"], 0)]
CASES = {
    "agentic": Case(
        body={"agent": "agentic", "namespaces": ["docs"]},
        turns=[
            [("search", {"query": "pollinate", "mode": "semantic"})],
            [
                ("search", {"query": "queen", "mode": "keyword"}),
                ("search", {"query": "nectar", "filter": {"x": 1}}),
            ],
            ANSWER,
        ],
        agent="agentic",
        retrievals=[
            (1, "tool_loop", "pollinate", "hybrid", None),
            (2, "tool_loop", "queen", "keyword", None),
            (2, "tool_loop", "nectar", "hybrid", "invalid_request"),  # its filter refused: a tool error
        ],
    ),
    "deep_search": Case(
        body={"agent": "deep_search", "namespaces": ["docs"]},
        steps=DEEP_STEPS,
        turns=[ANSWER],
        agent="deep_search",
        retrievals=DEEP_RETRIEVALS,
        sub_questions=["bees pollinate", "colony queen"],
        rounds=DEEP_ROUNDS,
    ),
    "chain_of_rag": Case(
        body={"agent": "chain_of_rag", "namespaces": ["docs"]},
        steps={
            "follow_up": [js(query="bees pollinate"), js(query="colony queen")],
            "intermediate": [
                js(answer="Bees pollinate plants.", supportingIds=["bees.txt#0"], questionAnswered=False),
                js(answer="One queen.", supportingIds=["queen.txt#0"], questionAnswered=True),
            ],
        },
        turns=[ANSWER],
        agent="chain_of_rag",
        retrievals=[
            (1, "chain_of_rag", "bees pollinate", "hybrid", None),
            (2, "chain_of_rag", "colony queen", "hybrid", None),
        ],
        hops=[
            (1, "bees pollinate", "Bees pollinate plants.", ["bees.txt#0"]),
            (2, "colony queen", "One queen.", ["queen.txt#0"]),
        ],
    ),
    "auto": Case(  # both routers: the namespaces (one readable: no model call), then the agent
        body={"agent": "auto", "namespaces": "auto"},
        steps={"route": [["2"]], **DEEP_STEPS},
        turns=[ANSWER],
        agent="deep_search",
        retrievals=DEEP_RETRIEVALS,
        sub_questions=["bees pollinate", "colony queen"],
        rounds=DEEP_ROUNDS,
        route={"agent": "deep_search", "reason": "the model chose agent 2 of 3", "fallback": False},
        collections=["docs"],
    ),
}


class World:
    def __init__(self, root: Path, case: Case) -> None:
        self.stores = SqliteVectorStoreProvider(root / "s.sqlite", dimension=BowEmbedder().dimension)
        self.model = StepModel(case.steps, case.turns)
        self.c = Container(
            Settings(home=root, openai_base_url="http://127.0.0.1:9/unused"),  # a model: the planners use it
            stores=self.stores,
            embedder=BowEmbedder(),
            chat_model=self.model,
            reranker=RecordingReranker(),
        )
        self.c.registry.create_namespace(new_namespace("acme", "docs", default=True))
        for name, text in DOCS.items():
            scope = TenantScope(tenant_id="acme", namespace_id="docs")
            self.c.ingest.ingest(scope, filename=name, data=text.encode(), document_id=name)

    def chat(self, body: dict[str, Any], *, stream: bool, key: str | None = None) -> dict[str, Any]:
        """The run's final event (streamed) or body (``stream: false``), with its tool steps."""
        request = {"messages": [{"role": "user", "content": QUESTION}], **body, "stream": stream}
        headers = chat_headers(authorizer_context("acme"), **({"idempotency-key": key} if key else {}))
        with chat_client(CHAT, self.c) as client:
            response = client.post("/v1/chat", json=request, headers=headers)
        assert response.status_code == 200, response.text
        if not stream:
            return dict(response.json())
        events = [json.loads(b.split("data: ", 1)[1]) for b in response.text.strip().split("\n\n")]
        final = events[-1]
        assert final["type"] == "final"
        steps = [e for e in events if e["type"] in ("tool_start", "tool_end")]
        warnings = [e for e in events if e["type"] == "warning"]
        return {**final, "steps": steps, "warnings": warnings}

    def hosting(self, body: dict[str, Any], key: str | None = None) -> dict[str, Any]:
        status, response = call_rest(
            HOSTING,
            self.c,
            "POST",
            "/v1/hosting-search",
            resource="/v1/hosting-search",
            authorizer=authorizer_context("acme", scopes="search"),
            body={"query": QUESTION, **body},
            headers={"Idempotency-Key": key} if key else None,
        )
        assert status == 200, response
        return dict(response)


@pytest.fixture
def make_world(tmp_path: Path) -> Iterator[Any]:
    worlds: list[World] = []

    def make(case: Case) -> World:
        worlds.append(World(tmp_path / str(len(worlds)), case))
        return worlds[-1]

    yield make
    for w in worlds:
        w.stores.close()


def check_chat_plan(case: Case, result: dict[str, Any]) -> None:
    """The run's plan is the one ``case`` expects, and says what the run's tool steps did."""
    plan = QueryPlan.model_validate(result["plan"])  # the typed shape, camelCase on the wire
    assert plan.agent == case.agent
    got = [(r.step, r.issued_by, r.query, r.mode, r.error) for r in plan.retrievals]
    assert got == case.retrievals
    assert [r.hits for r in plan.retrievals] == [
        s["hits"] for s in result["steps"] if s["type"] == "tool_end"
    ]
    assert any(r.hits for r in plan.retrievals)
    for r in plan.retrievals:  # accurate: 10 kept of 30 fetched, reranked unless keyword (or refused)
        assert (r.namespaces, r.k, r.candidates) == (["docs"], 10, 30) and r.ms >= 0
        assert r.rerank == ("recording" if r.mode != "keyword" and r.error is None else None)
    assert [r.filter for r in plan.retrievals if r.filter] == ([{"x": 1}] if case.agent == "agentic" else [])
    assert plan.sub_questions == case.sub_questions
    assert [(r.round, r.queries, r.kept) for r in plan.rounds] == case.rounds
    assert [(h.hop, h.question, h.answer, h.supporting_ids) for h in plan.hops] == case.hops
    assert (plan.route.model_dump() if plan.route else None) == case.route
    assert (plan.collections.namespaces if plan.collections else None) == case.collections


def test_every_agent_of_the_catalog_and_auto_routing_has_a_plan_case() -> None:
    assert {a.name for a in AGENTS} | {"auto"} == set(CASES)


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "json"])
@pytest.mark.parametrize("name", list(CASES))
def test_every_chat_agents_result_carries_its_query_plan(make_world: Any, name: str, stream: bool) -> None:
    # Given a scripted run of the agent
    case = CASES[name]
    world = make_world(case)

    # When it runs, streamed or not
    result = world.chat(case.body, stream=stream)

    # Then its result carries the plan of what it searched, step by step
    assert result["exitReason"] == "answered"
    check_chat_plan(case, result)


def test_hosting_search_carries_its_rounds_and_every_search_in_its_plan(make_world: Any) -> None:
    # Given a planner that proposes one query a round, and can answer after the second
    world = make_world(
        Case(
            body={},
            steps={
                "generate": [
                    js(queries=[{"type": "keyword", "query": "queen"}]),
                    js(queries=[{"type": "semantic", "query": "honey nectar"}]),
                ],
                "evaluate": [js(canAnswer=False), js(canAnswer=True)],
            },
        )
    )

    # When hosting search runs
    out = world.hosting({"mode": "accurate", "maxEvals": 3})

    # Then each (query, namespace) search is in its plan, at its round, with what it found
    plan = QueryPlan.model_validate(out["plan"])
    assert plan.agent == "hosting_search" and out["exitReason"] == "can_answer"
    assert [(r.step, r.issued_by, r.query, r.mode, r.error) for r in plan.retrievals] == [
        (1, "hosting_search", QUESTION, "hybrid", None),
        (1, "hosting_search", "queen", "keyword", None),
        (2, "hosting_search", "honey nectar", "semantic", None),
    ]
    assert [r.hits for r in plan.retrievals] == [q["hits"] for q in out["queries"]]
    assert all(
        (r.namespaces, r.k, r.candidates, r.rerank) == (["docs"], 20, 20, None) for r in plan.retrievals
    )
    # and its rounds, with their queries, the chunks each added and the planner's verdicts
    assert [(r.round, r.queries, r.new_chunks, r.can_answer, r.kept) for r in plan.rounds] == [
        (1, [QUESTION, "queen"], out["rounds"][0]["newChunks"], False, None),
        (2, ["honey nectar"], out["rounds"][1]["newChunks"], True, None),
    ]
    assert out["rounds"][0]["newChunks"] > 0


def test_the_plan_check_fails_when_searches_go_unrecorded(
    make_world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given searches that run without being recorded (the line that records them, flipped)
    monkeypatch.setattr(PlanRecorder, "planned", lambda self, search, **_: search)
    case = CASES["agentic"]
    result = make_world(case).chat(case.body, stream=False)

    # Then the run still answers, and the plan check catches the missing retrievals
    assert result["exitReason"] == "answered" and result["plan"]["retrievals"] == []
    with pytest.raises(AssertionError):
        check_chat_plan(case, result)


def test_the_plan_check_fails_when_steps_are_not_numbered(
    make_world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a plan whose step never moves (as if the agents did not set it)
    monkeypatch.setattr(
        PlanRecorder, "step", property(lambda self: 1, lambda self, value: None), raising=False
    )
    case = CASES["chain_of_rag"]
    result = make_world(case).chat(case.body, stream=False)

    # Then the check catches it: the second hop's search is not at step 2
    with pytest.raises(AssertionError):
        check_chat_plan(case, result)


def test_a_replay_keeps_the_plan_and_a_masked_replay_drops_it(make_world: Any) -> None:
    # Given a chain_of_rag run under an Idempotency-Key (its hops quote the documents)
    case = CASES["chain_of_rag"]
    world = make_world(case)
    first = world.chat(case.body, stream=False, key="plan-1")

    # When it is replayed, it has the run's plan
    again = world.chat(case.body, stream=False, key="plan-1")
    assert again["replayed"] is True and again["plan"] == first["plan"]

    # When a document it read is deleted, a replay leaves the plan out with the answer
    world.c.document_service.delete(Principal.operator("acme"), "docs", "queen.txt")
    masked = world.chat(case.body, stream=True, key="plan-1")
    assert masked["replayed"] is True and masked["plan"] is None and masked["answer"] == ""
    assert "replay_masked" in [w["code"] for w in masked["warnings"]]


def test_a_tool_context_built_without_a_plan_still_records_its_searches() -> None:
    # Given a context with no plan given (the default recorder), and a search that fails
    class Down:
        usage = None

        def search(self, *args: Any, **kwargs: Any) -> Any:
            raise errors.DependencyUnavailable("store down")

    ctx = ToolContext(retriever=Down(), namespaces=["docs"])  # type: ignore[arg-type]

    # When it searches, the error propagates and is recorded with its code
    with pytest.raises(errors.DependencyUnavailable):
        ctx.planned_search("bees", mode="hybrid", issued_by="tool_loop")()
    (entry,) = ctx.plan.build().retrievals
    assert (entry.query, entry.hits, entry.error, entry.namespaces) == (
        "bees",
        0,
        "dependency_unavailable",
        ["docs"],
    )


def test_a_replayed_hosting_search_keeps_its_plan(make_world: Any) -> None:
    world = make_world(Case(body={}, steps={"generate": [js(queries=[])], "evaluate": [js(canAnswer=True)]}))
    first = world.hosting({"mode": "fast"}, key="host-plan")
    again = world.hosting({"mode": "fast"}, key="host-plan")
    assert again["replayed"] is True and again["plan"] == first["plan"] and first["plan"]["retrievals"]


def test_a_recorded_final_too_large_with_its_plan_keeps_the_answer_without_the_plan() -> None:
    # Given a run whose plan alone is over the recorded result's 64 KiB (100 searches of 1,000 characters)
    search = PlannedRetrieval(
        step=1, issued_by="tool_loop", query="q" * 1000, mode="hybrid", namespaces=["docs"], k=10,
        candidates=30, hits=3, ms=1.0,
    )  # fmt: skip
    plan = QueryPlan(agent="agentic", retrievals=[search] * 100)
    final = RunFinished(
        run_id="r", exit_reason="answered", answer="Bees pollinate.", usage=Usage(), plan=plan
    )

    # When it is recorded for replays
    kept = RunFinished.model_validate(
        json.loads(recorded(final, EvidenceTable(), datetime.now(UTC)))["result"]
    )

    # Then the answer is kept and the plan left out
    assert kept.answer == "Bees pollinate." and kept.plan is None
    small = final.model_copy(update={"plan": QueryPlan(agent="agentic", retrievals=[search])})
    again = json.loads(recorded(small, EvidenceTable(), datetime.now(UTC)))["result"]
    assert RunFinished.model_validate(again).plan == small.plan  # a plan that fits is kept
