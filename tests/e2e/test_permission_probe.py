"""Per-user permissions as a probe (issue 29), in the style of the tenant-isolation fuzz.

Users with different groups (and hostile ones: a user named like a group, a user whose "groups" are
other users' reader terms) run every route and every agent over one tenant's documents with
different readers, while a hostile model asks for the others' documents by id, by text, through tool
filters that try to widen, by ``expand`` on guessed ids and by citing ids it never saw. Then:

- no chunk of a document the user may not read appears in any response or event (hits, sources,
  citations, tool results, queries) nor in anything the model was shown — its marker (a token only
  its chunks, filename and metadata carry) is nowhere;
- counts and errors are the same for "exists but unreadable" and "does not exist": a search with
  k above the chunk count returns exactly the readable chunks, a listing exactly the readable
  documents, a document view of an unreadable document is the 404 of a missing one.

Service level (the principal carries the user as the authorizer fills it), on the embedded store and
on a real OpenSearch node.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline import errors
from ragline.adapters.opensearch.store import OpenSearchVectorStoreProvider, build_client
from ragline.agents.events import ChatResponse, RunEvent, Sources
from ragline.agents.hosting_search import HostingLimits
from ragline.agents.planners import LlmPlanner
from ragline.cli.mcp import read_namespace, run_tool
from ragline.config import Settings
from ragline.domain.access import UserContext
from ragline.domain.api import AddText, ChatRequest, DocumentLabels, HostingSearchRequest, SearchRequest
from ragline.domain.filters import ReadView, parse_filter
from ragline.services.chat import ChatService
from ragline.services.hosting_search import HostingSearchService
from ragline.wiring import Container
from tests.conftest import examples_at_scale
from tests.support.acl_world import (
    DOCS,
    NAMESPACES,
    USERS,
    WIDENING_FILTERS,
    HostileModel,
    build,
    hidden_from,
    hostile_calls,
    leaks,
    principal,
    readable,
)
from tests.support.fakes import BowEmbedder
from tests.support.vectors import DIM

pytestmark = pytest.mark.e2e
QUESTION = "What are the hr salaries, the exec plan and alice's payroll notes?"
AGENTS = ("agentic", "deep_search", "chain_of_rag", "auto")


@pytest.fixture(scope="module", params=["sqlite", pytest.param("opensearch", marks=pytest.mark.opensearch)])
def c(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Container]:
    """The world on the embedded store and on a real OpenSearch node (a fresh index)."""
    parts: dict[str, Any] = {}
    if request.param == "opensearch":
        client = build_client(Settings(opensearch_url=request.getfixturevalue("opensearch_url")))
        parts["stores"] = OpenSearchVectorStoreProvider(
            client, index=f"test-acl-{uuid.uuid4().hex[:12]}", dimension=DIM
        )
    container = Container(
        Settings(home=tmp_path_factory.mktemp("acl")),
        embedder=BowEmbedder(),
        tokenizer=BowEmbedder(),
        chat_model=HostileModel(hostile_calls()),
        **parts,
    )
    build(container)
    yield container
    if "stores" in parts:
        parts["stores"].drop()
    container.close()


def chat(c: Container, user: UserContext | None, model: HostileModel, **body: Any) -> list[RunEvent]:
    service = ChatService(retrieval=c.retrieval, model=model, planner=model, metering=c.metering)
    request = ChatRequest.model_validate({"messages": [{"role": "user", "content": QUESTION}], **body})
    return list(service.answer_chat(principal(user), request))


def assert_sealed(
    user: UserContext | None, route: str, payload: str, model: HostileModel | None = None
) -> None:
    assert leaks(user, payload) == [], (route, payload[:2000])
    if model is not None:
        assert leaks(user, "\n".join(model.shown)) == [], (route, "the model was shown it")


def doc_ids(views: Sequence[Any]) -> set[tuple[str, str]]:
    return {(v.namespace, v.document_id) for v in views}


def hidden_ids(user: UserContext | None) -> set[tuple[str, str]]:
    return {(d.namespace, d.document_id) for d in hidden_from(user)}


# -- every route, every user ---------------------------------------------------------------------


@pytest.mark.parametrize("who", sorted(USERS))
@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
def test_search_returns_exactly_the_readable_chunks(c: Container, who: str, mode: str) -> None:
    user = USERS[who]
    for ns in NAMESPACES:
        for rerank in (False, True):
            request = SearchRequest(query="kettle payroll salary plan notes", mode=mode, k=100, rerank=rerank)
            response = c.search.search(principal(user), ns, request)
            assert_sealed(user, f"search {ns} {mode}", response.model_dump_json())
            got = {(h.document_id, h.sequence_number) for h in response.hits}
            want = {
                (d.document_id, i) for d in DOCS if d.namespace == ns and readable(user, d) for i in range(3)
            }
            # every chunk matches the query's words: each mode finds every readable one, and only those
            assert got == want, (who, ns, mode)


@pytest.mark.parametrize("who", sorted(USERS))
@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("mode", ["accurate", "fast"])
def test_no_agent_leaks_to_a_hostile_model(c: Container, who: str, agent: str, mode: str) -> None:
    user = USERS[who]
    for namespaces in (list(NAMESPACES), "auto"):
        model = HostileModel(hostile_calls())
        events = chat(c, user, model, agent=agent, mode=mode, namespaces=namespaces)
        payload = "\n".join(e.model_dump_json() for e in events)
        assert_sealed(user, f"chat {agent} {mode} {namespaces}", payload, model)
        for e in events:
            if isinstance(e, Sources):
                assert not doc_ids(e.chunks) & hidden_ids(user)
        # the same run as one body (``stream: false``) is built from the same events
        collected = ChatResponse.collect(iter(events))
        assert_sealed(user, f"chat {agent} json", collected.model_dump_json())


@pytest.mark.parametrize("who", sorted(USERS))
def test_hosting_search_with_a_hostile_planner_finds_only_readable_chunks(c: Container, who: str) -> None:
    user = USERS[who]
    model = HostileModel(())
    hostile = HostingSearchService(
        retrieval=c.retrieval, planner=LlmPlanner(model), metering=c.metering, limits=HostingLimits()
    )
    for service in (hostile, c.hosting_search):
        for top_k in (1, 100):
            request = HostingSearchRequest.model_validate(
                {"query": QUESTION, "namespaces": list(NAMESPACES), "topK": top_k, "maxEvals": 3}
            )
            response = service.search(principal(user), request)
            assert_sealed(user, "hosting search", response.model_dump_json(), model)
            assert not doc_ids(response.chunks) & hidden_ids(user)


@pytest.mark.parametrize("who", sorted(USERS))
def test_documents_show_only_what_the_user_may_read_and_hide_the_rest_as_missing(
    c: Container, who: str
) -> None:
    user = USERS[who]
    p = principal(user)
    for ns in NAMESPACES:
        listed = {v.document_id for v in c.document_service.list(p, ns).documents}
        assert listed == {d.document_id for d in DOCS if d.namespace == ns and readable(user, d)}
        assert read_namespace(c, p, ns)["documentCount"] == len(listed)
    missing = error_of(lambda: c.document_service.get(p, "docs", "no-such-document"))
    generation_before = c.documents.get("acme", "docs", "hr-salaries").generation  # type: ignore[union-attr]
    relabel = DocumentLabels.model_validate({"access": {"users": [], "groups": []}})
    for doc in DOCS:
        if doc.namespace != "docs":
            continue
        if readable(user, doc):
            view = c.document_service.get(p, "docs", doc.document_id)
            assert view.document_id == doc.document_id
            # an end user sees what a document says, never who else may read it
            assert (view.access is None) == (user is not None)
            continue
        for attempt in (
            lambda doc=doc: c.document_service.get(p, "docs", doc.document_id),
            lambda doc=doc: c.document_service.delete(p, "docs", doc.document_id),
            lambda doc=doc: c.document_service.relabel(p, "docs", doc.document_id, relabel),
            lambda doc=doc: c.document_service.add_text(p, "docs", overwrite(doc.document_id)),
        ):
            got = error_of(attempt)
            assert got == (
                missing[0],
                missing[1].replace("no-such-document", doc.document_id),
                {"document_id": doc.document_id},
            ), (who, doc.document_id)
    stored = c.documents.get("acme", "docs", "hr-salaries")  # a refused delete, re-label or overwrite
    assert stored is not None and stored.readers == ("g:hr",) and stored.status == "ready"  # changed nothing
    assert stored.generation == generation_before


def overwrite(document_id: str) -> AddText:
    """A text document that would replace ``document_id`` and open it to everyone."""
    return AddText.model_validate(
        {"documentId": document_id, "filename": "x.txt", "text": "overwritten", "access": {"users": []}}
    )


def error_of(attempt: Any) -> tuple[str, str, dict[str, Any]]:
    with pytest.raises(errors.RaglineError) as caught:
        attempt()
    return caught.value.code, caught.value.message, dict(caught.value.details)


@pytest.mark.parametrize("who", sorted(USERS))
def test_mcp_tools_are_sealed(c: Container, who: str) -> None:
    user = USERS[who]
    p = principal(user)
    results = [
        run_tool(c, p, "search", {"namespace": "docs", "query": "payroll salary", "k": 100}),
        run_tool(c, p, "search", {"namespace": "docs", "query": "payroll", "filter": WIDENING_FILTERS[0]}),
        run_tool(c, p, "hosting_search", {"query": QUESTION, "namespaces": list(NAMESPACES)}),
        run_tool(c, p, "ask", {"question": QUESTION, "namespaces": list(NAMESPACES), "agent": "agentic"}),
    ]
    for result in results:
        assert_sealed(user, "mcp", result.model_dump_json())


def test_expand_on_an_unreadable_document_answers_as_on_a_missing_one(c: Container) -> None:
    user = USERS["carol"]
    model = HostileModel(
        [
            ("search", {"query": "open handbook kettle"}),
            ("expand", {"documentId": "hr-salaries", "sequenceNumber": 1}),
            ("expand", {"documentId": "no-such-document", "sequenceNumber": 1}),
        ]
    )
    chat(c, user, model, agent="agentic", mode="fast", namespaces=["docs"])
    replies = [s for s in model.shown if "expand only works" in s]
    assert len(replies) == 2 and replies[0] == replies[1]


# -- generated: users, filters, hostile scripts ---------------------------------------------------

USER_NAMES = st.sampled_from(sorted(USERS))
GENERATED_USERS = st.sampled_from(list(USERS.values())) | st.builds(
    UserContext.of,
    st.sampled_from(["alice", "bob", "carol", "hr", "g:hr", "u:alice", "*", "zed"]),
    st.lists(st.sampled_from(["hr", "exec", "eng", "*", "u:alice", "g:hr", "sales"]), max_size=3),
)
"""The probe's users and made-up ones whose ids and groups look like other principals' reader terms."""
FILTERS = st.none() | st.sampled_from(WIDENING_FILTERS)


@settings(
    max_examples=examples_at_scale(),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(user=GENERATED_USERS, where=FILTERS, ns=st.sampled_from(NAMESPACES), k=st.sampled_from([1, 2, 5, 100]))
def test_a_filtered_search_is_exactly_the_brute_force_answer(
    c: Container, user: UserContext | None, where: dict[str, Any] | None, ns: str, k: int
) -> None:
    """No filter widens the user's reach, and counts equal what the user may read and the filter
    admits (semantic: every admitted chunk ranks, so ``min(k, admitted)`` come back)."""
    view = ReadView(parse_filter(where) if where else None, user.reader_terms() if user else None)
    admitted = {
        (d.document_id, ch.sequence_number)
        for d in DOCS
        if d.namespace == ns
        for ch in d.chunks()
        if view.admits(ch.metadata.attributes, ch.metadata.readers)
    }
    request = SearchRequest.model_validate(
        {"query": "kettle payroll", "mode": "semantic", "k": k, "filter": where}
    )
    response = c.search.search(principal(user), ns, request)
    got = {(h.document_id, h.sequence_number) for h in response.hits}
    assert got <= admitted and len(got) == min(k, len(admitted)), (user, where, ns, k)
    assert_sealed(user, "filtered search", response.model_dump_json())


@settings(
    max_examples=max(25, examples_at_scale() // 6),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    who=USER_NAMES,
    script=st.lists(st.sampled_from(hostile_calls()), min_size=1, max_size=9),
    agent=st.sampled_from(AGENTS),
    where=FILTERS,
)
def test_generated_hostile_runs_leak_nothing(
    c: Container, who: str, script: list[tuple[str, dict[str, Any]]], agent: str, where: dict[str, Any] | None
) -> None:
    user = USERS[who]
    model = HostileModel(script, batch=2)
    events = chat(c, user, model, agent=agent, mode="fast", namespaces=list(NAMESPACES), filter=where)
    assert_sealed(user, f"generated chat {agent}", "\n".join(e.model_dump_json() for e in events), model)


def test_the_world_has_something_to_hide() -> None:
    """The probe is not vacuous: every user but the service misses some document, and reads some."""
    assert json.dumps(sorted(USERS)) and hidden_from(USERS["service"]) == []
    for who, user in USERS.items():
        if user is not None:
            assert hidden_from(user) and len(hidden_from(user)) < len(DOCS), who
