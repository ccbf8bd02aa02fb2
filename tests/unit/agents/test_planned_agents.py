"""deep_search and chain_of_rag under the run's bounds (tool calls, output tokens) and the offline
decomposition, with a scripted planner model on the real SQLite retrieval path."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.agents.base import LoopLimits
from ragline.agents.deep_search import MAX_SUB_QUERIES, interleave, split_clauses
from ragline.agents.events import ChatResponse
from ragline.agents.prompts import DECOMPOSE_PROMPT, REFLECT_PROMPT, RELEVANCE_PROMPT
from ragline.domain.models import Chunk, SearchHit, SearchQuery, TenantScope
from ragline.domain.retrieval import ChunkKey, Evidence
from ragline.ports import VectorStoreProvider
from ragline.services.authentication import Principal
from ragline.services.chat import ChatService
from tests.support.fakes import ScriptedChatModel
from tests.unit.services.test_chat_service import World, req

pytestmark = pytest.mark.unit
ACME = Principal.operator("acme")


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "How long is the frame warranty, and can I return a bike?",
            ["How long is the frame warranty", "can I return a bike"],
        ),
        ("What do bees eat?", ["What do bees eat?"]),
        (
            "Compare the Volt range and the Volt charging time",
            ["Compare the Volt range", "the Volt charging time"],
        ),
        ("Price of tyres and tubes?", ["Price of tyres and tubes?"]),  # "tubes" alone would lose its subject
        ("a; b; c; d; e; f", ["a; b; c; d; e; f"]),  # one-word parts merge: the question itself
        (  # past four parts the last, usually the question itself, is kept
            "one thing? two things? three things? four things? five things?",
            ["one thing", "two things", "three things", "five things"],
        ),
        (
            "I ride daily in the rain, I commute 40 km, I weigh 60 kg, and I use gravel tyres;"
            " what pressure should I run?",
            ["I ride daily in the rain", "I commute 40 km", "I weigh 60 kg", "what pressure should I run"],
        ),
        (  # a short first part joins the next one
            "Do the FAQ and the Volt manual agree on charging?",
            ["Do the FAQ and the Volt manual agree on charging?"],
        ),
    ],
)
def test_offline_decomposition_splits_at_clauses_and_conjunctions(question: str, parts: list[str]) -> None:
    got = split_clauses(question)
    assert got == parts and len(got) <= MAX_SUB_QUERIES


def test_interleave_takes_every_sub_query_rank_by_rank() -> None:
    scope = TenantScope(tenant_id="acme", namespace_id="docs")

    def ev(alias: str) -> Evidence:
        chunk = Chunk(document_id=alias, sequence_number=0, text=alias)
        return Evidence(alias, ChunkKey.of(scope, chunk), scope, chunk, None)

    a, b, c, d = ev("a"), ev("b"), ev("c"), ev("d")
    got = interleave([("q1", [a, b, c]), ("q2", [d, a]), ("q3", [])])
    assert [e.alias for e in got] == ["a", "d", "b", "c"]


def test_offline_decomposition_is_bounded_on_hostile_input() -> None:
    parts = split_clauses(" and ".join(["word other"] * 50_000) + " " * 100_000)
    assert 1 <= len(parts) <= MAX_SUB_QUERIES and all(len(p) <= 1000 for p in parts)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    yield w
    w.stores.close()


def chat(
    world: World, planner: ScriptedChatModel, answerer: ScriptedChatModel, limits: LoopLimits
) -> ChatService:
    base = world.service([])
    return ChatService(
        retrieval=base._retrieval, model=answerer, metering=base._metering, planner=planner, limits=limits
    )


def js(**body: object) -> list[str | tuple[str, str]]:
    return [json.dumps(body)]


def test_deep_search_searches_no_more_than_the_run_allows(world: World) -> None:
    planner = ScriptedChatModel(
        [js(subQueries=["bees", "queen", "colony", "pollinate"]), js(relevant=[]), js(gapQueries=[])]
    )
    answerer = ScriptedChatModel([["Nothing found."]])
    service = chat(world, planner, answerer, LoopLimits(max_tool_calls_per_run=2))
    body = ChatResponse.collect(service.answer_chat(ACME, req(agent="deep_search")))
    assert [s.label for s in body.steps if s.type == "tool_start"] == ["bees", "queen"]
    assert "tool_calls_refused" in [w.code for w in body.warnings]
    assert body.exit_reason == "answered" and body.usage.retrievals == 2


def test_planning_stops_before_it_eats_the_answers_budget(world: World) -> None:
    # 600 output tokens: 300 kept for the answer; the decomposition writes 400, so planning stops there
    planner = ScriptedChatModel([js(subQueries=["bees"])], output_tokens_per_turn=400)
    answerer = ScriptedChatModel([['Bees pollinate <citation ids="bees#0"/>.']])
    service = chat(world, planner, answerer, LoopLimits(max_output_tokens=600))
    body = ChatResponse.collect(service.answer_chat(ACME, req(agent="deep_search")))
    assert [w.code for w in body.warnings] == ["planning_budget", "planning_budget"]  # relevance, reflection
    assert len(planner.seen) == 1 and len(answerer.seen) == 1
    assert body.exit_reason == "answered" and [s.id for s in body.sources] == ["bees#0"]
    assert body.usage.llm_output_tokens == 410


def test_chain_of_rag_repeating_a_question_ends_the_chain(world: World) -> None:
    planner = ScriptedChatModel(
        [
            js(query="bees"),
            js(answer="They pollinate.", supportingIds=["bees#0"], questionAnswered=False),
            js(query="Bees?"),
        ]
    )
    answerer = ScriptedChatModel([['Bees pollinate <citation ids="bees#0"/>.']])
    body = ChatResponse.collect(
        chat(world, planner, answerer, LoopLimits()).answer_chat(ACME, req(agent="chain_of_rag"))
    )
    assert [s.label for s in body.steps if s.type == "tool_start"] == ["bees"]  # "Bees?" is the same query
    assert len(planner.seen) == 3 and body.exit_reason == "answered"
    notes = answerer.seen[0][0][0].content
    assert "Intermediate findings" in notes and "They pollinate." in notes


class MeetingStores:
    """The real stores, but every search first waits at ``barrier``: searches run one after another
    would leave the first waiting alone until the barrier breaks."""

    def __init__(self, inner: VectorStoreProvider, barrier: threading.Barrier) -> None:
        self._inner = inner
        self._barrier = barrier

    def scoped(self, scope: TenantScope, view: Any = None) -> Any:
        store = self._inner.scoped(scope, view)
        search = store.search

        def meeting(query: SearchQuery) -> list[SearchHit]:
            self._barrier.wait()
            return search(query)

        store.search = meeting  # type: ignore[method-assign]
        return store

    def close(self) -> None:
        self._inner.close()


def test_deep_search_runs_at_most_four_sub_questions(world: World) -> None:
    # Given a planner that decomposes the question into seven sub-questions
    seven = ["bees", "queen", "colony", "pollinate", "honey", "plants", "flowers"]
    planner = ScriptedChatModel([js(subQueries=seven), js(relevant=[]), js(gapQueries=[])])
    answerer = ScriptedChatModel([["Nothing found."]])
    service = chat(world, planner, answerer, LoopLimits())

    # When deep_search runs
    body = ChatResponse.collect(service.answer_chat(ACME, req(agent="deep_search")))

    # Then only the first four are searched, though the run's tool budget had room for all seven
    assert [s.label for s in body.steps if s.type == "tool_start"] == seven[:4]
    assert body.usage.retrievals == 4 and "tool_calls_refused" not in [w.code for w in body.warnings]


def test_deep_search_runs_a_rounds_searches_at_the_same_time(world: World) -> None:
    # Given four sub-questions and a store whose searches only return once four are in flight together
    barrier = threading.Barrier(4, timeout=10)
    planner = ScriptedChatModel(
        [js(subQueries=["bees", "queen", "colony", "pollinate"]), js(relevant=[]), js(gapQueries=[])]
    )
    answerer = ScriptedChatModel([["Nothing found."]])
    base = world.service([], stores=MeetingStores(world.stores, barrier))
    service = ChatService(retrieval=base._retrieval, model=answerer, metering=base._metering, planner=planner)

    # When deep_search runs
    body = ChatResponse.collect(service.answer_chat(ACME, req(agent="deep_search")))

    # Then all four searches met at the barrier (run in turn, the first would have broken it)
    assert not barrier.broken and body.error is None
    assert body.usage.retrievals == 4 and body.exit_reason == "answered"


class StepPlanner(ScriptedChatModel):
    """A planner that answers each planning step (told apart by its system prompt) from that step's own
    script, so the test does not depend on which steps a round happens to skip."""

    def __init__(self, steps: dict[str, list[list[str | tuple[str, str]]]]) -> None:
        super().__init__([])
        self.steps = steps
        self.asked: list[str] = []

    def stream(self, messages: Any, tools: Any, options: Any) -> Any:
        step = next(name for name, prompt in PROMPTS.items() if messages[0].content == prompt)
        self.asked.append(step)
        self.turns = [self.steps[step].pop(0)]
        return super().stream(messages, tools, options)


PROMPTS = {"decompose": DECOMPOSE_PROMPT, "relevance": RELEVANCE_PROMPT, "reflect": REFLECT_PROMPT}


def test_deep_search_reflects_for_at_most_three_rounds_of_three_gap_queries(world: World) -> None:
    # Given a planner that always finds five gaps still missing
    planner = StepPlanner(
        {
            "decompose": [js(subQueries=["bees"])],
            "relevance": [js(relevant=[])] * 3,
            "reflect": [
                js(gapQueries=["queen", "colony", "pollinate", "honey", "wax"]),
                js(gapQueries=["flowers", "plants", "hive", "nectar"]),
                js(gapQueries=["swarm"]),
            ],
        }
    )
    answerer = ScriptedChatModel([["Nothing found."]])
    service = chat(world, planner, answerer, LoopLimits())

    # When deep_search runs
    body = ChatResponse.collect(service.answer_chat(ACME, req(agent="deep_search")))

    # Then each reflection adds its first three gaps, and after the third round no reflection is asked
    searched = [s.label for s in body.steps if s.type == "tool_start"]
    assert searched == ["bees", "queen", "colony", "pollinate", "flowers", "plants", "hive"]
    assert planner.asked.count("reflect") == 2 and body.exit_reason == "answered"


def test_chain_of_rag_follows_at_most_four_hops(world: World) -> None:
    # Given a planner whose every intermediate answer leaves the question open
    hop = js(answer="Not yet.", supportingIds=[], questionAnswered=False)
    follow_ups = ["bees", "queen", "colony", "pollinate", "honey"]
    planner = ScriptedChatModel([turn for q in follow_ups for turn in (js(query=q), hop)])
    answerer = ScriptedChatModel([["Nothing certain."]])
    service = chat(world, planner, answerer, LoopLimits())

    # When chain_of_rag runs
    body = ChatResponse.collect(service.answer_chat(ACME, req(agent="chain_of_rag")))

    # Then four hops are searched and answered, and the fifth follow-up is never asked
    assert [s.label for s in body.steps if s.type == "tool_start"] == follow_ups[:4]
    assert len(planner.seen) == 8 and body.exit_reason == "answered"


class MeteredScript(ScriptedChatModel):
    """Scripted turns that report the given output tokens, one count per call, and record the cap
    (``max_output_tokens``) each call was given."""

    def __init__(self, turns: list[Any], outputs: list[int]) -> None:
        super().__init__(turns)
        self.outputs = outputs
        self.caps: list[int] = []

    def stream(self, messages: Any, tools: Any, options: Any) -> Any:
        self.caps.append(options.max_output_tokens)
        self.tokens = self.outputs.pop(0)
        return super().stream(messages, tools, options)


def test_planning_calls_write_at_most_512_tokens_and_leave_1024_for_the_answer(world: World) -> None:
    # Given the default 5,000-token run budget and a decomposition that writes 3,975 tokens
    planner = MeteredScript(
        [js(subQueries=["bees"]), js(relevant=[]), js(gapQueries=["queen"])], outputs=[3975, 1, 1]
    )
    answerer = MeteredScript([["Nothing found."]], outputs=[10])
    service = chat(world, planner, answerer, LoopLimits())

    # When deep_search runs
    body = ChatResponse.collect(service.answer_chat(ACME, req(agent="deep_search")))

    # Then the first planning call may write 512; the next only what is left above the answer's 1,024
    # (1 token); then planning stops, and the answer may write its 1,024
    assert planner.caps == [512, 1]
    assert [w.code for w in body.warnings if w.code == "planning_budget"] == ["planning_budget"]
    assert answerer.caps == [1024] and body.exit_reason == "answered"
