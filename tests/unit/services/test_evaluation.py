"""``ragline eval``'s ``accurate`` mode scores what chat's default mode shows the model: hybrid
candidates, reranked by the deployment's reranker, cut to the chunks one search shows."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.config import Settings
from ragline.domain.models import SearchHit, TenantScope
from ragline.domain.retrieval import Reranked, with_rerank_scores
from ragline.services.evaluation import BeirDataset
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder

pytestmark = pytest.mark.unit

SCOPE = TenantScope(tenant_id="eval", namespace_id="set")
CORPUS = {f"d{i}": ("", f"bees make honey in hive number {i}") for i in range(40)}
QUERY = "bees honey hive"


class PickingReranker:
    """Puts one chosen document first, the rest in fused order (a reranker the test can predict)."""

    name = "picking"

    def __init__(self) -> None:
        self.pick = ""
        self.calls: list[tuple[int, int]] = []

    def rerank(self, query: str, hits: Sequence[SearchHit], top_n: int) -> Reranked:
        self.calls.append((len(hits), top_n))
        ordered = sorted(hits, key=lambda h: h.chunk.document_id != self.pick)
        return Reranked(with_rerank_scores(ordered, [float(-i) for i in range(len(ordered))], top_n))


@pytest.fixture
def world(tmp_path: Path) -> Iterator[tuple[Container, PickingReranker]]:
    stores = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=BowEmbedder().dimension)
    reranker = PickingReranker()
    c = Container(
        Settings(home=tmp_path, chunks_per_search=5),
        stores=stores,
        embedder=BowEmbedder(),
        tokenizer=BowEmbedder(),
        reranker=reranker,
    )
    c.evaluation.index(SCOPE, BeirDataset(CORPUS, {}, {}))
    yield c, reranker
    stores.close()


def test_accurate_reranks_the_hybrid_candidates_and_keeps_what_a_search_shows(
    world: tuple[Container, PickingReranker],
) -> None:
    c, reranker = world
    # Given a relevant document that hybrid search ranks 20th of 40 near-identical ones
    fused = c.retrieval.bind([SCOPE]).search(QUERY, mode="hybrid", candidates=40, keep=40).hits
    reranker.pick = fused[19].hit.chunk.document_id
    data = BeirDataset(CORPUS, {"q": QUERY}, {"q": {reranker.pick: 1}})
    assert c.evaluation.score(SCOPE, data, "hybrid").mrr_at_10 == 0.0
    # When scored as chat's accurate mode (chunks_per_search 5: at least 30 candidates, 5 kept)
    accurate = c.evaluation.score(SCOPE, data, "accurate")
    # Then the reranker chose among the 30 candidates, put it first, and only 5 were scored
    assert reranker.calls == [(30, 5)]
    assert accurate.mrr_at_10 == 1.0 and accurate.recall_at_100 == 1.0
    # And a relevant document outside the 30 candidates never reaches the reranker (a search of 30
    # is not the first 30 of 40: adaptive fusion keeps each leg's top 15 of the 30)
    retriever = c.retrieval.bind([SCOPE])
    thirty = {
        h.hit.chunk.document_id for h in retriever.search(QUERY, mode="hybrid", candidates=30, keep=30).hits
    }
    reranker.pick = next(h.hit.chunk.document_id for h in fused if h.hit.chunk.document_id not in thirty)
    beyond = BeirDataset(CORPUS, {"q": QUERY}, {"q": {reranker.pick: 1}})
    assert c.evaluation.score(SCOPE, beyond, "accurate").recall_at_100 == 0.0
    assert c.evaluation.score(SCOPE, beyond, "hybrid").recall_at_100 == 1.0
