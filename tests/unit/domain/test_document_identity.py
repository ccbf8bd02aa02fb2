"""Document ids from object paths: injective, bounded, and only of the API's id alphabet (issue 11 #3, #9)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragline.domain.documents import MAX_DOCUMENT_ID_BYTES, check_document_id, document_id_for

pytestmark = pytest.mark.unit
PATHS = st.text(min_size=1, max_size=400)


@given(PATHS, PATHS)
def test_distinct_paths_never_share_an_id(a: str, b: str) -> None:
    if a != b:
        assert document_id_for(a) != document_id_for(b)


@given(PATHS)
def test_every_id_is_bounded_and_accepted_by_the_api_rule(path: str) -> None:
    doc = document_id_for(path)
    assert len(doc.encode()) <= MAX_DOCUMENT_ID_BYTES
    assert check_document_id(doc) == doc
    assert "#" not in doc


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("guide.md", "guide.md"),
        ("docs/2024/report.pdf", "docs/2024/report.pdf"),
        ("a b.txt", "a~20b.txt"),
        ("a_b.txt", "a_b.txt"),
        ("x#1.txt", "x~231.txt"),
        ("café.txt", "caf~C3~A9.txt"),
        ("~home.txt", "~7Ehome.txt"),
        ("docs//lead.txt", "docs//lead.txt"),
        ("_notes.txt", "_notes.txt"),
    ],
)
def test_safe_paths_keep_their_readable_id(path: str, expected: str) -> None:
    assert document_id_for(path) == expected


def test_a_long_path_keeps_a_prefix_and_ends_with_its_hash() -> None:
    long_a, long_b = "d/" + "a" * 1100, "d/" + "a" * 1099 + "b"
    ids = document_id_for(long_a), document_id_for(long_b)
    assert ids[0] != ids[1] and all(i.startswith("d/aaa") and "~~" in i for i in ids)
    assert all(len(i) == MAX_DOCUMENT_ID_BYTES for i in ids)


def test_an_empty_path_is_refused() -> None:
    with pytest.raises(ValueError):
        document_id_for("")
