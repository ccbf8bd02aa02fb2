"""The Tokenizer contract, run against the two counters the chunker uses: MiniLM's WordPiece behind a
word cache (embedded), and the endpoint embedder's own estimate (OpenAI-compatible, replay server)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.adapters.openai.embedder import OpenAIEmbedder
from ragline.documents.chunker import EmbedderTokenCounter, WordCachedCounter
from tests.contract.tokenizer_contract import SENTENCES, TokenizerContract
from tests.support.openai_replay import OpenAIReplay

pytestmark = pytest.mark.contract


@pytest.fixture(scope="module")
def minilm() -> LocalOnnxEmbedder:
    return LocalOnnxEmbedder()


class TestWordCachedMiniLmCounter(TokenizerContract):
    @pytest.fixture
    def tokenizer(self, minilm: LocalOnnxEmbedder) -> WordCachedCounter:
        return WordCachedCounter(minilm)  # a fresh, empty word cache per test


class TestEmbedderTokenCounter(TokenizerContract):
    @pytest.fixture
    def tokenizer(self, openai_replay: OpenAIReplay) -> EmbedderTokenCounter:
        embedder = OpenAIEmbedder(model="text-embedding-test", client=openai_replay.client(), dimension=8)
        return EmbedderTokenCounter(embedder)


def test_the_word_cache_counts_what_minilm_counts_for_wordpiece(minilm: LocalOnnxEmbedder) -> None:
    """Given WordPiece (additive over words), the cache is exact, not just within the contract's slack."""
    assert WordCachedCounter(minilm).count_many(SENTENCES) == minilm.count_many(SENTENCES)


def test_endpoint_counting_sends_no_request(openai_replay: OpenAIReplay) -> None:
    """Chunking an endpoint-embedded document costs no extra round trip per sentence."""
    embedder = OpenAIEmbedder(model="text-embedding-test", client=openai_replay.client(), dimension=8)
    EmbedderTokenCounter(embedder).count_many(SENTENCES)

    assert openai_replay.requests == []


def test_the_word_cache_counts_texts_holding_its_separator_word(minilm: LocalOnnxEmbedder) -> None:
    """A NUL in a text (the word cache joins a batch around one) is counted as MiniLM counts it."""
    texts = ["a \x00 b", "\x00", "x\x00y z", "", *SENTENCES]

    assert WordCachedCounter(minilm).count_many(texts) == minilm.count_many(texts)


class RecordingCounter:
    """One token per character; records what it was asked to count."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def count_many(self, texts: Sequence[str]) -> list[int]:
        self.calls.append(list(texts))
        return [len(text) for text in texts]


def test_the_word_cache_asks_once_per_batch_and_only_for_new_words() -> None:
    inner = RecordingCounter()
    counter = WordCachedCounter(inner)

    first = counter.count_many(["to be or", "not to be", ""])
    second = counter.count_many(["be or not", "new words"])

    assert first == [2 + 2 + 2, 3 + 2 + 2, 0]
    assert second == [2 + 2 + 3, 3 + 5]
    assert sorted(inner.calls[0]) == ["be", "not", "or", "to"]  # the separator is never asked about
    assert sorted(inner.calls[1]) == ["new", "words"]
    assert len(inner.calls) == 2
