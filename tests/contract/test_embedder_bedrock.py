"""The Embedder contract, run against BedrockEmbedder (Titan Text Embeddings V2) through real boto3 and
the local Bedrock server (real MiniLM vectors, truncated to 256 or zero-padded to 1024 dimensions)."""

from __future__ import annotations

import pytest

from ragline.adapters.bedrock.embedder import BedrockEmbedder
from tests.contract.embedder_contract import BATCH_SIZE, TEXTS, EmbedderContract
from tests.support.bedrock_server import BedrockServer

pytestmark = pytest.mark.contract


def bedrock_embedder(server: BedrockServer, dimension: int) -> BedrockEmbedder:
    return BedrockEmbedder(
        dimension=dimension, client=server.client("bedrock-runtime"), max_concurrency=BATCH_SIZE
    )


class TestBedrockEmbedder1024(EmbedderContract):
    @pytest.fixture
    def embedder(self, bedrock_server: BedrockServer) -> BedrockEmbedder:
        return bedrock_embedder(bedrock_server, 1024)


class TestBedrockEmbedder256(EmbedderContract):
    @pytest.fixture
    def embedder(self, bedrock_server: BedrockServer) -> BedrockEmbedder:
        return bedrock_embedder(bedrock_server, 256)


def test_the_contract_texts_are_sent_one_per_call_at_most_batch_size_at_a_time(
    bedrock_server: BedrockServer,
) -> None:
    # When the contract's seven texts (one repeated) are embedded
    bedrock_embedder(bedrock_server, 256).embed_documents(TEXTS)

    # Then each distinct text went in its own InvokeModel call, never more than BATCH_SIZE at once
    sent = [r.body["inputText"] for r in bedrock_server.recorded("InvokeModel")]
    assert sorted(sent) == sorted(set(TEXTS))
    assert 1 <= bedrock_server.max_in_flight <= BATCH_SIZE
