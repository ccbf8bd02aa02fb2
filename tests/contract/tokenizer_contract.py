"""The Tokenizer contract: every backend subclasses :class:`TokenizerContract` with one fixture.

Given ``tokenizer`` (a fresh :class:`~ragline.ports.Tokenizer`), every test here must pass unchanged.
Counts are the chunker's unit of size, so they must be stable and roughly additive: a chunk of two
sentences is about as long as the two sentences.
"""

from __future__ import annotations

from itertools import pairwise

import pytest

from ragline.ports import Tokenizer

SENTENCES = [
    "Honey bees pollinate flowering plants.",
    "Solar panels convert sunlight into electricity, even on cloudy days.",
    "Zürich liegt am Zürichsee.",
    "Iron rusts.",
    "A bee colony has one queen and many thousands of workers gathering nectar all summer long.",
]

EMPTY_AT_MOST = 1
"""An empty text counts as nothing, or as one token where a backend never answers zero."""


def slack(total: int) -> int:
    """How far a joined text may be from the sum of its parts (joins, rounding, merges at the seam)."""
    return 2 + total // 10


class TokenizerContract:
    """Subclasses provide the ``tokenizer`` fixture."""

    @pytest.fixture
    def tokenizer(self) -> Tokenizer:
        raise NotImplementedError

    def test_one_count_per_text_in_input_order(self, tokenizer: Tokenizer) -> None:
        # Given each text counted alone
        alone = [tokenizer.count_many([text])[0] for text in SENTENCES]
        # When counted together, forwards and backwards
        together = tokenizer.count_many(SENTENCES)
        backwards = tokenizer.count_many(list(reversed(SENTENCES)))
        # Then one int per text, each the text's own count, in input order
        assert all(type(count) is int for count in together)
        assert together == alone
        assert backwards == list(reversed(alone))
        assert len(set(alone)) > 1  # the texts differ in length, so order is visible

    def test_no_texts_give_no_counts(self, tokenizer: Tokenizer) -> None:
        assert tokenizer.count_many([]) == []

    def test_non_empty_texts_count_positive_and_empty_ones_near_zero(self, tokenizer: Tokenizer) -> None:
        counts = tokenizer.count_many(["", "a", *SENTENCES, "", "   "])

        assert 0 <= counts[0] <= EMPTY_AT_MOST
        assert all(count >= 1 for count in counts[1:-2])
        assert 0 <= counts[-2] <= EMPTY_AT_MOST and 0 <= counts[-1] <= EMPTY_AT_MOST

    def test_longer_texts_of_the_same_words_count_more(self, tokenizer: Tokenizer) -> None:
        sentence = SENTENCES[0] + " "
        counts = tokenizer.count_many([sentence * n for n in (1, 2, 4, 16)])

        assert counts == sorted(counts)
        assert counts[3] > counts[0]

    def test_counts_are_additive_within_a_small_slack(self, tokenizer: Tokenizer) -> None:
        # Given the parts' counts
        parts = tokenizer.count_many(SENTENCES)
        # When the parts are joined into one text
        (joined,) = tokenizer.count_many([" ".join(SENTENCES)])
        # Then the whole is about the sum of its parts
        assert abs(joined - sum(parts)) <= slack(sum(parts))
        for a, b in pairwise(SENTENCES):
            pair, first, second = tokenizer.count_many([f"{a} {b}", a, b])
            assert abs(pair - (first + second)) <= slack(first + second)

    def test_repeated_calls_give_equal_counts(self, tokenizer: Tokenizer) -> None:
        first = tokenizer.count_many(SENTENCES)
        again = tokenizer.count_many(SENTENCES)
        mixed = tokenizer.count_many([SENTENCES[2], "new words appear here", SENTENCES[0]])

        assert again == first
        assert (mixed[0], mixed[2]) == (first[2], first[0])
