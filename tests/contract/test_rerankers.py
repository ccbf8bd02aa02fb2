from __future__ import annotations

import pytest

from ragline.adapters.rerank import IdentityReranker, LlmListwiseReranker
from ragline.ports import Reranker
from tests.contract.reranker_contract import HITS, RerankerContract
from tests.support.fakes import ScriptedChatModel

pytestmark = pytest.mark.contract


class TestIdentityReranker(RerankerContract):
    @pytest.fixture
    def reranker(self) -> Reranker:
        return IdentityReranker()


class TestLlmListwiseReranker(RerankerContract):
    @pytest.fixture
    def reranker(self) -> Reranker:
        # A valid ranking for every call a test may make (one call per rerank of two or more hits).
        turns: list[list[str | tuple[str, str] | tuple[str, dict[str, object]]]] = [
            ['```json\n{"ranking": [2, 5, 4]}\n```'] for _ in range(4)
        ]
        return LlmListwiseReranker(ScriptedChatModel(turns))


def test_contract_hits_are_in_fused_order() -> None:
    assert [h.score for h in HITS] == sorted((h.score for h in HITS), reverse=True)
