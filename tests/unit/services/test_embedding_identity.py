"""A namespace belongs to the embedder that first filled it: vectors of another model — even one of the
same dimension, which no store can tell apart — are refused on ingest and on every read path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.agents.events import ChatResponse
from ragline.config import Settings
from ragline.domain.api import ChatRequest, HostingSearchRequest, SearchRequest
from ragline.domain.billing import current_period
from ragline.domain.models import TenantScope
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder, ScriptedChatModel
from tests.support.vectors import DIM

pytestmark = pytest.mark.unit
ACME = Principal.operator("acme")
DOCS = TenantScope(tenant_id="acme", namespace_id="docs")
ASK = [{"role": "user", "content": "What do bees do?"}]


class OtherBow(BowEmbedder):
    """Another model with the same dimension: its vectors fit every store, but mean something else."""

    model_id = "bow-other"


class Home:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.stores = SqliteVectorStoreProvider(root / "s.sqlite", dimension=DIM)

    def container(self, embedder: BowEmbedder) -> Container:
        return Container(
            Settings(home=self.root),
            stores=self.stores,
            embedder=embedder,
            tokenizer=embedder,
            chat_model=ScriptedChatModel([["Bees pollinate."]]),
            reranker=None,
        )


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    h = Home(tmp_path)
    first = h.container(BowEmbedder())
    first.registry.create_namespace(new_namespace("acme", "docs", default=True))
    first.ingest.ingest(DOCS, filename="bees.txt", data=b"Honey bees pollinate flowering plants.")
    yield h
    h.stores.close()


def test_the_first_ingest_claims_the_namespace_for_its_embedder(home: Home) -> None:
    settings = home.container(BowEmbedder()).registry.get_namespace("acme", "docs").settings
    assert (settings.embedding_model, settings.embedding_dimension) == ("bow-test", DIM)


def test_another_model_of_the_same_dimension_may_not_ingest_into_it(home: Home) -> None:
    other = home.container(OtherBow())
    with pytest.raises(errors.EmbeddingMismatch) as refused:
        other.ingest.ingest(DOCS, filename="wasps.txt", data=b"Wasps hunt other insects.")
    details = refused.value.details
    assert (details["stored"], details["configured"]) == ("bow-test", "bow-other")
    assert home.stores.scoped(DOCS).count("wasps.txt") == 0


def test_another_model_may_not_search_it_and_is_not_charged(home: Home) -> None:
    other = home.container(OtherBow())
    with pytest.raises(errors.EmbeddingMismatch):
        other.search.search(ACME, "docs", SearchRequest(query="bees"))
    with pytest.raises(errors.EmbeddingMismatch):
        other.hosting_search.search(ACME, HostingSearchRequest(query="bees", namespaces=["docs"]))
    with pytest.raises(errors.EmbeddingMismatch):
        other.chat.answer_chat(ACME, ChatRequest.model_validate({"messages": ASK, "namespaces": ["docs"]}))
    assert other.ledger.period_runs("acme", current_period()) == 0
    # while the embedder that filled it still finds what it wrote
    assert home.container(BowEmbedder()).search.search(ACME, "docs", SearchRequest(query="bees")).hits


def test_a_routed_chat_leaves_a_namespace_of_another_model_out_and_says_so(home: Home) -> None:
    other = home.container(OtherBow())
    events = other.chat.answer_chat(ACME, ChatRequest.model_validate({"messages": ASK}))
    body = ChatResponse.collect(events)
    assert body.collections is not None and body.collections.namespaces == []
    assert [w.code for w in body.warnings][:1] == ["namespace_skipped"]
    assert body.exit_reason == "no_namespaces" and body.usage.retrievals == 0
