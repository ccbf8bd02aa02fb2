"""The tool budget of a chat run is checked before every call, not only between model turns.

A model may ask for 150 ``search`` calls in one turn; only the per-turn cap runs, the rest come back
to the model as tool errors it can read, and the run ends within the per-run cap and evidence budget.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.agents.base import LoopLimits
from ragline.agents.events import RunError, RunEvent, RunFinished, ToolFinished, Warning
from ragline.config import Settings
from ragline.domain.api import ChatRequest, RequestMessage
from ragline.domain.models import TenantScope
from ragline.services.authentication import Principal
from ragline.services.chat import ChatService
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.contract.vector_store_contract import make_chunks
from tests.support.fakes import BowEmbedder, ScriptedChatModel, Turn
from tests.support.vectors import DIM

pytestmark = pytest.mark.unit
ACME = Principal.operator("acme")
ASK = ChatRequest(messages=[RequestMessage(role="user", content="What do bees do?")], namespaces=["docs"])


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[SqliteVectorStoreProvider]:
    provider = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    provider.scoped(TenantScope(tenant_id="acme", namespace_id="docs")).upsert(
        make_chunks("bees", ["Honey bees pollinate flowering plants.", "A colony has one queen."])
        + make_chunks("long", [f"Part {i} of a long text about bees." for i in range(12)])
    )
    yield provider
    provider.close()


def container(
    tmp_path: Path, stores: SqliteVectorStoreProvider, turns: list[Turn], **settings: int
) -> Container:
    c = Container(
        Settings(home=tmp_path, **settings),  # type: ignore[arg-type]
        stores=stores,
        embedder=BowEmbedder(),
        chat_model=ScriptedChatModel(turns),
    )
    c.registry.create_namespace(new_namespace("acme", "docs"))
    return c


def searches(n: int) -> Turn:
    return [("search", {"query": f"bees {i}", "mode": "keyword"}) for i in range(n)]


def final(events: list[RunEvent]) -> RunFinished:
    assert isinstance(events[-1], RunFinished)
    return events[-1]


def test_one_turn_of_150_searches_runs_only_the_per_turn_cap(
    tmp_path: Path, stores: SqliteVectorStoreProvider
) -> None:
    # Given a model whose first turn asks for 150 searches
    c = container(tmp_path, stores, [searches(150), ["Bees pollinate."]])

    # When the run is played
    events = list(c.chat.answer_chat(ACME, ASK))

    # Then 8 searches ran (8 retrievals), and the model read a tool error for each of the other 142
    assert len([e for e in events if isinstance(e, ToolFinished)]) == 8
    assert final(events).usage.retrievals == 8 and final(events).exit_reason == "answered"
    replies = [m for m in c.chat_model.seen[1][0] if m.role == "tool"]  # type: ignore[attr-defined]
    assert len(replies) == 150 and sum("not run" in m.content for m in replies) == 142
    assert "at most 8 tool calls per turn" in replies[-1].content
    warning = next(e for e in events if isinstance(e, Warning) and e.code == "tool_calls_refused")
    assert warning.details == {"refused": {"max_tool_calls_per_turn": 142}}


def test_the_run_cap_refuses_calls_then_withdraws_the_tools(
    tmp_path: Path, stores: SqliteVectorStoreProvider
) -> None:
    # Given caps of 2 calls per turn and 3 per run (settings), and a model that keeps asking for 5
    c = container(
        tmp_path, stores, [searches(5), searches(5), searches(5), ["ok"]],
        max_tool_calls_per_turn=2, max_tool_calls_per_run=3,
    )  # fmt: skip

    # When the run is played
    events = list(c.chat.answer_chat(ACME, ASK))

    # Then 2 calls run in the first turn, 1 in the second, none after; the third turn has no tools
    assert final(events).usage.retrievals == 3 and final(events).exit_reason == "max_tool_calls"
    seen = c.chat_model.seen  # type: ignore[attr-defined]
    assert [tools for _, tools in seen] == [["search", "expand"], ["search", "expand"], [], []]
    refusals = [e.details["refused"] for e in events if isinstance(e, Warning)]
    assert refusals == [
        {"max_tool_calls_per_turn": 3},
        {"max_tool_calls": 4},
        {"max_tool_calls": 5},
    ]


def test_the_evidence_budget_is_checked_before_each_call_of_a_turn(
    tmp_path: Path, stores: SqliteVectorStoreProvider
) -> None:
    # Given an evidence budget of 3 chunks, and one turn of 5 searches (the first finds more than 3)
    c = container(tmp_path, stores, [searches(5), ["ok"]])
    chat = ChatService(
        retrieval=c.retrieval, model=c.chat_model, metering=c.metering, limits=LoopLimits(evidence_budget=3)
    )

    # When the run is played
    events = list(chat.answer_chat(ACME, ASK))

    # Then only the first search ran; the model is told it has enough evidence
    assert final(events).usage.retrievals == 1 and final(events).exit_reason == "evidence_budget"
    replies = [m.content for m in c.chat_model.seen[1][0] if m.role == "tool"]  # type: ignore[attr-defined]
    assert all("enough evidence" in r for r in replies[1:]) and len(replies) == 5


def test_expand_of_an_absurd_sequence_number_is_a_tool_error_not_a_crash(
    tmp_path: Path, stores: SqliteVectorStoreProvider
) -> None:
    # Given a model that expands a real document at sequence number 2^70
    expand = ("expand", {"documentId": "bees", "sequenceNumber": 2**70})
    c = container(tmp_path, stores, [[("search", {"query": "queen"})], [expand], ["ok"]])

    # When the run is played
    events = list(c.chat.answer_chat(ACME, ASK))

    # Then the call fails as invalid arguments the model can read, and the run still answers
    expanded = [e for e in events if isinstance(e, ToolFinished)][1]
    assert expanded.error == "invalid_arguments" and not any(isinstance(e, RunError) for e in events)
    assert final(events).exit_reason == "answered"
    reply = [m.content for m in c.chat_model.seen[2][0] if m.role == "tool"][-1]  # type: ignore[attr-defined]
    assert "sequenceNumber" in reply


def test_a_query_the_retriever_refuses_goes_back_to_the_model(
    tmp_path: Path, stores: SqliteVectorStoreProvider
) -> None:
    # Given a model that searches for blanks (valid JSON, refused by the retriever)
    c = container(tmp_path, stores, [[("search", {"query": "   "})], ["ok"]])

    # When the run is played
    events = list(c.chat.answer_chat(ACME, ASK))

    # Then it is a tool error, not the end of the run
    assert next(e for e in events if isinstance(e, ToolFinished)).error == "invalid_arguments"
    assert final(events).exit_reason == "answered"


# -- the defaults of a wired chat run (the agentic loop's documented bounds) ----------------------------
def test_by_default_a_run_runs_24_tool_calls(tmp_path: Path, stores: SqliteVectorStoreProvider) -> None:
    # Given the default settings and a model that asks for 8 searches a turn, five turns long
    c = container(tmp_path, stores, [searches(8)] * 5 + [["ok"]])

    # When the run is played
    events = list(c.chat.answer_chat(ACME, ASK))

    # Then three turns' calls run (24), the fourth turn's are refused, and the tools are withdrawn
    assert final(events).usage.retrievals == 24 and final(events).exit_reason == "max_tool_calls"
    assert len([e for e in events if isinstance(e, ToolFinished)]) == 24


def test_by_default_three_failed_calls_stop_the_tools(
    tmp_path: Path, stores: SqliteVectorStoreProvider
) -> None:
    # Given the default settings and a model whose turn holds five calls that each fail
    broken = [("expand", {"documentId": "bees", "sequenceNumber": 2**70 + i}) for i in range(5)]
    c = container(tmp_path, stores, [broken, ["ok"]])

    # When the run is played
    events = list(c.chat.answer_chat(ACME, ASK))

    # Then three calls ran and failed; the other two were refused for the errors, and the loop ends so
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [e.error for e in finished] == ["invalid_arguments"] * 3
    refusals = [
        e.details["refused"] for e in events if isinstance(e, Warning) and e.code == "tool_calls_refused"
    ]
    assert refusals == [{"max_tool_errors": 2}]
    assert final(events).exit_reason == "max_tool_errors"


def test_by_default_a_run_gathers_at_most_60_chunks_of_evidence(
    tmp_path: Path, stores: SqliteVectorStoreProvider
) -> None:
    # Given eight groups of ten chunks, each group found by its own word, and one turn searching each
    for g in range(8):
        stores.scoped(TenantScope(tenant_id="acme", namespace_id="docs")).upsert(
            make_chunks(f"group{g}", [f"Note {i} of topic{g}." for i in range(10)])
        )
    turn: Turn = [("search", {"query": f"topic{g}", "mode": "keyword"}) for g in range(8)]
    c = container(tmp_path, stores, [turn, ["ok"]])

    # When the run is played (accurate: ten chunks a search)
    events = list(c.chat.answer_chat(ACME, ASK))

    # Then six searches fill the 60 chunks of evidence and the other two are refused
    assert [e.hits for e in events if isinstance(e, ToolFinished)] == [10] * 6
    refusals = [
        e.details["refused"] for e in events if isinstance(e, Warning) and e.code == "tool_calls_refused"
    ]
    assert refusals == [{"evidence_budget": 2}]
    assert final(events).exit_reason == "evidence_budget"


# -- hostile arguments: bounded before any parse ---------------------------------------------------
HOSTILE_ARGUMENTS = {
    "nested arrays": '{"query": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "open objects": '{"a":' * 100_000,
    "nested in the label": '{"query": "bees", "label": ' + "[" * 50_000 + "]" * 50_000 + "}",
    "too long": '{"query": "bees", "label": "' + "x" * 50_000 + '"}',
}


@pytest.mark.parametrize("arguments", HOSTILE_ARGUMENTS.values(), ids=HOSTILE_ARGUMENTS.keys())
def test_hostile_tool_arguments_are_a_tool_error_and_the_run_goes_on(
    tmp_path: Path, stores: SqliteVectorStoreProvider, arguments: str
) -> None:
    # Given a model whose first call's arguments nest 100k deep (or run far too long), then a sane search
    c = container(tmp_path, stores, [[("search", arguments)], [("search", {"query": "queen"})], ["ok"]])

    # When the run is played through the agent loop
    events = list(c.chat.answer_chat(ACME, ASK))

    # Then the hostile call is an invalid_arguments tool error the model reads, and the run answers
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [e.error for e in finished] == ["invalid_arguments", None] and finished[1].hits > 0
    assert not any(isinstance(e, RunError) for e in events)
    assert final(events).exit_reason == "answered"
    history = c.chat_model.seen[1][0]  # type: ignore[attr-defined]
    reply = next(m.content for m in history if m.role == "tool")
    assert "invalid arguments" in reply and len(reply) < 200
    # And the model is not sent its runaway arguments back: its call is shown with none
    (shown,) = next(m.tool_calls for m in history if m.role == "assistant")
    assert (shown.name, shown.arguments) == ("search", "{}")
