"""A run over several namespaces (issue 24): all candidates fused on one scale, so a small namespace's
answer reaches the model; each namespace's own settings apply. Through the real OpenAI adapter against
the scripted server, on the SQLite store and the OpenSearch node alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.agents.events import ChatResponse
from ragline.config import Settings
from ragline.domain.api import ChatRequest, NamespacePatch, SearchRequest
from ragline.domain.models import TenantScope
from ragline.ports import VectorStoreProvider
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.openai_replay import OpenAIReplay, text, tool_call
from tests.support.tool_results import tool_results

pytestmark = pytest.mark.integration

SHOP = [
    "The frame warranty lasts ten years from the date of purchase.",
    "Bicycles can be returned within thirty days for a full refund.",
    "Road tyres run between five and seven bar of pressure.",
    "Delivery takes three to five working days across the country.",
    "Our workshop staff service electric bikes on weekdays.",
    "A basic service costs sixty pounds and includes a safety check.",
    "Clean and lubricate the chain every two hundred kilometres.",
    "The Leeds store opens at nine and closes at six.",
    "Gift cards can be spent online and in every store.",
    "Test rides are free and take about thirty minutes.",
    "Brake pads should be replaced when they are thinner than three millimetres.",
    "Repairs booked online are confirmed by email within one day.",
]
DOCS = {
    "docs": {f"shop-{i:02d}.txt": body for i, body in enumerate(SHOP)},
    "hr": {"holidays.txt": "Staff holidays: twenty five days of paid leave each year."},
    "legal": {"terms.txt": "Refund requests can take up to ten days to process."},
}
QUESTION = "How many days of paid leave do staff get?"
ACME = Principal(tenant_id="acme", scopes=frozenset({"chat", "search", "admin"}))


@pytest.fixture
def world(
    both_stores: tuple[str, VectorStoreProvider], openai_replay: OpenAIReplay, tmp_path: Path
) -> Iterator[Container]:
    s = openai_replay.settings()
    keys = ("openai_base_url", "openai_api_key", "llm_max_retries", "llm_timeout_s")
    settings = Settings(home=tmp_path / "home", reranker="none", **{k: getattr(s, k) for k in keys})
    c = Container(settings, stores=both_stores[1], embedder=BowEmbedder(), tokenizer=BowEmbedder())
    c.tenancy.create_tenant("acme")
    for ns, files in DOCS.items():
        c.registry.create_namespace(new_namespace("acme", ns, default=ns == "docs"))
        for name, body in files.items():
            c.ingest.ingest(TenantScope(tenant_id="acme", namespace_id=ns), filename=name, data=body.encode())
    yield c


def ask(c: Container, replay: OpenAIReplay, **body: Any) -> tuple[ChatResponse, list[dict[str, Any]]]:
    """A chat whose model searches for the question once, then answers; the passages it was shown."""
    replay.script(
        [
            tool_call("search", {"query": QUESTION}),
            text('Twenty five days <citation ids="holidays.txt#0"/>.'),
        ]
    )
    request = ChatRequest.model_validate({"messages": [{"role": "user", "content": QUESTION}], **body})
    response = ChatResponse.collect(list(c.chat.answer_chat(ACME, request)))
    tool = [m for m in replay.chat_requests[-1]["messages"] if m["role"] == "tool"]
    assert len(tool) == 1
    return response, list(tool_results(tool[0]["content"]))


@pytest.mark.parametrize("mode", ["accurate", "fast"])
def test_the_small_namespaces_answer_reaches_the_model_first(
    world: Container, openai_replay: OpenAIReplay, mode: str
) -> None:
    # Given "docs" with 12 shop chunks and "hr" with the one chunk that answers
    # When a chat over both searches for the paid-leave question
    body, shown = ask(world, openai_replay, namespaces=["docs", "hr"], mode=mode)
    # Then the answer is among what the model sees — first — and the citation is verified
    assert len(shown) == 10
    assert shown[0]["id"] == "holidays.txt#0", [p["id"] for p in shown]
    assert [s.id for s in body.sources] == ["holidays.txt#0"] and body.exit_reason == "answered"


def test_a_lone_weak_match_in_another_namespace_does_not_outrank_the_answer(
    world: Container, openai_replay: OpenAIReplay
) -> None:
    # Given "legal", whose one chunk shares only the word "days": its own best in both legs, as the
    # answer is in "hr" — each namespace alone scores its chunk 1.0
    # When a run searches all three, "legal" named before "hr"
    _, shown = ask(world, openai_replay, namespaces=["docs", "legal", "hr"])
    # Then fused on one scale, the answer leads
    assert shown[0]["id"] == "holidays.txt#0", [p["id"] for p in shown]
    assert shown.index(next(p for p in shown if p["id"] == "terms.txt#0")) > 0


def test_the_answer_ranks_first_in_its_namespaces_search_at_full_weight(world: Container) -> None:
    response = world.search.search(ACME, "hr", SearchRequest(query=QUESTION))
    top = response.hits[0]
    assert top.id == "holidays.txt#0"
    assert top.scores is not None and top.scores.fused_score == pytest.approx(
        1.0
    )  # min-max scored a namespace's only chunk 0.0


def test_a_run_over_two_namespaces_applies_each_namespaces_settings(
    world: Container, openai_replay: OpenAIReplay
) -> None:
    # Given each namespace with its own prompt, and "hr" showing 12 chunks per search ("docs": 3)
    admin = world.namespaces
    admin.update(
        ACME,
        "docs",
        NamespacePatch.model_validate({"systemPrompt": "Answer as the shop.", "chunksPerSearch": 3}),
    )
    admin.update(
        ACME, "hr", NamespacePatch.model_validate({"systemPrompt": "Answer as HR.", "chunksPerSearch": 12})
    )
    # When a run searches both
    _, shown = ask(world, openai_replay, namespaces=["docs", "hr"])
    # Then both prompts instruct the model, and a search shows what the most demanding one asks
    system = openai_replay.chat_requests[0]["messages"][0]["content"]
    assert "Answer as the shop." in system and "Answer as HR." in system
    assert system.index("Answer as the shop.") < system.index("Answer as HR.")
    assert len(shown) == 12
