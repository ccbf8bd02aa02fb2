"""The Reranker contract, run against BedrockReranker (the Rerank API of bedrock-agent-runtime) through
real boto3 and the local Bedrock server (relevance from MiniLM cosine similarity)."""

from __future__ import annotations

import pytest

from ragline.adapters.bedrock.reranker import AMAZON_RERANK_V1, COHERE_RERANK_V3_5, BedrockReranker
from ragline.ports import Reranker
from tests.contract.reranker_contract import HITS, QUERY, RerankerContract
from tests.support.bedrock_server import BedrockServer

pytestmark = pytest.mark.contract


AMAZON_RERANK_REGION = "us-west-2"
"""Amazon Rerank 1.0 is not offered in us-east-1 (the local server refuses it there, as Bedrock does)."""


class TestBedrockAmazonReranker(RerankerContract):
    @pytest.fixture
    def reranker(self, bedrock_server: BedrockServer) -> Reranker:
        return BedrockReranker(
            client=bedrock_server.client("bedrock-agent-runtime", region=AMAZON_RERANK_REGION)
        )


class TestBedrockCohereReranker(RerankerContract):
    @pytest.fixture
    def reranker(self, bedrock_server: BedrockServer) -> Reranker:
        return BedrockReranker(
            model=COHERE_RERANK_V3_5, client=bedrock_server.client("bedrock-agent-runtime")
        )


def test_the_bee_passages_outrank_the_others(bedrock_server: BedrockServer) -> None:
    # Given the contract's hits, two of five about something else
    client = bedrock_server.client("bedrock-agent-runtime", region=AMAZON_RERANK_REGION)
    reranker = BedrockReranker(model=AMAZON_RERANK_V1, client=client)

    # When reranked for a question about bees
    out = reranker.rerank(QUERY, HITS, len(HITS))

    # Then the model's relevance puts a bee passage first and the unrelated ones last, in one call
    assert "honey" in out.hits[0].chunk.text.lower()
    assert {h.chunk.document_id for h in out.hits[-2:]} == {"d0", "d2"}
    assert out.usage.reranks == 1
    assert len(bedrock_server.recorded("Rerank")) == 1
