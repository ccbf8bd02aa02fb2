"""A table's chunks: whole rows, each chunk led by the table's caption and header row."""

from __future__ import annotations

import pytest

from ragline.documents import ParsedDocument, Section, chunk_document
from ragline.documents.tables import MAX_COLUMNS, table_section
from tests.unit.documents.test_chunker import WhitespaceCounter, doc_of

pytestmark = pytest.mark.unit

ROWS = [["Model", "Price", "Range"], *[[f"Volt {i}", f"{1000 + i} EUR", f"{40 + i} km"] for i in range(30)]]


def table(rows: list[list[str]] = ROWS, caption: str = "Prices 2026") -> Section:
    raw = table_section(rows, header_rows=1, caption=caption, heading_path=("Catalogue",))
    assert raw is not None
    return Section(text=raw.text, heading_path=raw.heading_path, header=raw.header)


def chunks_of(doc: ParsedDocument, budget: int = 40, overlap: int = 8) -> list[str]:
    return [
        c.text
        for c in chunk_document(
            doc, document_id="d", tokenizer=WhitespaceCounter(), chunk_tokens=budget, overlap_tokens=overlap
        )
    ]


def test_every_chunk_of_a_table_starts_with_its_caption_and_header_and_holds_whole_rows() -> None:
    texts = chunks_of(doc_of(table()))
    header = "Prices 2026\n| Model | Price | Range |\n| --- | --- | --- |"
    assert len(texts) > 3
    rows = []
    for text in texts:
        assert text.startswith(header + "\n") and len(text.split()) <= 40
        body = text.removeprefix(header + "\n").split("\n")
        assert all(line.startswith("| Volt ") and line.endswith(" km |") for line in body)
        rows += body
    assert rows == [
        f"| Volt {i} | {1000 + i} EUR | {40 + i} km |" for i in range(30)
    ]  # each once, no overlap


def test_a_table_never_shares_a_chunk_with_the_prose_around_it() -> None:
    prose = Section(text="Our bikes are built in Leeds.", heading_path=("Catalogue",))
    texts = chunks_of(doc_of(prose, table(ROWS[:3]), prose), budget=200)
    assert texts == [
        "Our bikes are built in Leeds.",
        "Prices 2026\n| Model | Price | Range |\n| --- | --- | --- |\n| Volt 0 | 1000 EUR | 40 km |\n"
        "| Volt 1 | 1001 EUR | 41 km |",
        "Our bikes are built in Leeds.",
    ]


def test_a_header_wider_than_half_the_budget_is_kept_once_at_the_start() -> None:
    wide = [[f"column {c}" for c in range(12)], *[[f"r{r}c{c}" for c in range(12)] for r in range(6)]]
    texts = chunks_of(doc_of(table(wide, caption="")), budget=60)
    assert texts[0].startswith("| column 0 |") and not any(t.startswith("| column 0 |") for t in texts[1:])
    assert all(len(t.split()) <= 60 for t in texts)


def test_a_table_is_bounded_in_width_and_keeps_empty_cells_in_their_columns() -> None:
    raw = table_section([["a", "b", "c"], ["x", "", "z"], ["only"]], header_rows=1)
    assert raw is not None and raw.text == "| x |  | z |\n| only |  |  |"
    wide = table_section([["h"] * (MAX_COLUMNS + 10), ["v"] * (MAX_COLUMNS + 10)], header_rows=1)
    assert wide is not None and wide.text.count(" | ") == MAX_COLUMNS - 1
    assert table_section([["", " "], []], header_rows=1) is None
    one = table_section([["just", "one row"]], header_rows=1)
    assert one is not None and (one.header, one.text) == ("", "| just | one row |")


def test_a_tables_rows_fill_an_eighth_of_the_budget_and_a_long_row_is_never_split() -> None:
    narrow = [["k", "v"], *[[f"k{i}", f"v{i}"] for i in range(16)]]  # each row 5 whitespace tokens
    texts = chunks_of(doc_of(table(narrow, caption="")), budget=80)  # rows: 80 // 8 = 10 tokens
    assert [t.count("\n| k") for t in texts] == [2] * 8
    long_row = [["a", "b"], ["word " * 30, "x"]]  # 35 tokens: over 80 // 8, within 80 - header
    texts = chunks_of(doc_of(table(long_row, caption="")), budget=80)
    assert texts == ["| a | b |\n| --- | --- |\n| " + " ".join(["word"] * 30) + " | x |"]
