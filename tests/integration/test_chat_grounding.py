"""Grounding scores in chat runs end to end: every agent's ``final`` carries one; a sentence that says the
opposite of its source raises ``contradicted_citation`` (offline scorer, and the chat model as judge
through the real OpenAI and Bedrock adapters on the scripted servers); the judge is metered with the run,
once; a judge that fails costs the grounding, never the answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.grounding.judge import JUDGE_SYSTEM_PROMPT
from ragline.agents.catalog import AGENTS
from ragline.agents.events import ChatResponse, RunFinished
from ragline.config import Settings
from ragline.domain.api import ChatRequest
from ragline.domain.billing import current_period
from ragline.domain.models import TenantScope
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.model_endpoints import ChatEndpoint
from tests.support.openai_replay import error, text, tool_call

pytestmark = pytest.mark.integration

DOCS = {
    "returns.txt": "Used bicycles can be returned within thirty days for a full refund.",
    "warranty.txt": "The frame warranty lasts ten years from the date of purchase.",
}
ACME = Principal(tenant_id="acme", scopes=frozenset({"chat"}))
QUESTION = "Can I return a used bicycle, and how long is the frame warranty?"
CONTRADICTING = (
    'Used bicycles cannot be returned <citation ids="returns.txt#0"/>. '
    'The frame warranty lasts ten years <citation ids="warranty.txt#0"/>.'
)


def world(tmp_path: Path, **settings: Any) -> Container:
    stores = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=BowEmbedder().dimension)
    c = Container(
        Settings(home=tmp_path / "home", reranker="none", **settings),
        stores=stores,
        embedder=BowEmbedder(),
        tokenizer=BowEmbedder(),
    )
    c.tenancy.create_tenant("acme")
    c.registry.create_namespace(new_namespace("acme", "docs", default=True))
    for name, body in DOCS.items():
        c.ingest.ingest(TenantScope(tenant_id="acme", namespace_id="docs"), filename=name, data=body.encode())
    return c


@pytest.fixture
def offline(tmp_path: Path) -> Iterator[Container]:
    c = world(tmp_path)
    yield c
    c.close()


def ask(c: Container, **body: Any) -> tuple[RunFinished, ChatResponse]:
    request = ChatRequest.model_validate(
        {"messages": [{"role": "user", "content": QUESTION}], "namespaces": ["docs"], **body}
    )
    events = list(c.chat.answer_chat(ACME, request))
    finals = [e for e in events if isinstance(e, RunFinished)]
    assert len(finals) == 1
    return finals[0], ChatResponse.collect(events)


def codes(body: ChatResponse) -> list[str]:
    return [w.code for w in body.warnings]


@pytest.mark.parametrize("agent", ["auto", *(a.name for a in AGENTS)])
def test_every_agents_final_event_carries_the_grounding_score(offline: Container, agent: str) -> None:
    final, body = ask(offline, agent=agent)

    assert final.grounding is not None and final.grounding.status == "scored"
    assert final.grounding.scorer == "verifier" and final.grounding.score is not None
    assert 0.0 <= final.grounding.score <= 1.0 and final.grounding.sentences
    assert all(
        s.citations and s.label in ("supported", "contradicted", "not_enough_info")
        for s in final.grounding.sentences
    )
    assert body.grounding == final.grounding  # the JSON answer carries the same


@pytest.mark.parametrize("scorer", ["verifier", "overlap"])
def test_the_offline_scorer_flags_a_sentence_that_contradicts_its_source(
    tmp_path: Path, chat_endpoint: ChatEndpoint, scorer: str
) -> None:
    c = world(tmp_path, **chat_endpoint.values(), grounding=scorer)
    chat_endpoint.script([tool_call("search", {"query": "used bicycle returns"}), text(CONTRADICTING)])

    final, body = ask(c, agent="agentic")

    assert body.exit_reason == "answered" and "contradicted_citation" in codes(body)
    assert final.grounding is not None
    labels = [(s.text, s.label) for s in final.grounding.sentences]
    assert labels == [
        ("Used bicycles cannot be returned.", "contradicted"),
        ("The frame warranty lasts ten years.", "supported"),
    ]
    assert final.grounding.sentences[0].evidence[0].text == DOCS["returns.txt"]


def test_the_judge_flags_a_contradiction_and_is_metered_once_with_the_run(
    tmp_path: Path, chat_endpoint: ChatEndpoint
) -> None:
    c = world(tmp_path, **chat_endpoint.values(), grounding="judge")
    verdicts = {
        "verdicts": [
            {"n": 1, "label": "contradicted", "score": 0.05, "evidence": ["P1.0"]},
            {"n": 2, "label": "supported", "score": 0.95, "evidence": ["P2.0"]},
        ]
    }
    chat_endpoint.script(
        [
            tool_call("search", {"query": "used bicycle returns"}, usage=(100, 10)),
            text(CONTRADICTING, usage=(400, 30)),
            text(json.dumps(verdicts), usage=(250, 40)),
        ]
    )

    final, body = ask(c, agent="agentic")

    assert final.grounding is not None and final.grounding.scorer == "judge"
    assert [s.label for s in final.grounding.sentences] == ["contradicted", "supported"]
    assert final.grounding.score == 0.5 and "contradicted_citation" in codes(body)
    judged = chat_endpoint.chat_requests[-1]
    assert judged["messages"][0]["content"] == JUDGE_SYSTEM_PROMPT and not judged.get("tools")
    assert "[P1.0] " + DOCS["returns.txt"] in judged["messages"][1]["content"]
    # the judge's tokens are in the run's one charge
    assert (final.usage.llm_input_tokens, final.usage.llm_output_tokens) == (750, 80)
    period = current_period()
    assert c.ledger.period_runs("acme", period) == 1
    assert c.ledger.period_usage("acme", period).llm_input_tokens == 750


@pytest.mark.parametrize(
    "judge_turn", [text("I think it is fine."), error(500, times=None)], ids=["prose", "down"]
)
def test_a_failing_judge_costs_the_grounding_not_the_answer(
    tmp_path: Path, chat_endpoint: ChatEndpoint, judge_turn: Any
) -> None:
    c = world(tmp_path, **chat_endpoint.values(), grounding="judge")
    chat_endpoint.script([tool_call("search", {"query": "returns"}), text(CONTRADICTING), judge_turn])

    final, body = ask(c, agent="agentic")

    assert body.exit_reason == "answered" and body.error is None
    assert final.answer == CONTRADICTING
    assert final.grounding is not None and final.grounding.status == "unavailable"
    assert "grounding_unavailable" in codes(body) and "contradicted_citation" not in codes(body)
    assert c.ledger.period_runs("acme", current_period()) == 1


def test_grounding_none_turns_it_off(tmp_path: Path) -> None:
    c = world(tmp_path, grounding="none")

    final, _ = ask(c, agent="agentic")

    assert final.grounding is not None and final.grounding.status == "off"
