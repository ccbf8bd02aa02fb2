"""The three chunking strategies (README, "Chunking strategies"): what each promises of its chunks.

Tokens here are whitespace words (the bag-of-words test embedder is also the tokenizer), so sizes are
exact; the semantic tests' topics share words within a topic and none across, so the bag-of-words
vectors see a topic change where a reader would.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from ragline import errors
from ragline.documents.chunker import chunk_document
from ragline.documents.limits import Deadline
from ragline.documents.parsers import ParsedDocument, Section
from ragline.documents.semantic import EMBED_BATCH, EMBED_CHARS, MIN_SHARE
from ragline.documents.strategies import ChunkPlan, chunk_by
from ragline.domain.models import Chunk
from tests.support.fakes import BowEmbedder

WORDS = BowEmbedder()


def doc(*sections: Section) -> ParsedDocument:
    return ParsedDocument(sections=list(sections), pages=1, content_hash="0" * 64)


def numbered(prefix: str, n: int, words: int = 9) -> str:
    """``n`` sentences of ``words`` words each, every one distinct."""
    return " ".join(f"{prefix} {' '.join(f'w{i}x{j}' for j in range(words - 2))} end{i}." for i in range(n))


def chunks_of(strategy: str, d: ParsedDocument, **plan: int) -> list[Chunk]:
    p = ChunkPlan(strategy=strategy, **plan)  # type: ignore[arg-type]
    return chunk_by(p, d, document_id="d", tokenizer=WORDS, embedder=WORDS).chunks


def tokens(text: str) -> int:
    return len(text.split())


# -- hierarchical ---------------------------------------------------------------------------------


def test_hierarchical_chunks_are_the_fixed_chunks_each_carrying_its_whole_parent() -> None:
    # Given one long section (60 sentences of 9 words)
    text = numbered("Alpha", 60)
    d = doc(Section(text=text))
    chunks = chunks_of("hierarchical", d, chunk_tokens=40, overlap_tokens=9, parent_tokens=160)

    # Then what is searched is exactly what fixed makes
    assert [c.text for c in chunks] == [
        c.text for c in chunks_of("fixed", d, chunk_tokens=40, overlap_tokens=9)
    ]
    # and every chunk carries its parent: a run of whole chunks within the parent size
    parents = list(dict.fromkeys(c.metadata.wider_text for c in chunks))
    assert len(parents) == 4  # 20 chunks of 4 sentences, 3 new each; 5 chunks span 15 sentences (135)
    for parent in parents:
        own = [c.text for c in chunks if c.metadata.wider_text == parent]
        assert parent.startswith(own[0]) and parent.endswith(own[-1]) and all(o in parent for o in own)
        assert tokens(parent) <= 160
    # and the parents cover the text in order, two neighbours sharing at most the chunks' overlap
    at = [text.index(p) for p in parents]
    assert at[0] == 0 and text.endswith(parents[-1]) and at == sorted(at)
    for (a, p), b in zip(zip(at, parents, strict=True), at[1:], strict=False):
        assert tokens(text[b : a + len(p)]) <= 9


def test_hierarchical_parents_never_span_two_sections() -> None:
    # Given two short sections under different headings
    d = doc(
        Section(text=numbered("Pump", 3), heading_path=("Pump",)),
        Section(text=numbered("Fan", 3), heading_path=("Fan",)),
    )
    chunks = chunks_of("hierarchical", d, chunk_tokens=10, overlap_tokens=0, parent_tokens=100)
    # Then each chunk's parent is its own section's text
    for c in chunks:
        assert c.metadata.wider_text.startswith(c.metadata.heading_path[0])
        assert c.metadata.heading_path[0] in c.text


def test_a_hierarchical_table_chunk_carries_the_header_and_the_parents_rows() -> None:
    # Given a table of 40 rows under its header
    rows = "\n".join(f"| Volt {i} | {1000 + i} EUR |" for i in range(40))
    d = doc(Section(text=rows, header="Bikes\n| Model | Price |", heading_path=("Prices",)))
    chunks = chunks_of("hierarchical", d, chunk_tokens=48, overlap_tokens=0, parent_tokens=192)
    # Then every chunk starts with the header, and its context is the header and more rows
    for c in chunks:
        assert c.text.startswith("Bikes\n| Model | Price |\n")
        assert c.metadata.wider_text.startswith("Bikes\n| Model | Price |\n")
        assert c.text.split("\n", 2)[2] in c.metadata.wider_text
    assert max(c.metadata.wider_text.count("| Volt") for c in chunks) > max(
        c.text.count("| Volt") for c in chunks
    )


def test_a_parent_smaller_than_a_chunk_is_refused() -> None:
    with pytest.raises(errors.InvalidRequest, match="parent_tokens"):
        chunk_document(
            doc(Section(text="a b c.")), document_id="d", tokenizer=WORDS, chunk_tokens=50, parent_tokens=20
        )


def test_fixed_keeps_its_sentence_window() -> None:
    # Given the same long section, chunked fixed
    text = numbered("Alpha", 60)
    chunks = chunks_of("fixed", doc(Section(text=text)), chunk_tokens=40, overlap_tokens=9)
    # Then a chunk's context is its window: about the chunk and half its length on each side
    middle = chunks[len(chunks) // 2]
    assert middle.text in middle.metadata.wider_text
    assert len(middle.text) < len(middle.metadata.wider_text) <= 2 * len(middle.text) + 4


# -- semantic -------------------------------------------------------------------------------------

TOPICS = {
    "pump": "pump valve prime pressure hose seal impeller",
    "invoice": "invoice payment receipt amount ledger refund tax",
    "badge": "badge door visitor escort reception lobby lanyard",
}


def topical(topic: str, n: int) -> list[str]:
    words = TOPICS[topic].split()
    return [
        " ".join(words[(i + j) % len(words)] for j in range(6)).capitalize() + f" {topic}{i}."
        for i in range(n)
    ]


def test_semantic_chunks_close_where_the_topic_changes() -> None:
    # Given one section, no headings, drifting over three topics of 5, 7 and 6 sentences (7 words each)
    sentences = topical("pump", 5) + topical("invoice", 7) + topical("badge", 6)
    d = doc(Section(text=" ".join(sentences)))

    # When it is chunked semantically with room for 8 sentences a chunk
    chunks = chunks_of("semantic", d, chunk_tokens=56, overlap_tokens=0)

    # Then no chunk mixes two topics, and each topic is in as few chunks as its size allows
    topics = [{t for t in TOPICS if t in c.text} for c in chunks]
    assert all(len(t) == 1 for t in topics), [c.text for c in chunks]
    assert [t.pop() for t in topics] == ["pump", "invoice", "badge"]
    # while fixed chunks of the same size cut across topics
    fixed = chunks_of("fixed", d, chunk_tokens=56, overlap_tokens=0)
    assert any(len({t for t in TOPICS if t in c.text}) > 1 for c in fixed)


def test_a_semantic_segment_over_the_budget_is_cut_and_none_is_below_the_minimum() -> None:
    # Given a single topic of 30 sentences (7 words each), no structure
    d = doc(Section(text=" ".join(topical("pump", 30))))
    chunks = chunks_of("semantic", d, chunk_tokens=50, overlap_tokens=0)
    # Then every chunk fits the budget, and only the last may hold less than a quarter of it
    sizes = [tokens(c.text) for c in chunks]
    assert max(sizes) <= 50
    assert min(sizes[:-1]) >= 50 // MIN_SHARE
    assert " ".join(c.text for c in chunks) == " ".join(topical("pump", 30))


def test_semantic_chunking_is_deterministic_and_metered() -> None:
    sentences = topical("pump", 12) + topical("badge", 12)
    d = doc(Section(text=" ".join(sentences), heading_path=("Site",)))
    plan = ChunkPlan(strategy="semantic", chunk_tokens=56, overlap_tokens=0)
    first = chunk_by(plan, d, document_id="d", tokenizer=WORDS, embedder=WORDS)
    again = chunk_by(plan, d, document_id="d", tokenizer=WORDS, embedder=WORDS)
    assert [c.text for c in first.chunks] == [c.text for c in again.chunks]
    # the sentences embedded to find the breaks are counted as embedding work
    assert first.embedded_tokens == sum(tokens(s) for s in sentences)
    # and chunks keep their heading path
    assert {c.metadata.heading_path for c in first.chunks} == {("Site",)}


class CountingEmbedder(BowEmbedder):
    def __init__(self, short: int = 0) -> None:
        self.calls: list[int] = []
        self.short = short

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls.append(len(texts))
        self.longest = max(getattr(self, "longest", 0), *map(len, texts))
        return super().embed_documents(texts[: len(texts) - self.short])


def test_semantic_sentences_are_embedded_in_batches_and_long_ones_only_in_part() -> None:
    # Given 150 sentences, one of them 30,000 characters without a boundary
    sentences = [*topical("pump", 149), "X" * 30000 + "."]
    embedder = CountingEmbedder()
    chunk_by(
        ChunkPlan(strategy="semantic"), doc(Section(text=" ".join(sentences))), document_id="d",
        tokenizer=WORDS, embedder=embedder,
    )  # fmt: skip
    # Then the embedder saw batches of at most EMBED_BATCH, the long sentence cut to EMBED_CHARS
    assert max(embedder.calls) == EMBED_BATCH and sum(embedder.calls) == 150
    assert embedder.longest == EMBED_CHARS


def test_an_embedder_that_returns_too_few_vectors_fails_the_document() -> None:
    with pytest.raises(errors.DependencyFailed, match="sentences"):
        chunk_by(
            ChunkPlan(strategy="semantic"), doc(Section(text=" ".join(topical("pump", 5)))), document_id="d",
            tokenizer=WORDS, embedder=CountingEmbedder(short=1),
        )  # fmt: skip


def test_semantic_chunking_stops_at_the_deadline_before_embedding() -> None:
    embedder = CountingEmbedder()
    spent = Deadline(1.0, clock=iter([0.0, 5.0, 5.0, 5.0]).__next__)
    with pytest.raises(errors.DocumentDeadlineExceeded):
        chunk_by(
            ChunkPlan(strategy="semantic"), doc(Section(text=" ".join(topical("pump", 5)))), document_id="d",
            tokenizer=WORDS, embedder=embedder, deadline=spent,
        )  # fmt: skip
    assert embedder.calls == []


def test_semantic_chunking_leaves_tables_as_the_fixed_strategy_cuts_them() -> None:
    rows = "\n".join(f"| Volt {i} | {1000 + i} EUR |" for i in range(30))
    table = Section(text=rows, header="| Model | Price |", heading_path=("Prices",))
    prose = Section(text=" ".join(topical("pump", 6)), heading_path=("Care",))
    semantic = chunks_of("semantic", doc(table, prose), chunk_tokens=40, overlap_tokens=0)
    fixed = chunks_of("fixed", doc(table, prose), chunk_tokens=40, overlap_tokens=0)
    assert [c.text for c in semantic if c.metadata.heading_path == ("Prices",)] == [
        c.text for c in fixed if c.metadata.heading_path == ("Prices",)
    ]


def test_semantic_needs_the_embedder() -> None:
    with pytest.raises(errors.InvalidRequest, match="embedder"):
        chunk_by(ChunkPlan(strategy="semantic"), doc(Section(text="a b.")), document_id="d", tokenizer=WORDS)


def test_a_hierarchical_table_of_thousands_of_rows_keeps_every_parent_whole() -> None:
    # Given a table long enough that the chunker drops rows it no longer needs while it works
    rows = [f"| R{i} | {i} |" for i in range(5000)]
    d = doc(Section(text="\n".join(rows), header="| Row | N |"))
    chunks = chunks_of("hierarchical", d, chunk_tokens=24, overlap_tokens=0, parent_tokens=96)
    # Then every parent is the header and consecutive whole rows, and together they hold every row once
    parents = list(dict.fromkeys(c.metadata.wider_text for c in chunks))
    seen: list[str] = []
    for parent in parents:
        head, *lines = parent.split("\n")
        assert head == "| Row | N |"
        assert lines == rows[len(seen) : len(seen) + len(lines)]
        seen += lines
    assert seen == rows
