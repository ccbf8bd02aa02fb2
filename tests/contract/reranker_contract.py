"""The Reranker contract: every reranker subclasses :class:`RerankerContract` with one fixture.

Given a ``reranker`` (a :class:`~ragline.ports.Reranker` ready to rank :data:`HITS` for :data:`QUERY`),
every test here must pass unchanged.
"""

from __future__ import annotations

import pytest

from ragline.domain.models import Chunk, RunUsage, ScoreBreakdown, SearchHit
from ragline.ports import Reranker

QUERY = "how do bees make honey"
TEXTS = [
    "Solar panels convert sunlight into electricity.",
    "Honey bees turn nectar into honey in the hive.",
    "Iron rusts when exposed to oxygen and water.",
    "A bee colony has one queen and many workers.",
    "Bees fan their wings to evaporate water from nectar.",
]


def make_hits(texts: list[str] = TEXTS) -> list[SearchHit]:
    """Hits in fused order: descending score, ids ``d{i}#0``."""
    return [
        SearchHit(
            chunk=Chunk(document_id=f"d{i}", sequence_number=0, text=t),
            score=1.0 / (61 + i),
            breakdown=ScoreBreakdown(semantic_rank=i + 1, fused_score=1.0 / (61 + i)),
        )
        for i, t in enumerate(texts)
    ]


HITS = make_hits()


class RerankerContract:
    """Subclasses provide the ``reranker`` fixture."""

    @pytest.fixture
    def reranker(self) -> Reranker:
        raise NotImplementedError

    def test_has_a_name(self, reranker: Reranker) -> None:
        assert isinstance(reranker.name, str)
        assert reranker.name

    @pytest.mark.parametrize("top_n", [1, 3, 5, 50])
    def test_given_hits_when_reranked_then_at_most_top_n_distinct_input_hits(
        self, reranker: Reranker, top_n: int
    ) -> None:
        out = reranker.rerank(QUERY, HITS, top_n).hits

        ids = [h.chunk.id for h in out]
        assert len(ids) == min(top_n, len(HITS))
        assert len(set(ids)) == len(ids)
        assert set(ids) <= {h.chunk.id for h in HITS}

    def test_given_all_hits_kept_then_output_is_a_permutation_of_the_input(self, reranker: Reranker) -> None:
        out = reranker.rerank(QUERY, HITS, len(HITS)).hits

        assert sorted(h.chunk.id for h in out) == sorted(h.chunk.id for h in HITS)

    def test_when_reranked_then_rerank_score_is_set_and_never_increases(self, reranker: Reranker) -> None:
        out = reranker.rerank(QUERY, HITS, len(HITS)).hits

        scores = [h.breakdown.rerank_score for h in out]
        assert all(s is not None for s in scores)
        assert scores == sorted(scores, key=lambda s: -(s or 0.0))

    def test_when_reranked_then_the_rest_of_each_hit_is_unchanged(self, reranker: Reranker) -> None:
        before = {h.chunk.id: h for h in HITS}

        for hit in reranker.rerank(QUERY, HITS, len(HITS)).hits:
            original = before[hit.chunk.id]
            assert hit.chunk == original.chunk
            assert hit.breakdown.model_copy(update={"rerank_score": None}) == original.breakdown

    def test_when_reranked_then_the_input_is_not_modified(self, reranker: Reranker) -> None:
        snapshot = [h.model_copy(deep=True) for h in HITS]

        reranker.rerank(QUERY, HITS, 3)

        assert snapshot == HITS

    def test_given_no_hits_then_no_hits(self, reranker: Reranker) -> None:
        assert reranker.rerank(QUERY, [], 5).hits == []

    def test_when_reranked_then_the_cost_is_reported(self, reranker: Reranker) -> None:
        out = reranker.rerank(QUERY, HITS, 3)

        assert isinstance(out.usage, RunUsage)
        assert out.usage.retrievals == 0
        assert out.usage.reranks in (0, 1)
