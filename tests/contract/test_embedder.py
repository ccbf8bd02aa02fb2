"""The Embedder contract, run against the offline MiniLM (ONNX) and an OpenAI-compatible endpoint
(the local replay server, which returns deliberately non-unit vectors, last-first)."""

from __future__ import annotations

import pytest

from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.adapters.openai.embedder import OpenAIEmbedder
from tests.contract.embedder_contract import BATCH_SIZE, TEXTS, EmbedderContract
from tests.support.openai_replay import OpenAIReplay

pytestmark = pytest.mark.contract

REPLAY_DIMENSION = 32


@pytest.fixture(scope="module")
def minilm() -> LocalOnnxEmbedder:
    """One instance for the module: loading the ONNX session is the slow part."""
    return LocalOnnxEmbedder(batch_size=BATCH_SIZE)


class TestLocalOnnxEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self, minilm: LocalOnnxEmbedder) -> LocalOnnxEmbedder:
        return minilm


def replay_embedder(replay: OpenAIReplay) -> OpenAIEmbedder:
    replay.embeddings(dimension=REPLAY_DIMENSION, reversed_order=True)
    return OpenAIEmbedder(
        model="text-embedding-test",
        client=replay.client(),
        dimension=REPLAY_DIMENSION,
        batch_size=BATCH_SIZE,
    )


class TestOpenAIEmbedder(EmbedderContract):
    @pytest.fixture
    def embedder(self, openai_replay: OpenAIReplay) -> OpenAIEmbedder:
        return replay_embedder(openai_replay)


# -- the contract's texts really span several batches in both backends ----------------------------
def test_local_batches_the_contract_texts() -> None:
    done: list[int] = []
    LocalOnnxEmbedder(batch_size=BATCH_SIZE, progress=done.append).embed_documents(TEXTS)

    assert done == [2, 4, 6, 7]


def test_openai_batches_the_contract_texts(openai_replay: OpenAIReplay) -> None:
    replay_embedder(openai_replay).embed_documents(TEXTS)

    sent = [request["input"] for request in openai_replay.embedding_requests]
    assert sent == [TEXTS[0:2], TEXTS[2:4], TEXTS[4:6], TEXTS[6:7]]
