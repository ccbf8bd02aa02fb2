"""The SQLite store's prefix bound: every string starting with a prefix, and only those, lies in
``[prefix, successor(prefix))`` in UTF-8 byte order (how SQLite's BINARY collation compares TEXT)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragline.adapters.embedded.store_filters import successor

chars = st.sampled_from(
    ["a", "=", "\x7f", "\u07ff", "\ud7ff", "\ue000", "\uffff", "\U0010ffff", "\U0010fffe"]
)
texts = st.lists(chars, max_size=4).map("".join)


@given(texts, texts)
def test_the_prefix_range_holds_exactly_the_strings_with_the_prefix(prefix: str, other: str) -> None:
    upper = successor(prefix)
    for candidate in (other, prefix + other):
        key = candidate.encode()
        inside = key >= prefix.encode() and (upper is None or key < upper.encode())
        assert inside == candidate.startswith(prefix)


def test_a_prefix_that_cannot_grow_has_no_upper_bound() -> None:
    assert successor("\U0010ffff\U0010ffff") is None
    assert successor("a\U0010ffff") == "b"
    assert successor("k\ud7ff") == "k\ue000"
