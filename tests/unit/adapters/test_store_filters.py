"""The SQLite store's prefix bound: every string starting with a prefix, and only those, lies in
``[prefix, successor(prefix))`` in UTF-8 byte order (how SQLite's BINARY collation compares TEXT);
and both stores' last look at the hits they return."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.adapters.embedded.store_filters import successor
from ragline.adapters.embedded.store_filters import vetted as embedded_vetted
from ragline.adapters.opensearch.filtering import vetted as opensearch_vetted
from ragline.domain.access import UserContext
from ragline.domain.filters import ReadView, parse_filter
from ragline.domain.models import Chunk, ChunkMetadata, ScoreBreakdown, SearchHit

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


@pytest.mark.parametrize("vet", [embedded_vetted, opensearch_vetted])
def test_a_hit_read_after_its_row_changed_is_judged_as_read(vet: Any) -> None:
    """A chunk the filter admitted but whose row now names other readers (rewritten between the search
    and the read) is not returned; without a view or filter nothing is checked."""

    def hit(doc: str, readers: tuple[str, ...], team: str) -> SearchHit:
        meta = ChunkMetadata(attributes={"team": team}, readers=readers)
        chunk = Chunk(document_id=doc, sequence_number=0, text="t", metadata=meta)
        return SearchHit(chunk=chunk, score=1.0, breakdown=ScoreBreakdown())

    hits = [hit("open", (), "red"), hit("hr", ("g:hr",), "red"), hit("blue", (), "blue")]
    user = ReadView(readers=UserContext.of("ann").reader_terms())
    red = parse_filter({"equals": {"key": "team", "value": "red"}})
    assert [h.chunk.document_id for h in vet(hits, user, None)] == ["open", "blue"]
    assert [h.chunk.document_id for h in vet(hits, user, red)] == ["open"]
    assert [h.chunk.document_id for h in vet(hits, None, red)] == ["open", "hr"]
    assert vet(hits, None, None) == hits
