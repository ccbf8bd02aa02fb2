"""Chunking parsed documents: budgets, overlap, order, structure, and nothing lost."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragline.adapters.local_models.embedder import find_tokenizer_file
from ragline.documents import ParsedDocument, Section, WordCachedCounter, chunk_document, split_sentences
from ragline.documents.chunker import MIN_CONTEXT_CHARS
from ragline.documents.limits import MAX_HEADING_CHARS, MAX_HEADING_PATH_CHARS
from ragline.domain.models import Chunk
from ragline.errors import DocumentTooLarge, InvalidRequest

pytestmark = pytest.mark.unit

TOKENIZER_JSON = find_tokenizer_file()  # the embedder's own tokenizer.json, wherever it is installed


class WhitespaceCounter:
    """One token per whitespace-separated word; records its calls."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def count_many(self, texts: Sequence[str]) -> list[int]:
        self.calls.append(list(texts))
        return [len(text.split()) for text in texts]


class WordPieceCounter:
    """The production counting: the embedder's WordPiece tokenizer, no special tokens.

    ``tokenizer.json`` ships with padding and truncation at 128 tokens; both must be off for counting,
    or every text would count as 128.
    """

    def __init__(self, path: Path = TOKENIZER_JSON) -> None:
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(path))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self._tokenizer.encode_batch(list(texts), add_special_tokens=False)]


@cache
def wordpiece() -> WordPieceCounter:
    return WordPieceCounter()  # a missing tokenizer fails the test: it is a required dependency


def doc_of(*sections: Section) -> ParsedDocument:
    return ParsedDocument(sections=list(sections), pages=1, content_hash="0" * 64)


def words(text: str) -> list[str]:
    return text.split()


PROSE = " ".join(
    f"Sentence number {i} talks about topic {i % 7} with a few more words."  # 12 words each
    for i in range(40)
)


# ------------------------------------------------------------------------------------ sentence split


def test_given_abbreviations_decimals_and_line_breaks_when_split_then_sentences_are_whole() -> None:
    text = (
        "Dr. Smith paid $3.50 for tea, e.g. green tea. Was it good? Yes! J. R. R. Tolkien agreed.\n"
        '1. First item\n- second item\n\nNew paragraph ends approx. here. "Quoted." Done'
    )

    assert split_sentences(text) == [
        "Dr. Smith paid $3.50 for tea, e.g. green tea.",
        "Was it good?",
        "Yes!",
        "J. R. R. Tolkien agreed.",
        "1. First item",
        "- second item",
        "New paragraph ends approx. here.",
        '"Quoted."',
        "Done",
    ]


def test_given_blank_text_when_split_then_no_sentences() -> None:
    assert split_sentences(" \n\n \t") == []


# ----------------------------------------------------------------------------------------- chunking


def test_given_prose_when_chunked_then_every_chunk_fits_the_budget_and_sentences_are_whole() -> None:
    counter = WhitespaceCounter()

    chunks = chunk_document(
        doc_of(Section(text=PROSE)), document_id="d", tokenizer=counter, chunk_tokens=50, overlap_tokens=0
    )

    assert len(chunks) > 1
    assert all(len(words(c.text)) <= 50 for c in chunks)
    sentences = set(split_sentences(PROSE))
    for chunk in chunks:
        assert set(split_sentences(chunk.text)) <= sentences


def test_given_prose_when_chunked_then_the_tokenizer_is_called_once_with_all_sentences() -> None:
    counter = WhitespaceCounter()
    doc = doc_of(Section(text=PROSE, heading_path=("A",)), Section(text="Other part. Here.", page=2))

    chunk_document(doc, document_id="d", tokenizer=counter, chunk_tokens=30)

    assert len(counter.calls) == 1
    assert counter.calls[0] == [*split_sentences(PROSE), "Other part.", "Here."]


def test_given_overlap_when_chunked_then_each_next_chunk_starts_with_trailing_sentences_of_the_previous() -> (
    None
):
    chunks = chunk_document(
        doc_of(Section(text=PROSE)),
        document_id="d",
        tokenizer=WhitespaceCounter(),
        chunk_tokens=50,
        overlap_tokens=12,
    )

    assert len(chunks) > 2
    for previous, current in pairwise(chunks):
        shared = split_sentences(current.text)[0]
        assert previous.text.endswith(shared)
        assert len(words(shared)) <= 12
        assert len(words(current.text)) <= 50


def test_given_overlap_smaller_than_any_sentence_when_chunked_then_chunks_do_not_repeat_text() -> None:
    chunks = chunk_document(
        doc_of(Section(text=PROSE)),
        document_id="d",
        tokenizer=WhitespaceCounter(),
        chunk_tokens=50,
        overlap_tokens=5,
    )

    assert sum(len(words(c.text)) for c in chunks) == len(words(PROSE))


def test_given_a_document_when_chunked_twice_then_ids_and_sequence_numbers_are_contiguous_and_stable() -> (
    None
):
    doc = doc_of(Section(text=PROSE, heading_path=("A",)), Section(text=PROSE, heading_path=("B",)))

    first = chunk_document(doc, document_id="doc-1", tokenizer=WhitespaceCounter(), chunk_tokens=40)
    second = chunk_document(doc, document_id="doc-1", tokenizer=WhitespaceCounter(), chunk_tokens=40)

    assert [c.sequence_number for c in first] == list(range(len(first)))
    assert [c.id for c in first] == [f"doc-1#{i}" for i in range(len(first))]
    assert first == second


def test_given_sections_with_headings_and_pages_when_chunked_then_chunks_never_cross_them() -> None:
    doc = doc_of(
        Section(text="Alpha one. Alpha two.", heading_path=("Guide", "Alpha"), page=1),
        Section(text="Beta one. Beta two.", heading_path=("Guide", "Beta"), page=1),
        Section(text="Beta three on the next page.", heading_path=("Guide", "Beta"), page=2),
    )

    chunks = chunk_document(
        doc, document_id="d", tokenizer=WhitespaceCounter(), filename="g.pdf", source="s3://b/g"
    )

    assert [(c.text, c.metadata.heading_path, c.metadata.page) for c in chunks] == [
        ("Alpha one. Alpha two.", ("Guide", "Alpha"), 1),
        ("Beta one. Beta two.", ("Guide", "Beta"), 1),
        ("Beta three on the next page.", ("Guide", "Beta"), 2),
    ]
    assert {(c.metadata.filename, c.metadata.source) for c in chunks} == {("g.pdf", "s3://b/g")}
    assert all("Guide" not in c.text for c in chunks)  # the heading path lives in metadata only


def test_given_adjacent_sections_with_the_same_path_and_page_when_chunked_then_they_may_share_a_chunk() -> (
    None
):
    doc = doc_of(Section(text="Row one.", heading_path=("T",)), Section(text="Row two.", heading_path=("T",)))

    chunks = chunk_document(doc, document_id="d", tokenizer=WhitespaceCounter())

    assert [c.text for c in chunks] == ["Row one.\n\nRow two."]


def test_given_a_window_when_chunked_then_wider_text_adds_neighbouring_sentences_of_the_same_section() -> (
    None
):
    text = " ".join(f"S{i} is short." for i in range(10))  # 3 words each
    doc = doc_of(Section(text="Other section text.", heading_path=("X",)), Section(text=text))

    chunks = chunk_document(
        doc,
        document_id="d",
        tokenizer=WhitespaceCounter(),
        chunk_tokens=6,
        overlap_tokens=0,
        window_sentences=1,
    )

    assert chunks[1].text == "S0 is short. S1 is short."
    assert chunks[1].metadata.wider_text == "S0 is short. S1 is short. S2 is short."
    assert chunks[2].metadata.wider_text == "S1 is short. S2 is short. S3 is short. S4 is short."
    assert chunks[-1].metadata.wider_text == "S7 is short. S8 is short. S9 is short."


def test_given_one_sentence_longer_than_the_budget_when_chunked_then_split_on_word_boundaries() -> None:
    sentence = " ".join(f"w{i}" for i in range(95)) + "."
    doc = doc_of(Section(text=f"Before it. {sentence} After it."))

    chunks = chunk_document(
        doc, document_id="d", tokenizer=WhitespaceCounter(), chunk_tokens=20, overlap_tokens=0
    )

    assert all(len(words(c.text)) <= 20 for c in chunks)
    assert " ".join(c.text for c in chunks).split() == doc.sections[0].text.split()


def test_given_a_single_word_over_the_budget_when_chunked_then_it_is_cut_into_slices() -> None:
    class CharCounter:
        def count_many(self, texts: Sequence[str]) -> list[int]:
            return [len(t.replace(" ", "")) for t in texts]

    chunks = chunk_document(
        doc_of(Section(text="x" * 95)),
        document_id="d",
        tokenizer=CharCounter(),
        chunk_tokens=20,
        overlap_tokens=0,
    )

    assert all(len(c.text) <= 20 for c in chunks)
    assert "".join(c.text for c in chunks) == "x" * 95


def test_given_real_wordpiece_counts_when_chunked_then_recounted_chunks_fit_the_budget() -> None:
    counter = wordpiece()
    text = (
        "Ragline indexes documents for retrieval-augmented generation. "
        "Each tenant's namespace is isolated; e.g. Dr. Müller's PDFs never mix with ACME Corp.'s data. "
        "Chunks are ~200 tokens, with 3.5% overlap (roughly)! Why? Because context matters.\n\n"
    ) * 30

    chunks = chunk_document(
        doc_of(Section(text=text)), document_id="d", tokenizer=counter, chunk_tokens=64, overlap_tokens=16
    )

    recounted = counter.count_many([c.text for c in chunks])
    assert max(recounted) <= 64
    assert min(recounted) > 16


def test_given_a_long_sentence_and_wordpiece_when_chunked_then_pieces_stay_close_to_the_budget() -> None:
    counter = wordpiece()
    sentence = " ".join(["internationalization", "a", "of", "cryptocurrency", "the"] * 60)

    chunks = chunk_document(
        doc_of(Section(text=sentence)), document_id="d", tokenizer=counter, chunk_tokens=50, overlap_tokens=0
    )

    recounted = counter.count_many([c.text for c in chunks])
    assert max(recounted) <= 55  # pieces of one sentence are sized by an estimate
    assert " ".join(c.text for c in chunks) == sentence


def test_given_word_cached_counting_when_compared_with_wordpiece_then_counts_are_identical() -> None:
    counter = wordpiece()
    texts = [PROSE, "Dr. Müller's café costs €3.50 (approx.)!", "東京 is Tokyo; naïve résumé.", "", "a\tb\nc"]

    assert WordCachedCounter(counter).count_many(texts) == counter.count_many(texts)


def test_given_no_text_when_chunked_then_no_chunks() -> None:
    counter = WhitespaceCounter()

    assert chunk_document(doc_of(), document_id="d", tokenizer=counter) == []
    assert counter.calls == []


@pytest.mark.parametrize(("chunk_tokens", "overlap_tokens", "window"), [(0, 0, 2), (10, -1, 2), (10, 2, -1)])
def test_given_invalid_settings_when_chunked_then_invalid_request(
    chunk_tokens: int, overlap_tokens: int, window: int
) -> None:
    with pytest.raises(InvalidRequest):
        chunk_document(
            doc_of(Section(text="Hi.")),
            document_id="d",
            tokenizer=WhitespaceCounter(),
            chunk_tokens=chunk_tokens,
            overlap_tokens=overlap_tokens,
            window_sentences=window,
        )


# ------------------------------------------------------------------------------------------ property

VOCAB = ["alpha", "beta", "gamma", "delta", "Dr.", "e.g.", "3.5", "x", "über", "naïve", "don't", "U.S."]


@st.composite
def documents(
    draw: st.DrawFn, max_words: int = 40, endings: Sequence[str] = (".", "!", "?", ".\n", "", ";")
) -> tuple[ParsedDocument, list[str]]:
    """Sections of sentences of words, each word made unique (``alpha17``) so it can be tracked."""
    counter = 0
    sections = []
    for _ in range(draw(st.integers(1, 4))):
        paragraphs = []
        for _ in range(draw(st.integers(1, 4))):
            sentences = []
            for _ in range(draw(st.integers(1, 6))):
                n = draw(st.integers(1, max_words))
                picked = draw(st.lists(st.sampled_from(VOCAB), min_size=n, max_size=n))
                tokens = []
                for word in picked:
                    tokens.append(f"{word}{counter}")
                    counter += 1
                tokens[0] = tokens[0][0].upper() + tokens[0][1:]
                sentences.append(" ".join(tokens) + draw(st.sampled_from(endings)))
            paragraphs.append(" ".join(sentences))
        sections.append(
            Section(text="\n\n".join(paragraphs), heading_path=(draw(st.sampled_from(["A", "B"])),))
        )
    doc = ParsedDocument(sections=sections, pages=1, content_hash="0" * 64)
    return doc, [w for s in sections for w in s.text.split()]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    documents(),
    st.integers(min_value=3, max_value=60),
    st.integers(min_value=0, max_value=40),
    st.integers(min_value=0, max_value=3),
)
def test_property_all_words_survive_in_order_and_budgets_hold(
    case: tuple[ParsedDocument, list[str]], chunk_tokens: int, overlap_tokens: int, window: int
) -> None:
    doc, all_words = case
    chunks = chunk_document(
        doc,
        document_id="p",
        tokenizer=WhitespaceCounter(),
        chunk_tokens=chunk_tokens,
        overlap_tokens=overlap_tokens,
        window_sentences=window,
    )

    assert [c.sequence_number for c in chunks] == list(range(len(chunks)))
    assert all(len(words(c.text)) <= chunk_tokens for c in chunks)
    assert all(c.text in c.metadata.wider_text for c in chunks)
    # Words are unique: each chunk is a contiguous run of the document's words, runs overlap or touch
    # (never leave a gap), always move forward, and together reach the last word.
    position = {w: i for i, w in enumerate(all_words)}
    covered = -1
    for chunk in chunks:
        at = [position[w] for w in words(chunk.text)]
        assert at == list(range(at[0], at[0] + len(at)))
        assert at[0] <= covered + 1 < at[-1] + 1
        covered = at[-1]
    assert covered == len(all_words) - 1


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(max_words=15, endings=(".", "!", "?", ".\n")), st.integers(min_value=96, max_value=256))
def test_property_wordpiece_budgets_hold_for_chunks_of_whole_sentences(
    case: tuple[ParsedDocument, list[str]], chunk_tokens: int
) -> None:
    doc, all_words = case
    counter = wordpiece()

    chunks = chunk_document(
        doc, document_id="p", tokenizer=counter, chunk_tokens=chunk_tokens, overlap_tokens=16
    )

    # Sentences have at most 15 words of at most 6 WordPiece tokens ("U.S.38."), so all fit whole.
    assert max(counter.count_many([c.text for c in chunks])) <= chunk_tokens
    assert set(all_words) == {w for c in chunks for w in words(c.text)}


def test_given_chunks_when_inspected_then_they_are_domain_chunks() -> None:
    chunks = chunk_document(doc_of(Section(text="One. Two.")), document_id="d", tokenizer=WhitespaceCounter())

    assert all(isinstance(c, Chunk) for c in chunks)
    assert re.fullmatch(r"d#\d+", chunks[0].id)


# -- bounded metadata (issue 24, item 3) -------------------------------------------------------------


def test_given_six_long_headings_when_chunked_then_each_chunk_keeps_the_nearest_within_the_cap() -> None:
    # Given headings of 100 KB each: every chunk used to carry all 600 KB of them
    path = tuple(f"H{level} " + "word " * 20_000 for level in range(1, 7))
    doc = ParsedDocument(
        sections=[Section(text="Body sentence here. " * 50, heading_path=path)], pages=1, content_hash="h"
    )

    chunks = chunk_document(doc, document_id="d", tokenizer=WhitespaceCounter(), chunk_tokens=20)

    for chunk in chunks:
        kept = chunk.metadata.heading_path
        assert sum(map(len, kept)) <= MAX_HEADING_PATH_CHARS
        assert all(len(heading) <= MAX_HEADING_CHARS for heading in kept)
        assert kept[0] == "…" and kept[-1].startswith("H6 word") and kept[-2].startswith("H5 word")


def test_given_short_headings_when_chunked_then_the_path_is_untouched() -> None:
    path = ("Handbook", "Leave", "Paid leave")
    doc = ParsedDocument(
        sections=[Section(text="Staff get 25 days.", heading_path=path)], pages=1, content_hash="h"
    )

    (chunk,) = chunk_document(doc, document_id="d", tokenizer=WhitespaceCounter())

    assert chunk.metadata.heading_path == path


def test_given_chunks_over_the_byte_budget_when_chunked_then_too_large_naming_the_file() -> None:
    doc = ParsedDocument(sections=[Section(text="A sentence of words. " * 5000)], pages=1, content_hash="h")

    with pytest.raises(DocumentTooLarge, match=r"'big\.md'.*limit of 10,000 bytes"):
        chunk_document(
            doc, document_id="d", tokenizer=WhitespaceCounter(), filename="big.md", max_bytes=10_000
        )


def test_given_sentences_of_8k_characters_when_chunked_then_the_window_adds_at_most_half_a_chunk() -> None:
    # Given text with no sentence ends: 8 KB "sentences", a 2-sentence window of 32 KB around each chunk
    doc = ParsedDocument(sections=[Section(text="lorem ipsum dolor " * 20_000)], pages=1, content_hash="h")

    chunks = chunk_document(doc, document_id="d", tokenizer=WhitespaceCounter(), chunk_tokens=200)

    for chunk in chunks:
        wider = chunk.metadata.wider_text
        assert chunk.text in wider
        assert len(wider) <= len(chunk.text) + 2 * max(len(chunk.text) // 2, MIN_CONTEXT_CHARS)
    assert any(len(c.metadata.wider_text) > len(c.text) + 100 for c in chunks)  # still has context
