"""The request's filter and end user reach every store a run reads, out of band (issue 29).

A spying provider records the view each store is bound to: search, chat (every agent's tools,
``expand``) and hosting search bind the view built from the request's ``filter`` and the principal's
user, never one a model chose; an agent's tool filter travels only in its query (``filters.where``),
inside that view; a replay under another user or filter is another request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from ragline import errors
from ragline.adapters.embedded.documents import SqliteDocumentRegistry
from ragline.agents.events import RunFinished, ToolFinished
from ragline.client import RaglineClient
from ragline.config import Settings
from ragline.domain.access import UserContext
from ragline.domain.api import ChatRequest, HostingSearchRequest, SearchRequest, Usage
from ragline.domain.billing import current_period
from ragline.domain.filters import AllOf, Compare, ReadView, parse_filter
from ragline.domain.models import SearchQuery, TenantScope
from ragline.services.chat import ChatService
from ragline.services.read_views import RequestAccess
from ragline.services.replays import opened, sealed
from ragline.wiring import Container
from tests.support.acl_world import HostileModel, build, principal
from tests.support.clock import ManualClock
from tests.support.fakes import BowEmbedder

pytestmark = pytest.mark.unit
BOB = UserContext.of("bob", ["hr"])
TEAM_HR = {"equals": {"key": "team", "value": "hr"}}
YEAR = {"greaterThan": {"key": "year", "value": 2023}}
T0 = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)


class SpyingStores:
    """The real provider, recording each ``scoped`` call's view and each query a store runs."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.views: list[tuple[str, ReadView | None]] = []
        self.queries: list[SearchQuery] = []
        self.searched: list[tuple[str, SearchQuery]] = []
        """Each query with the namespace of the store that ran it."""

    def scoped(self, scope: TenantScope, view: ReadView | None = None) -> Any:
        self.views.append((scope.namespace_id, view))
        store = self.inner.scoped(scope, view)
        search = store.search

        def spied(query: SearchQuery) -> Any:
            self.queries.append(query)
            self.searched.append((scope.namespace_id, query))
            return search(query)

        store.search = spied
        return store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Container, SpyingStores]]:
    c = Container(Settings(home=tmp_path), embedder=BowEmbedder(), tokenizer=BowEmbedder())
    build(c)
    spy = SpyingStores(c.stores)
    c.__dict__["stores"] = spy
    c.__dict__.pop("retrieval", None)
    yield c, spy


def bound(spy: SpyingStores) -> set[tuple[str, ReadView | None]]:
    return set(spy.views)


def test_search_binds_the_requests_filter_and_user(world: tuple[Container, SpyingStores]) -> None:
    c, spy = world
    request = SearchRequest.model_validate({"query": "payroll", "filter": TEAM_HR})
    c.search.search(principal(BOB), "docs", request)
    assert bound(spy) == {("docs", ReadView(parse_filter(TEAM_HR), BOB.reader_terms()))}


def test_a_key_without_a_user_binds_no_readers(world: tuple[Container, SpyingStores]) -> None:
    c, spy = world
    c.search.search(principal(None), "docs", SearchRequest(query="payroll"))
    assert bound(spy) == {("docs", ReadView(None, None))}


def test_hosting_search_binds_every_retriever_to_the_view(world: tuple[Container, SpyingStores]) -> None:
    c, spy = world
    request = HostingSearchRequest.model_validate(
        {"query": "payroll salary", "namespaces": ["docs", "more"], "filter": YEAR}
    )
    c.hosting_search.search(principal(BOB), request)
    view = ReadView(parse_filter(YEAR), BOB.reader_terms())
    assert spy.views and bound(spy) == {("docs", view), ("more", view)}


@pytest.mark.parametrize("agent", ["agentic", "deep_search", "chain_of_rag", "auto"])
def test_every_agent_reads_through_the_view_and_its_tool_filter_only_narrows(
    world: tuple[Container, SpyingStores], agent: str
) -> None:
    c, spy = world
    model = HostileModel(
        [
            ("search", {"query": "payroll", "filter": {"not": TEAM_HR}}),
            ("search", {"query": "payroll"}),
        ],
        batch=2,
    )
    service = ChatService(retrieval=c.retrieval, model=model, planner=model, metering=c.metering)
    request = ChatRequest.model_validate(
        {"messages": [{"role": "user", "content": "payroll?"}], "namespaces": ["docs"], "agent": agent,
         "filter": YEAR}
    )  # fmt: skip
    list(service.answer_chat(principal(BOB), request))
    assert bound(spy) == {("docs", ReadView(parse_filter(YEAR), BOB.reader_terms()))}
    if agent == "agentic":  # the planned agents run their own queries, without a tool filter
        wheres = [q.filters.where for q in spy.queries]
        assert wheres == [parse_filter({"not": TEAM_HR}), None]


PUBLISHED = {"equals": {"key": "published", "value": "2024-03-01"}}


def test_a_tool_filter_is_typed_by_each_namespaces_own_schema(world: tuple[Container, SpyingStores]) -> None:
    """Given a key that is a date in one namespace and a string in the other, an agent's tool filter
    reaches each store typed by that store's own schema (not the last namespace's for all)."""
    c, spy = world
    c.registry.extend_metadata_schema("acme", "docs", {"published": "date"})
    c.registry.extend_metadata_schema("acme", "more", {"published": "string"})
    model = HostileModel([("search", {"query": "payroll", "filter": PUBLISHED})], batch=1)
    service = ChatService(retrieval=c.retrieval, model=model, planner=model, metering=c.metering)
    request = ChatRequest.model_validate(
        {"messages": [{"role": "user", "content": "payroll?"}], "namespaces": ["docs", "more"]}
    )
    list(service.answer_chat(principal(BOB), request))
    by_store = {namespace: q.filters.where for namespace, q in spy.searched}
    assert by_store == {
        "docs": Compare("equals", "published", "2024-03-01T00:00:00Z"),
        "more": Compare("equals", "published", "2024-03-01"),
    }


def test_a_bad_tool_filter_is_a_tool_error_the_model_can_fix(world: tuple[Container, SpyingStores]) -> None:
    c, spy = world
    model = HostileModel(
        [
            ("search", {"query": "payroll", "filter": {"orAll": []}}),
            ("search", {"query": "payroll", "filter": {"equals": {"key": "a=b", "value": 1}}}),
            ("search", {"query": "payroll", "filter": {"exists": {"key": "code"}}}),
        ],
        batch=3,
    )
    service = ChatService(retrieval=c.retrieval, model=model, planner=model, metering=c.metering)
    request = ChatRequest.model_validate(
        {"messages": [{"role": "user", "content": "payroll?"}], "namespaces": ["docs"], "mode": "fast"}
    )
    events = list(service.answer_chat(principal(BOB), request))
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [e.error for e in finished] == ["invalid_arguments", "invalid_arguments", None]
    assert isinstance(events[-1], RunFinished) and events[-1].exit_reason == "answered"
    assert [q.filters.where for q in spy.queries] == [parse_filter({"exists": {"key": "code"}})]


def test_a_replay_under_another_user_or_filter_is_another_request(
    world: tuple[Container, SpyingStores],
) -> None:
    c, _ = world
    request = SearchRequest.model_validate({"query": "payroll", "filter": TEAM_HR})
    c.search.search(principal(BOB), "docs", request, run_id="run-1")
    assert c.search.search(principal(BOB), "docs", request, run_id="run-1").replayed
    for p, body in (
        (principal(UserContext.of("carol")), request),
        (principal(None), request),
        (principal(BOB), SearchRequest.model_validate({"query": "payroll", "filter": YEAR})),
        (principal(BOB), SearchRequest(query="payroll")),
    ):
        with pytest.raises(errors.IdempotencyKeyReused):
            c.search.search(p, "docs", body, run_id="run-1")
    # a user named like another's group, in a group named like the other: other reader terms, another run
    c.search.search(principal(UserContext.of("hr", ["x"])), "docs", request, run_id="run-3")
    with pytest.raises(errors.IdempotencyKeyReused):
        c.search.search(principal(UserContext.of("x", ["hr"])), "docs", request, run_id="run-3")


@pytest.mark.parametrize(
    "bad",
    [
        {"bogus": {"key": "a", "value": 1}},
        {"equals": {"key": "a"}},
        {"in": {"key": "a", "value": []}},
        {"not": {"not": {"not": {"not": {"not": {"not": {"not": {"not": {"exists": {"key": "a"}}}}}}}}}},
        {"orAll": [{"equals": {"key": "k", "value": i}} for i in range(65)]},
        [],
    ],
)
def test_a_malformed_or_oversized_filter_is_refused_on_arrival(bad: Any) -> None:
    for model, body in (
        (SearchRequest, {"query": "q", "filter": bad}),
        (HostingSearchRequest, {"query": "q", "filter": bad}),
        (ChatRequest, {"messages": [{"role": "user", "content": "q"}], "filter": bad}),
    ):
        with pytest.raises(ValidationError):
            model.model_validate(body)


def test_request_access_reads_the_user_and_narrows_without_widening() -> None:
    access = RequestAccess.of(principal(BOB), YEAR)
    assert access.readers == BOB.reader_terms() and access.reach() == {"readers": sorted(BOB.reader_terms())}
    assert RequestAccess.of(principal(None), None) == RequestAccess() and RequestAccess().reach() == {}
    view = ReadView(access.where, access.readers)
    narrowed = view.narrowed(access.narrowing([])({"not": TEAM_HR}))
    assert narrowed.readers == view.readers and isinstance(narrowed.where, AllOf)
    assert narrowed.where.parts[0] == Compare("greaterThan", "year", 2023.0)


class Recorder:
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        body = {"mode": "hybrid", "hits": [], "warnings": [], "usage": {}, "runId": "r"}
        return httpx.Response(200, json=body)


def test_the_client_sends_the_filter_and_the_user_context() -> None:
    recorder = Recorder()
    transport = httpx.MockTransport(recorder)
    with RaglineClient("http://127.0.0.1:9", "rl_x", transport=transport) as rl:
        rl.search("docs", "q", filter=TEAM_HR)
        with rl.for_user("bob", ["hr", "eng"]) as bob:
            bob.search("docs", "q")
    first, second = recorder.requests
    assert json.loads(first.content)["filter"] == TEAM_HR and "ragline-user-id" not in first.headers
    assert second.headers["Ragline-User-Id"] == "bob" and second.headers["Ragline-User-Groups"] == "hr,eng"
    assert second.headers["Authorization"] == "Bearer rl_x" and "filter" not in json.loads(second.content)


def test_a_replay_masks_what_the_user_may_no_longer_read(tmp_path: Path) -> None:
    """Access is re-checked on replay, also when the record's time says nothing changed (a registry
    that moved the readers without a new version)."""
    clock = ManualClock(T0 - timedelta(minutes=1))
    documents = SqliteDocumentRegistry(tmp_path / "d.sqlite", clock=clock)
    claim = documents.claim("acme", "docs", "hr.txt", None)
    documents.complete(claim.record.model_copy(update={"status": "ready", "readers": ("g:hr",)}))
    final = RunFinished(run_id="r", exit_reason="answered", answer="Bands.", usage=Usage())
    text = sealed(final, [("docs", "hr.txt")], T0)

    as_bob = opened(documents, "acme", text, T0 + timedelta(minutes=1), BOB.reader_terms())
    assert as_bob is not None and not as_bob.masked
    carol = UserContext.of("carol").reader_terms()
    as_carol = opened(documents, "acme", text, T0 + timedelta(minutes=1), carol)
    assert as_carol is not None and as_carol.masked and as_carol.kept == frozenset()
    as_service = opened(documents, "acme", text, T0 + timedelta(minutes=1), None)
    assert as_service is not None and not as_service.masked


def test_a_filter_clashing_with_the_schema_is_a_409_before_any_work(
    world: tuple[Container, SpyingStores],
) -> None:
    c, spy = world
    c.registry.extend_metadata_schema("acme", "more", {"year": "number"})
    clash = {"equals": {"key": "year", "value": "2024"}}
    for run in (
        lambda: c.search.search(
            principal(BOB), "more", SearchRequest.model_validate({"query": "q", "filter": clash})
        ),
        lambda: c.hosting_search.search(
            principal(BOB),
            HostingSearchRequest.model_validate(
                {"query": "q", "namespaces": ["docs", "more"], "filter": clash}
            ),
        ),
        lambda: c.chat.answer_chat(
            principal(BOB),
            ChatRequest.model_validate(
                {"messages": [{"role": "user", "content": "q"}], "namespaces": "auto", "filter": clash}
            ),
        ),
    ):
        with pytest.raises(errors.MetadataTypeClash):
            run()
    assert spy.views == [] and c.ledger.period_runs("acme", current_period()) == 0
    # a date key's value is canonicalised by the namespace's own type before it reaches the store
    c.registry.extend_metadata_schema("acme", "docs", {"published": "date"})
    when = {"greaterThan": {"key": "published", "value": "2024-05-01"}}
    c.search.search(principal(None), "docs", SearchRequest.model_validate({"query": "q", "filter": when}))
    assert spy.views[-1][1] == ReadView(Compare("greaterThan", "published", "2024-05-01T00:00:00Z"), None)


def test_a_tool_filter_clashing_with_the_schema_is_a_tool_error(
    world: tuple[Container, SpyingStores],
) -> None:
    c, spy = world
    c.registry.extend_metadata_schema("acme", "docs", {"year": "number"})
    model = HostileModel(
        [("search", {"query": "payroll", "filter": {"equals": {"key": "year", "value": "x"}}})]
    )
    service = ChatService(retrieval=c.retrieval, model=model, planner=model, metering=c.metering)
    request = ChatRequest.model_validate(
        {"messages": [{"role": "user", "content": "payroll?"}], "namespaces": ["docs"], "mode": "fast"}
    )
    events = list(service.answer_chat(principal(BOB), request))
    assert [e.error for e in events if isinstance(e, ToolFinished)] == ["invalid_arguments"]
    assert spy.queries == [] and isinstance(events[-1], RunFinished)
