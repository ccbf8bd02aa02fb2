"""OCR lines laid out as a page's text: rows, their order, paragraphs."""

from __future__ import annotations

import pytest

from ragline.documents.page_text import TextLine, page_text

pytestmark = pytest.mark.unit


def line(text: str, left: float, top: float, width: float = 100, height: float = 20) -> TextLine:
    return TextLine(text=text, left=left, top=top, right=left + width, bottom=top + height)


def test_lines_are_read_top_to_bottom_whatever_order_they_come_in() -> None:
    lines = [line("third", 10, 100), line("first", 10, 10), line("second", 10, 35)]
    assert page_text(lines) == "first\nsecond\n\nthird"


def test_boxes_on_one_row_are_joined_left_to_right_as_a_table_row_is() -> None:
    row = [line("2,499 EUR", 400, 52), line("Volt 2", 10, 50), line("in stock", 700, 48)]
    assert page_text([line("Model Price Availability", 10, 20), *row]) == (
        "Model Price Availability\nVolt 2 2,499 EUR in stock"
    )


def test_a_gap_taller_than_a_line_starts_a_paragraph_and_a_normal_one_does_not() -> None:
    text = page_text([line("a", 0, 0), line("b", 0, 25), line("c", 0, 100)])
    assert text.split("\n\n") == ["a\nb", "c"]


def test_blank_lines_and_runs_of_spaces_vanish() -> None:
    assert page_text([line("  two   words ", 0, 0), line("   ", 0, 30)]) == "two words"
    assert page_text([]) == ""
