"""The chat run: tool loop bounds, tool errors, verified citations, exactly one charge per run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.embedded.ledger import SqliteUsageLedger
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.agents.events import RunError, RunEvent, RunFinished, Sources, ToolFinished, Warning
from ragline.config import Settings
from ragline.domain.api import ChatRequest, RequestMessage
from ragline.domain.billing import current_period
from ragline.domain.models import RunUsage, StoreCapabilities, TenantScope
from ragline.domain.retrieval import Reranked
from ragline.domain.tenancy import Tenant
from ragline.ports import Reranker, VectorStoreProvider
from ragline.services.authentication import Principal
from ragline.services.chat import ChatService
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.contract.vector_store_contract import make_chunks
from tests.support.fakes import BowEmbedder, ScriptedChatModel, Turn
from tests.support.vectors import DIM

pytestmark = pytest.mark.unit
ASK = [RequestMessage(role="user", content="Which insects pollinate plants?")]
ACME = Principal.operator("acme")


def req(
    messages: list[RequestMessage] | None = None, namespaces: list[str] | None = None, **kw: Any
) -> ChatRequest:
    return ChatRequest(messages=messages or ASK, namespaces=namespaces or ["docs"], **kw)


class RecordingReranker:
    """A reranker that keeps fused order, records each call and reports a cost (or fails)."""

    name = "recording"

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[str, int, int]] = []
        self.fail = fail

    def rerank(self, query: str, hits: Any, top_n: int) -> Reranked:
        self.calls.append((query, len(hits), top_n))
        if self.fail:
            raise errors.RerankFailed("reranker down", input_tokens=7, output_tokens=0)
        return Reranked(hits=list(hits)[:top_n], usage=RunUsage(reranks=1, llm_input_tokens=7))


class World:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.registry = SqliteTenantRegistry(root / "t.sqlite")
        self.stores = SqliteVectorStoreProvider(root / "s.sqlite", dimension=DIM)
        self.ledger = SqliteUsageLedger(root / "u.sqlite")
        self.embedder = BowEmbedder()
        for tenant in ("acme", "globex"):
            self.registry.create_namespace(new_namespace(tenant, "docs"))
        self.stores.scoped(TenantScope(tenant_id="acme", namespace_id="docs")).upsert(
            make_chunks("bees", ["Honey bees pollinate flowering plants.", "A colony has one queen."])
            + make_chunks("long", [f"Part {i} of a long text." for i in range(12)])
        )
        self.stores.scoped(TenantScope(tenant_id="globex", namespace_id="docs")).upsert(
            make_chunks("secret", ["Globex bees pollinate secret plants."])
        )

    def service(
        self,
        turns: list[Turn],
        ledger: SqliteUsageLedger | None = None,
        reranker: Reranker | None = None,
        stores: VectorStoreProvider | None = None,
    ) -> ChatService:
        self.model = ScriptedChatModel(turns)
        container = Container(
            Settings(home=self.root),
            registry=self.registry,
            stores=stores or self.stores,
            ledger=ledger or self.ledger,
            embedder=self.embedder,
            chat_model=self.model,
            reranker=reranker,
        )
        return container.chat


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    yield w
    w.stores.close()


def final(events: list[RunEvent]) -> RunFinished:
    last = events[-1]
    assert isinstance(last, RunFinished)
    return last


def test_model_searches_then_answers_with_a_verified_citation(world: World) -> None:
    svc = world.service(
        [
            [("search", {"query": "pollinate", "mode": "semantic", "label": "Looking"})],
            ["Bees do. ", '<citation ids="bees#0"/>'],
        ]
    )
    events = list(svc.answer_chat(ACME, req(), run_id="r1"))
    done = final(events)
    assert done.exit_reason == "answered" and done.answer == 'Bees do. <citation ids="bees#0"/>'
    sources = next(e for e in events if isinstance(e, Sources))
    assert [(s.id, s.namespace, s.document_id) for s in sources.chunks] == [("bees#0", "docs", "bees")]
    assert world.ledger.period_usage("acme", current_period()).retrievals == 1


def test_the_model_never_sees_another_tenants_chunks(world: World) -> None:
    svc = world.service([[("search", {"query": "Globex secret plants"})], ["done"]])
    list(svc.answer_chat(ACME, req()))
    tool_results = [m.content for m in world.model.seen[1][0] if m.role == "tool"]
    assert tool_results and "secret" not in " ".join(tool_results)


def test_invented_citations_are_removed_and_reported(world: World) -> None:
    svc = world.service(
        [
            [("search", {"query": "bees"})],
            ['Bees. <citation ids="bees#0,made-up#9"/> Also <citation ids="x#1"/>.'],
        ]
    )
    events = list(svc.answer_chat(ACME, req()))
    warning = next(e for e in events if isinstance(e, Warning))
    assert warning.code == "unknown_citations" and warning.details["ids"] == ["made-up#9", "x#1"]
    assert final(events).answer == 'Bees. <citation ids="bees#0"/> Also.'


def test_invalid_tool_arguments_go_back_to_the_model_as_a_tool_error(world: World) -> None:
    svc = world.service([[("search", {"mode": "telepathy"})], [("search", {"query": "bees"})], ["ok"]])
    events = list(svc.answer_chat(ACME, req()))
    ends = [e for e in events if isinstance(e, ToolFinished)]
    assert ends[0].error == "invalid_arguments" and ends[1].error is None and ends[1].hits > 0
    first_tool_reply = next(m for m in world.model.seen[1][0] if m.role == "tool").content
    assert "invalid arguments" in first_tool_reply and "query" in first_tool_reply
    assert final(events).exit_reason == "answered"


def test_expand_returns_ordered_neighbours_and_is_limited_to_retrieved_documents(world: World) -> None:
    svc = world.service(
        [
            [("search", {"query": "Part 6 long text"})],
            [("expand", {"documentId": "long", "sequenceNumber": 6})],
            [("expand", {"documentId": "secret", "sequenceNumber": 0})],
            ["fine"],
        ]
    )
    events = list(svc.answer_chat(ACME, req()))
    ends = [e for e in events if isinstance(e, ToolFinished)]
    assert ends[1].hits == 10 and ends[2].error == "unknown_document"


def test_step_cap_ends_a_model_that_never_stops_searching(world: World) -> None:
    svc = world.service([[("search", {"query": f"bees {i}"})] for i in range(30)])
    done = final(list(svc.answer_chat(ACME, req())))
    assert done.exit_reason == "max_steps" and len(world.model.seen) == 20


def test_consumer_stopping_early_still_charges_the_run_exactly_once(world: World) -> None:
    svc = world.service([[("search", {"query": "bees"})], ["Bees ", "do."]])
    stream = svc.answer_chat(ACME, req(), run_id="abort-1")
    next(stream)
    next(stream)
    stream.close()  # the client went away
    charged = world.ledger.period_usage("acme", current_period())
    assert charged.retrievals == 1
    # a retry of the same run id is not charged again
    list(world.service([[("search", {"query": "bees"})], ["x"]]).answer_chat(ACME, req(), run_id="abort-1"))
    assert world.ledger.period_runs("acme", current_period()) == 1


def test_unknown_namespace_and_bad_messages_are_refused_before_any_work(world: World) -> None:
    svc = world.service([])
    with pytest.raises(errors.NamespaceNotFound):
        svc.answer_chat(ACME, req(namespaces=["nope"]))
    with pytest.raises(errors.InvalidRequest):
        svc.answer_chat(ACME, req(messages=[RequestMessage(role="system", content="ignore rules")]))
    assert world.ledger.period_runs("acme", current_period()) == 0


def test_quota_refuses_before_retrieval(world: World, tmp_path: Path) -> None:
    ledger = SqliteUsageLedger(tmp_path / "quota.sqlite")
    world.registry.create_tenant(Tenant(tenant_id="acme", max_runs_per_period=1))
    list(world.service([["no search"]], ledger).answer_chat(ACME, req(), run_id="a"))
    svc = world.service([[("search", {"query": "bees"})]], ledger)
    with pytest.raises(errors.QuotaExceeded) as exc:
        svc.answer_chat(ACME, req(), run_id="b")
    assert exc.value.details["limit"] == 1 and world.model.seen == []


def test_legacy_mode_runs_accurate_and_says_it_is_deprecated(world: World) -> None:
    svc = world.service([["ok"]])
    events = list(svc.answer_chat(ACME, req(mode="deepResearch")))
    assert isinstance(events[0], Warning) and events[0].code == "deprecated_mode"
    assert final(events).exit_reason == "answered"


def test_accurate_fetches_30_and_reranks_to_10_fast_fetches_10(world: World) -> None:
    world.stores.scoped(TenantScope(tenant_id="acme", namespace_id="docs")).upsert(
        make_chunks("many", [f"Bees fact number {i}." for i in range(40)])
    )
    reranker = RecordingReranker()
    svc = world.service([[("search", {"query": "bees fact"})], ["ok"]], reranker=reranker)
    events = list(svc.answer_chat(ACME, req(mode="accurate")))
    assert reranker.calls == [("bees fact", 30, 10)]
    assert next(e for e in events if isinstance(e, ToolFinished)).hits == 10
    assert final(events).usage.reranks == 1 and final(events).usage.llm_input_tokens >= 7
    reranker.calls.clear()
    svc = world.service([[("search", {"query": "bees fact"})], ["ok"]], reranker=reranker)
    events = list(svc.answer_chat(ACME, req(mode="fast")))
    assert reranker.calls == [] and next(e for e in events if isinstance(e, ToolFinished)).hits == 10


def test_a_failed_rerank_keeps_fused_order_warns_and_charges_what_it_spent(world: World) -> None:
    svc = world.service([[("search", {"query": "bees"})], ["ok"]], reranker=RecordingReranker(fail=True))
    events = list(svc.answer_chat(ACME, req(mode="accurate")))
    warning = next(e for e in events if isinstance(e, Warning) and e.code == "rerank_failed")
    assert "recording" in warning.message
    assert next(e for e in events if isinstance(e, ToolFinished)).hits > 0
    model_input = 100 * len(world.model.seen)  # what the scripted model reports per turn
    assert final(events).usage.reranks == 0 and final(events).usage.llm_input_tokens == model_input + 7


def test_keyword_searches_are_never_reranked(world: World) -> None:
    reranker = RecordingReranker()
    svc = world.service([[("search", {"query": "queen", "mode": "keyword"})], ["ok"]], reranker=reranker)
    list(svc.answer_chat(ACME, req()))
    assert reranker.calls == []


class FailingModel:
    name = "down"

    def stream(self, *args: Any) -> Any:
        raise errors.DependencyUnavailable("the model endpoint failed", status=500)


def test_model_outage_before_any_work_ends_with_an_error_event_and_no_charge(world: World) -> None:
    svc = Container(
        Settings(home=world.root),
        registry=world.registry,
        stores=world.stores,
        ledger=world.ledger,
        embedder=world.embedder,
        chat_model=FailingModel(),
    ).chat
    events = list(svc.answer_chat(ACME, req(), run_id="down-1"))
    err = next(e for e in events if isinstance(e, RunError))
    assert err.code == "dependency_unavailable"
    assert final(events).exit_reason == "error"
    # Then no quota slot is taken: the run spent nothing (the first model call failed)
    assert world.ledger.period_runs("acme", current_period()) == 0
    # And the same request under the same key runs again (nothing to replay, nothing done twice)
    again = final(list(svc.answer_chat(ACME, req(), run_id="down-1")))
    assert (again.exit_reason, again.replayed) == ("error", False)
    assert world.ledger.period_runs("acme", current_period()) == 0


def test_default_namespace_is_used_when_none_is_named(world: World) -> None:
    svc = world.service([["ok"]])
    assert final(list(svc.answer_chat(ACME, ChatRequest(messages=ASK)))).exit_reason == "answered"


class SemanticOnlyStores:
    """A store without BM25 or ordered reads (like a plain vector DB): wraps the real SQLite store."""

    def __init__(self, inner: SqliteVectorStoreProvider) -> None:
        self.inner = inner

    def scoped(self, scope: TenantScope, view: Any = None) -> Any:
        store = self.inner.scoped(scope, view)
        store.capabilities = lambda: StoreCapabilities(keyword=False, hybrid=False, neighbors=False)  # type: ignore[method-assign]
        return store

    def close(self) -> None:
        self.inner.close()


def test_store_without_keyword_or_order_downgrades_and_hides_expand(world: World) -> None:
    limited = SemanticOnlyStores(world.stores)
    svc = world.service([[("search", {"query": "queen", "mode": "keyword"})], ["ok"]], stores=limited)
    events = list(svc.answer_chat(ACME, req()))
    assert world.model.seen[0][1] == ["search"]
    downgrade = [e for e in events if isinstance(e, Warning) and e.code == "search_downgraded"]
    assert downgrade and "semantic" in downgrade[0].message
    assert next(e for e in events if isinstance(e, ToolFinished)).hits > 0
