"""The Embedder contract: every backend subclasses :class:`EmbedderContract` with one fixture.

Given ``embedder`` (an :class:`~ragline.ports.Embedder` that batches internally in batches of at
most :data:`BATCH_SIZE` texts, so :data:`TEXTS` spans several batches), every test here must pass
unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragline.ports import Embedder

BATCH_SIZE = 2

TEXTS = [
    "Honey bees pollinate flowering plants.",
    "Solar panels convert sunlight into electricity.",
    "short",
    "Iron rusts when exposed to oxygen and water, slowly, over many years in a damp climate.",
    "Zürich liegt am Zürichsee. 東京は日本の首都です。",
    "A bee colony has one queen.",
    "Honey bees pollinate flowering plants.",  # a repeat of the first text
]
"""Seven texts of varied length (more than three batches), one non-ASCII, one repeated."""

ATOL = 1e-5


class EmbedderContract:
    """Subclasses provide the ``embedder`` fixture."""

    @pytest.fixture
    def embedder(self) -> Embedder:
        raise NotImplementedError

    def test_identity_names_a_model_and_a_positive_dimension(self, embedder: Embedder) -> None:
        assert isinstance(embedder.model_id, str) and embedder.model_id.strip()
        assert isinstance(embedder.dimension, int) and embedder.dimension > 0

    def test_documents_are_unit_length_float32_rows_of_the_dimension(self, embedder: Embedder) -> None:
        # When
        vectors = embedder.embed_documents(TEXTS)
        # Then
        assert vectors.shape == (len(TEXTS), embedder.dimension)
        assert vectors.dtype == np.float32
        assert np.all(np.isfinite(vectors))
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=ATOL)

    def test_a_query_is_one_unit_length_float32_vector(self, embedder: Embedder) -> None:
        vector = embedder.embed_query("How do bees make honey?")

        assert vector.shape == (embedder.dimension,)
        assert vector.dtype == np.float32
        assert abs(float(np.linalg.norm(vector)) - 1.0) < ATOL

    def test_a_query_equals_its_row_in_a_batch_of_documents(self, embedder: Embedder) -> None:
        # Given a batch where each text sits among others (padding, batching, reordering)
        documents = embedder.embed_documents(TEXTS)
        # When each text is embedded alone as a query
        queries = np.stack([embedder.embed_query(text) for text in TEXTS])
        # Then every row is the text's own vector, in input order
        np.testing.assert_allclose(documents, queries, atol=ATOL)

    def test_rows_keep_input_order_across_internal_batches(self, embedder: Embedder) -> None:
        # Given the vectors of distinct texts, one at a time
        distinct = TEXTS[:-1]
        alone = np.stack([embedder.embed_query(text) for text in distinct])
        # When embedded together in reverse order
        together = embedder.embed_documents(list(reversed(distinct)))[::-1]
        # Then each row is nearest its own text's vector (rows are distinct, none swapped)
        similarity = together @ alone.T
        assert list(similarity.argmax(axis=1)) == list(range(len(distinct)))
        assert np.all(np.diag(similarity) > 1 - ATOL)
        off_diagonal = similarity[~np.eye(len(distinct), dtype=bool)]
        assert np.all(off_diagonal < 0.999)

    def test_equal_texts_get_equal_vectors_and_calls_are_deterministic(self, embedder: Embedder) -> None:
        first = embedder.embed_documents(TEXTS)
        second = embedder.embed_documents(TEXTS)

        np.testing.assert_allclose(first, second, atol=ATOL)
        np.testing.assert_allclose(first[0], first[-1], atol=ATOL)

    def test_no_texts_give_an_empty_matrix_of_the_dimension(self, embedder: Embedder) -> None:
        empty = embedder.embed_documents([])

        assert empty.shape == (0, embedder.dimension)
        assert empty.dtype == np.float32

    @pytest.mark.parametrize("text", ["a", "Honey bees pollinate flowering plants.", TEXTS[4]])
    def test_a_non_empty_text_counts_at_least_one_token(self, embedder: Embedder, text: str) -> None:
        count = embedder.count_tokens(text)

        assert isinstance(count, int)
        assert count >= 1

    def test_more_of_the_same_words_count_at_least_as_many_tokens(self, embedder: Embedder) -> None:
        sentence = "Honey bees pollinate flowering plants. "
        counts = [embedder.count_tokens(sentence * n) for n in (1, 2, 8)]

        assert counts == sorted(counts)
        assert counts[2] > counts[0]
        assert embedder.count_tokens(sentence) == counts[0]  # counting is deterministic too
