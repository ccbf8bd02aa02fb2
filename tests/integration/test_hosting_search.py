"""Hosting search end to end: the real model adapters against the scripted servers (OpenAI-compatible
replay, local Bedrock Converse; one script for both), the real retrieval path and ledger, on the SQLite
store and on the OpenSearch node alike."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ragline import errors
from ragline.domain.api import HostingSearchRequest, HostingSearchResponse
from ragline.domain.billing import current_period
from ragline.domain.models import SearchHit, SearchQuery, TenantScope
from ragline.ports import VectorStore, VectorStoreProvider
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.model_endpoints import ChatEndpoint
from tests.support.openai_replay import Turn, error, text
from tests.unit.services.test_chat_service import RecordingReranker

pytestmark = pytest.mark.integration

DOCS = {
    ("acme", "docs"): {
        "warranty.txt": "The frame warranty lasts ten years from the date of purchase.",
        "returns.txt": "Bicycles can be returned within thirty days for a full refund.",
        "tyres.txt": "Road tyres run between five and seven bar of pressure.",
    },
    ("acme", "hr"): {"holidays.txt": "Staff holidays: twenty five days of paid leave each year."},
    ("globex", "docs"): {"secret.txt": "Globex platinum zebra warranty lasts forever."},
}
QUESTION = "How long is the frame warranty, and can I return a bike?"
ACME = Principal(tenant_id="acme", scopes=frozenset({"search"}))


def generate(*queries: tuple[str, str], usage: tuple[int, int] = (100, 10)) -> Turn:
    body = {"queries": [{"type": t, "query": q} for t, q in queries]}
    return text(json.dumps(body), usage=usage)


def verdict(can_answer: bool, usage: tuple[int, int] = (100, 10)) -> Turn:
    return text(json.dumps({"canAnswer": can_answer}), usage=usage)


def build(home: Path, stores: VectorStoreProvider, **settings: Any) -> Container:
    from ragline.config import Settings

    c = Container(
        Settings(home=home, **settings), stores=stores, embedder=BowEmbedder(), tokenizer=BowEmbedder()
    )
    for tenant in ("acme", "globex"):
        c.tenancy.create_tenant(tenant)
    for (tenant, ns), files in DOCS.items():
        c.registry.create_namespace(new_namespace(tenant, ns, default=ns == "docs"))
        for name, body in files.items():
            c.ingest.ingest(TenantScope(tenant_id=tenant, namespace_id=ns), filename=name, data=body.encode())
    return c


@pytest.fixture
def world(
    both_stores: tuple[str, VectorStoreProvider], chat_endpoint: ChatEndpoint, tmp_path: Path
) -> Iterator[Container]:
    yield build(tmp_path / "home", both_stores[1], **chat_endpoint.values())


def run(c: Container, run_id: str | None = None, **body: Any) -> HostingSearchResponse:
    request = HostingSearchRequest.model_validate({"query": QUESTION, "mode": "fast", **body})
    return c.hosting_search.search(ACME, request, run_id=run_id)


def charged_runs(c: Container) -> int:
    return c.ledger.period_runs("acme", current_period())


def texts(response: HostingSearchResponse) -> list[str]:
    return [ch.text for ch in response.chunks]


# -- the loop ---------------------------------------------------------------------------------------
def test_two_rounds_generate_search_and_evaluate_then_stop_when_the_model_can_answer(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script(
        [
            generate(("keyword", "frame warranty years")),
            verdict(False),
            generate(("semantic", "returning a bicycle for a refund"), ("keyword", "frame warranty years")),
            verdict(True),
        ]
    )
    out = run(world)

    assert out.exit_reason == "can_answer" and out.model == world.chat_model.name
    assert [(q.round, q.type, q.query) for q in out.queries] == [
        (1, "hybrid", QUESTION),
        (1, "keyword", "frame warranty years"),
        (2, "semantic", "returning a bicycle for a refund"),  # the repeated keyword query was dropped
    ]
    assert [(r.round, r.can_answer, r.tokens) for r in out.rounds] == [(1, False, 220), (2, True, 220)]
    assert out.total_queries == 3 and all(q.hits > 0 for q in out.queries)
    assert any("warranty lasts ten years" in t for t in texts(out))
    assert any("returned within thirty days" in t for t in texts(out))
    assert {ch.namespace for ch in out.chunks} == {"docs"}
    assert out.usage.llm_input_tokens == 400 and out.usage.llm_output_tokens == 40
    assert out.usage.retrievals == 3
    assert charged_runs(world) == 1
    # The second round's prompt lists what was tried and asks for something else
    second = json.dumps(chat_endpoint.chat_requests[2]["messages"])
    assert "frame warranty years" in second and "already tried" in second
    assert chat_endpoint.chat_requests[0].get("tools") in (None, [])  # planning calls offer no tools


def test_a_first_round_that_can_answer_stops_after_one_evaluation(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script([generate(("keyword", "warranty")), verdict(True)])
    out = run(world)
    assert out.exit_reason == "can_answer" and len(out.rounds) == 1 and len(chat_endpoint.chat_requests) == 2


def test_a_model_that_never_can_answer_stops_at_max_evals(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script(
        [generate(("keyword", "warranty")), verdict(False), generate(("keyword", "refund")), verdict(False)]
    )
    out = run(world, maxEvals=2)
    assert out.exit_reason == "max_evals" and [r.can_answer for r in out.rounds] == [False, False]
    assert chat_endpoint.remaining == []


def test_only_queries_already_tried_end_the_loop_as_no_new_queries(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script(
        [
            generate(("keyword", "frame warranty")),
            verdict(False),
            generate(("keyword", "Frame  WARRANTY!"), ("hybrid", QUESTION)),  # the same, normalised
        ]
    )
    out = run(world)
    assert out.exit_reason == "no_new_queries" and len(out.rounds) == 1 and out.total_queries == 2
    assert chat_endpoint.remaining == [] and out.chunks


@pytest.mark.parametrize(
    ("reply", "queries"),
    [
        (
            'Sure! Here they are:\n{"queries": [{"type": "keyword", "query": "refund"}]}\nGood luck.',
            ["refund"],
        ),
        (
            '<think>Maybe {"queries": [{"type": "keyword", "query": "wrong"}]}</think>'
            '{"queries": [{"type": "semantic", "query": "refund"}]}',
            ["refund"],
        ),
        (
            '```json\n{"queries": [{"type": "keyword", "query": "refund"},'
            ' {"type": "sql", "query": "x"}]}\n```',
            ["refund"],
        ),
        (
            '{"queries": [' + ", ".join(f'{{"type": "keyword", "query": "q{i}"}}' for i in range(9)) + "]}",
            [f"q{i}" for i in range(5)],
        ),
    ],
    ids=["prose", "think", "fenced-with-a-bad-entry", "at-most-five"],
)
def test_generated_queries_are_parsed_from_prose_think_blocks_and_fences(
    world: Container, chat_endpoint: ChatEndpoint, reply: str, queries: list[str]
) -> None:
    chat_endpoint.script([text(reply), verdict(True)])
    out = run(world)
    assert [q.query for q in out.queries[1:]] == queries and not out.warnings


def test_malformed_replies_are_warnings_not_failures(world: Container, chat_endpoint: ChatEndpoint) -> None:
    chat_endpoint.script([text('{"queries": [{"type": '), text("I think so, yes."), text("no json")])
    out = run(world, maxEvals=3)
    assert {w.code for w in out.warnings} == {"planner_reply_invalid"}
    assert out.rounds[0].can_answer is False  # an unreadable verdict is "not yet"
    assert out.exit_reason == "no_new_queries" and out.chunks  # round 1 still searched the user's words


def test_the_token_budget_stops_the_loop_between_model_calls(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script([generate(("keyword", "warranty")), verdict(False), generate(("keyword", "refund"))])
    out = run(world, tokenBudget=150)  # 110 after the generation, 220 after the evaluation
    assert out.exit_reason == "token_budget" and len(out.rounds) == 1
    assert len(chat_endpoint.chat_requests) == 2 and out.chunks
    assert out.usage.llm_input_tokens + out.usage.llm_output_tokens == 220


@pytest.mark.parametrize("status", [500, 429])
def test_a_model_failure_mid_run_ends_cleanly_with_the_pool_and_one_charge(
    world: Container, chat_endpoint: ChatEndpoint, status: int
) -> None:
    chat_endpoint.script([generate(("keyword", "warranty")), verdict(False), error(status, times=None)])
    out = run(world)
    assert out.exit_reason == "error" and out.chunks
    assert [w.code for w in out.warnings] == [
        errors.DependencyUnavailable.code if status == 500 else errors.ModelThrottled.code
    ]
    assert charged_runs(world) == 1 and out.usage.llm_input_tokens == 200


def test_a_replayed_idempotency_key_does_no_work_and_is_charged_once(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script([generate(("keyword", "warranty")), verdict(True)])
    first = run(world, run_id="key-1")
    again = run(world, run_id="key-1")
    assert again.replayed and not first.replayed
    assert again.chunks == first.chunks and again.queries == first.queries
    assert len(chat_endpoint.chat_requests) == 2 and charged_runs(world) == 1
    with pytest.raises(errors.IdempotencyKeyReused):
        run(world, run_id="key-1", topK=3)


def test_refused_requests_are_not_charged(world: Container) -> None:
    with pytest.raises(errors.NamespaceNotFound):
        run(world, namespaces=["nope"])
    with pytest.raises(errors.NamespaceNotFound):  # another tenant's namespace id is just as missing
        world.hosting_search.search(
            Principal(tenant_id="acme", scopes=frozenset({"search"}), namespaces=frozenset({"docs"})),
            HostingSearchRequest.model_validate({"query": QUESTION, "namespaces": ["hr"]}),
        )
    with pytest.raises(errors.InvalidRequest):
        world.hosting_search.search(ACME, HostingSearchRequest.model_validate({"messages": [
            {"role": "user", "content": "hi"}, {"role": "user", "content": "  "}]}))  # fmt: skip
    assert charged_runs(world) == 0


def test_generated_queries_cannot_reach_outside_the_callers_scope(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    chat_endpoint.script(
        [
            generate(
                ("keyword", "globex platinum zebra"),
                ("semantic", "tenant globex namespace docs secret"),
                ("keyword", "hr holidays paid leave"),
            ),
            verdict(True),
        ]
    )
    out = run(world, namespaces=["docs"])
    assert {(ch.namespace, ch.document_id) for ch in out.chunks} <= {
        ("docs", name) for name in DOCS[("acme", "docs")]
    }
    assert not any("zebra" in t or "holidays" in t.lower() for t in texts(out))


def test_a_rounds_searches_run_concurrently(world: Container, chat_endpoint: ChatEndpoint) -> None:
    """Every (query, namespace) search of round 1 waits at one barrier: run one after another, the
    first would wait alone and break it."""
    parties = 3 * 2  # the user's words + 2 generated queries, in 2 namespaces
    barrier = threading.Barrier(parties, timeout=10)
    inner = world.stores

    class Waiting:
        def __init__(self, store: VectorStore) -> None:
            self._store = store
            self.scope = store.scope

        def search(self, query: SearchQuery) -> list[SearchHit]:
            barrier.wait()
            return self._store.search(query)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._store, name)

    class WaitingProvider:
        def scoped(self, scope: TenantScope, view: Any = None) -> Any:
            return Waiting(inner.scoped(scope, view))

        def __getattr__(self, name: str) -> Any:
            return getattr(inner, name)

    world.retrieval._stores = WaitingProvider()  # type: ignore[assignment]
    chat_endpoint.script([generate(("keyword", "warranty"), ("semantic", "holidays")), verdict(True)])
    out = run(world, namespaces=["docs", "hr"])
    assert out.exit_reason == "can_answer" and out.usage.retrievals == parties
    assert {ch.namespace for ch in out.chunks} == {"docs", "hr"}


# -- offline: no model endpoint, the loop still runs ------------------------------------------------
def test_offline_the_loop_generates_from_the_conversation_and_evaluates_coverage(
    both_stores: tuple[str, VectorStoreProvider], tmp_path: Path
) -> None:
    c = build(tmp_path / "home", both_stores[1])
    request = HostingSearchRequest.model_validate(
        {"messages": [
            {"role": "user", "content": "Tell me about the frame warranty."},
            {"role": "assistant", "content": "It covers the frame."},
            {"role": "user", "content": "How many years does it last?"},
        ], "mode": "fast", "topK": 3}
    )  # fmt: skip
    out = c.hosting_search.search(ACME, request)
    assert out.model == "extractive (offline, no LLM)"
    generated = [q for q in out.queries if q.type != "hybrid"]
    assert generated and generated[0].type == "keyword" and "years" in generated[0].query
    semantic = next(q for q in generated if q.type == "semantic")
    assert "warranty" in semantic.query  # the earlier turn gives the follow-up its subject
    assert "warranty lasts ten years" in out.chunks[0].text
    assert out.rounds[0].can_answer is not None and out.usage.llm_input_tokens == 0
    assert c.ledger.period_runs("acme", current_period()) == 1


def test_with_no_reranker_accurate_answers_fused_without_a_warning_and_the_process_says_it_once(
    both_stores: tuple[str, VectorStoreProvider], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from ragline.services import hosting_search

    # Given the offline default (no model endpoint, so no reranker) and a process that has not said so yet
    c = build(tmp_path / "home", both_stores[1])
    hosting_search._NO_RERANKER_LOGGED.clear()
    request = HostingSearchRequest.model_validate({"query": QUESTION, "mode": "accurate", "topK": 3})
    # When accurate hosting search runs three times
    with caplog.at_level("WARNING", logger="ragline.services.hosting_search"):
        answers = [c.hosting_search.search(ACME, request) for _ in range(3)]
    # Then each answer is the fused order with no warning (the configuration changed nothing about it)
    for out in answers:
        assert out.chunks and out.rerank is None and out.warnings == [], out.warnings
    # And the process stated its configuration once
    said = [r for r in caplog.records if "no reranker" in r.getMessage()]
    assert len(said) == 1


# -- the request --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "body",
    [
        {},
        {"query": "x", "messages": [{"role": "user", "content": "x"}]},
        {"query": "x", "maxEvals": 6},
        {"query": "x", "maxEvals": 0},
        {"query": "x", "topK": 0},
        {"query": "x", "mode": "deep"},
        {"query": "x", "tenant": "globex"},
        {"query": "x", "max_evals": 2},  # camelCase only
    ],
)
def test_bad_requests_are_refused(body: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        HostingSearchRequest.model_validate(body)


# -- the defaults a request that names no bounds gets ---------------------------------------------------
def test_by_default_the_loop_evaluates_at_most_three_rounds(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    # Given a model that never can answer and always has a new query (tokens well inside any budget)
    never = [turn for i in range(6) for turn in (generate(("keyword", f"warranty {i}"), usage=(5, 1)),
                                                 verdict(False, usage=(5, 1)))]  # fmt: skip
    chat_endpoint.script(never)
    # When a request names no maxEvals
    out = run(world)
    # Then three rounds are generated and evaluated, and the loop stops there
    assert out.exit_reason == "max_evals" and [r.round for r in out.rounds] == [1, 2, 3]
    assert len(chat_endpoint.chat_requests) == 6


def test_by_default_the_planner_may_spend_4096_tokens(world: Container, chat_endpoint: ChatEndpoint) -> None:
    # Given a generation that spends 4,095 tokens, an evaluation that spends 1, and more to come
    chat_endpoint.script(
        [
            generate(("keyword", "warranty"), usage=(4000, 95)),
            verdict(False, usage=(0, 1)),
            generate(("keyword", "refund")),
            verdict(False),
        ]
    )
    # When a request names no tokenBudget
    out = run(world)
    # Then the evaluation is made (4,095 < 4,096) and nothing after it (4,096 spent): one token more
    # or less of budget would change the number of model calls
    assert out.exit_reason == "token_budget" and len(chat_endpoint.chat_requests) == 2
    assert out.usage.llm_input_tokens + out.usage.llm_output_tokens == 4096
    assert [r.can_answer for r in out.rounds] == [False]


@pytest.mark.parametrize("mode", ["fast", "accurate"])
def test_by_default_the_pool_is_cut_or_reranked_to_15_chunks(
    world: Container, chat_endpoint: ChatEndpoint, mode: str
) -> None:
    # Given forty warranty documents, and in accurate mode a reranker that records what it is asked for
    scope = TenantScope(tenant_id="acme", namespace_id="docs")
    for i in range(40):
        world.ingest.ingest(
            scope, filename=f"w{i}.txt", data=f"Warranty note {i}: the frame warranty.".encode()
        )
    reranker = RecordingReranker()
    world.retrieval._reranker = reranker
    chat_endpoint.script([generate(("keyword", "frame warranty")), verdict(True)])
    # When a request names no topK
    out = run(world, mode=mode)
    # Then fifteen chunks come back (reranked to fifteen in accurate mode; the pool's best in fast mode)
    assert len(out.chunks) == 15
    assert [top_n for _, _, top_n in reranker.calls] == ([15] if mode == "accurate" else [])


def test_each_query_fetches_20_per_namespace_and_the_reranker_sees_the_best_60(
    world: Container, chat_endpoint: ChatEndpoint
) -> None:
    # Given four topics of 25 documents each, and a round that searches each topic by its own word
    scope = TenantScope(tenant_id="acme", namespace_id="docs")
    for t in "abcd":
        for i in range(25):
            world.ingest.ingest(scope, filename=f"{t}{i}.txt", data=f"Note {i} on topic{t}.".encode())
    asked: list[int] = []
    inner = world.stores

    class Recording:
        def scoped(self, scope: TenantScope, view: Any = None) -> Any:
            store = inner.scoped(scope, view)
            search = store.search

            def recorded(query: SearchQuery) -> list[SearchHit]:
                asked.append(query.k)
                return search(query)

            store.search = recorded  # type: ignore[method-assign]
            return store

        def __getattr__(self, name: str) -> Any:
            return getattr(inner, name)

    world.retrieval._stores = Recording()  # type: ignore[assignment]
    reranker = RecordingReranker()
    world.retrieval._reranker = reranker
    chat_endpoint.script([generate(*[("keyword", f"topic{t}") for t in "abcd"]), verdict(True)])

    # When an accurate run pools them (the user's words and four topics: 5 queries)
    out = run(world, mode="accurate")

    # Then every query asked the store for 20, and the reranker was given the pool's best 60
    assert asked == [20] * 5 and out.total_queries == 5
    assert [(pooled, top_n) for _, pooled, top_n in reranker.calls] == [(60, 15)]
