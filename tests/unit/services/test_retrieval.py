"""The one retrieval path: authorisation, merge across namespaces, rerank and its fallback, usage."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.domain.models import RunUsage, SearchHit, TenantScope
from ragline.domain.retrieval import Reranked
from ragline.ports import Reranker
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.services.retrieval import RetrievalService
from tests.contract.vector_store_contract import make_chunks
from tests.support.fakes import BowEmbedder
from tests.support.vectors import DIM

pytestmark = pytest.mark.unit
DOCS = TenantScope(tenant_id="acme", namespace_id="docs")
SUPPORT = TenantScope(tenant_id="acme", namespace_id="support")


class ScriptedReranker:
    """Reverses the candidates, or raises what it is given; records what it saw."""

    name = "scripted"

    def __init__(self, raises: Exception | None = None) -> None:
        self.raises = raises
        self.seen: list[int] = []

    def rerank(self, query: str, hits: Sequence[SearchHit], top_n: int) -> Reranked:
        self.seen.append(len(hits))
        if self.raises is not None:
            raise self.raises
        ranked = [
            h.model_copy(update={"breakdown": h.breakdown.model_copy(update={"rerank_score": -float(i)})})
            for i, h in enumerate(reversed(hits))
        ]
        return Reranked(hits=ranked[:top_n], usage=RunUsage(reranks=1, llm_input_tokens=5))


class World:
    def __init__(self, root: Path) -> None:
        self.registry = SqliteTenantRegistry(root / "t.sqlite")
        self.stores = SqliteVectorStoreProvider(root / "s.sqlite", dimension=DIM)
        self.registry.create_namespace(new_namespace("acme", "docs", default=True))
        self.registry.create_namespace(new_namespace("acme", "support"))
        self.registry.create_namespace(new_namespace("globex", "docs"))
        self.stores.scoped(DOCS).upsert(make_chunks("bees", ["Bees make honey.", "A hive has one queen."]))
        self.stores.scoped(SUPPORT).upsert(
            make_chunks("faq", ["Bees sting when scared.", "Bees make honey."])
        )

    def service(self, reranker: Reranker | None = None) -> RetrievalService:
        return RetrievalService(
            registry=self.registry, stores=self.stores, embedder=BowEmbedder(), reranker=reranker
        )


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    yield w
    w.stores.close()


def key(ns: Sequence[str] = (), scopes: str = "chat,search") -> Principal:
    return Principal(tenant_id="acme", scopes=frozenset(scopes.split(",")), namespaces=frozenset(ns))


# -- authorisation -------------------------------------------------------------------------------


def test_outside_the_allow_list_is_the_same_404_as_missing(world: World) -> None:
    """Issue 12 #5: one answer for "missing" and "not yours", so a key learns nothing."""
    svc = world.service()
    answers = set()
    for name in ("support", "no-such-namespace"):
        with pytest.raises(errors.NamespaceNotFound) as refused:
            svc.namespaces(key(["docs"]), [name], "search")
        answers.add((refused.value.code, refused.value.message.replace(name, "?")))
    assert len(answers) == 1
    with pytest.raises(errors.NamespaceNotFound):
        svc.namespaces(key(), ["no-such-namespace"], "search")
    with pytest.raises(errors.Forbidden):
        svc.namespaces(key(scopes="ingest"), ["docs"], "search")


def test_no_namespace_named_uses_the_default_the_key_may_read(world: World) -> None:
    svc = world.service()
    assert [n.namespace_id for n in svc.namespaces(key(), [], "chat")] == ["docs"]
    assert [n.namespace_id for n in svc.namespaces(key(["support"]), [], "chat")] == ["support"]
    assert [n.namespace_id for n in svc.namespaces(key(), ["docs", "docs"], "chat")] == ["docs"]


# -- search --------------------------------------------------------------------------------------


def test_several_namespaces_merge_by_score_and_drop_the_repeated_passage(world: World) -> None:
    usage = RunUsage()
    result = world.service().bind([DOCS, SUPPORT], usage).search("bees make honey", keep=10)
    texts = [h.hit.chunk.text for h in result.hits]
    assert texts.count("Bees make honey.") == 1
    assert {h.scope for h in result.hits} == {DOCS, SUPPORT}
    scores = [h.hit.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)
    assert usage.retrievals == 2 and usage.embedded_tokens > 0  # one store query per namespace


def test_rerank_reorders_reports_and_charges(world: World) -> None:
    reranker = ScriptedReranker()
    usage = RunUsage()
    retriever = world.service(reranker).bind([DOCS, SUPPORT], usage)
    fused = retriever.search("bees honey queen", candidates=10, keep=3)
    reranked = retriever.search("bees honey queen", candidates=10, keep=3, rerank=True)
    assert reranked.rerank is not None and not reranked.rerank.fell_back
    assert [h.key for h in reranked.hits] != [h.key for h in fused.hits]
    assert all(h.hit.breakdown.rerank_score is not None for h in reranked.hits)
    assert usage.reranks == 1 and usage.llm_input_tokens == 5


@pytest.mark.parametrize(
    "failure",
    [
        errors.RerankFailed("garbage", input_tokens=11, output_tokens=3),
        errors.DependencyUnavailable("model endpoint down"),
        errors.Throttled("slow down"),
    ],
)
def test_a_failed_rerank_falls_back_to_fused_order_and_says_so(world: World, failure: Exception) -> None:
    usage = RunUsage()
    retriever = world.service(ScriptedReranker(raises=failure)).bind([DOCS, SUPPORT], usage)
    fused = retriever.search("bees honey queen", keep=3)
    result = retriever.search("bees honey queen", keep=3, rerank=True)
    assert [h.key for h in result.hits] == [h.key for h in fused.hits]
    assert result.rerank is not None and result.rerank.fell_back
    assert [n.code for n in result.notices] == ["rerank_failed"]
    spent = (11, 3) if isinstance(failure, errors.RerankFailed) else (0, 0)
    assert (usage.llm_input_tokens, usage.llm_output_tokens) == spent and usage.reranks == 0


def test_a_reranker_bug_is_not_swallowed(world: World) -> None:
    retriever = world.service(ScriptedReranker(raises=ZeroDivisionError())).bind([DOCS])
    with pytest.raises(ZeroDivisionError):
        retriever.search("bees", rerank=True)


def test_keyword_is_never_reranked_and_a_missing_reranker_is_reported(world: World) -> None:
    reranker = ScriptedReranker()
    assert world.service(reranker).bind([DOCS]).search("queen", mode="keyword", rerank=True).rerank is None
    assert reranker.seen == []
    result = world.service(None).bind([DOCS]).search("queen", rerank=True)
    assert [n.code for n in result.notices] == ["rerank_unavailable"] and result.hits


def test_an_empty_query_is_refused(world: World) -> None:
    with pytest.raises(errors.InvalidRequest):
        world.service().bind([DOCS]).search("   ")


def test_neighbours_only_from_the_bound_scopes(world: World) -> None:
    retriever = world.service().bind([DOCS])
    assert [c.text for c in retriever.neighbors(DOCS, "bees", 0, before=0, after=1)] == [
        "Bees make honey.",
        "A hive has one queen.",
    ]
    with pytest.raises(errors.Forbidden):
        retriever.neighbors(SUPPORT, "faq", 0)


class KeywordlessStores:
    def __init__(self, inner: SqliteVectorStoreProvider) -> None:
        self.inner = inner

    def scoped(self, scope: TenantScope, view: Any = None) -> Any:
        from ragline.domain.models import StoreCapabilities

        store = self.inner.scoped(scope, view)
        store.capabilities = lambda: StoreCapabilities(keyword=False, hybrid=False)  # type: ignore[method-assign]
        return store

    def close(self) -> None:
        self.inner.close()


def test_a_store_without_keyword_search_downgrades_visibly(world: World) -> None:
    svc = RetrievalService(
        registry=world.registry, stores=KeywordlessStores(world.stores), embedder=BowEmbedder()
    )
    result = svc.bind([DOCS]).search("queen", mode="hybrid")
    assert result.mode == "semantic" and [n.code for n in result.notices] == ["search_downgraded"]
