"""A page's text in reading order, from the lines OCR read off it.

A :class:`~ragline.ports.TextRecognizer` returns the lines it found (:class:`TextLine`, a domain type
re-exported here), each with its box in the image's pixels; :func:`page_text` lays them out: lines
whose vertical centres are within half a line's height of each other form one row (a table's cells, a
label and its value), read left to right and joined by a space; a vertical gap taller than the rows
around it starts a new paragraph (a blank line, which the chunker treats as a paragraph break).
Columns side by side are read row by row across the page (not one column after the other): noted in
docs/decisions.md, "Offline OCR".
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from ragline.domain.ocr import TextLine as TextLine  # noqa: PLC0414 (re-exported: OCR adapters use it)

MAX_COLUMN = 1000
"""The farthest character column a laid-out box is padded to (an image thousands of characters wide,
or boxes of a few pixels a character, never turns into megabytes of spaces)."""
WIDE_GAP = 2.0
"""A gap between two boxes of a row wider than this many characters (the page's median character
width) is a column gap."""


def page_text(lines: Sequence[TextLine], *, layout: bool = False) -> str:
    """``lines`` as the page's text: rows top to bottom, each row's lines left to right, joined by a
    space; paragraphs separated by a blank line where the gap between rows exceeds the median line
    height. ``layout``: a box after a column gap (:data:`WIDE_GAP`) starts at the character column
    its left edge is at (the page's median character width), at least two spaces on, so the columns
    of a table line up as in a PDF's layout text (:mod:`ragline.documents.layout_tables`)."""
    found = [line for line in lines if line.text.strip()]
    if not found:
        return ""
    rows: list[list[TextLine]] = []
    for line in sorted(found, key=lambda ln: (ln.middle, ln.left)):
        row = rows[-1] if rows else None
        if row is not None and abs(line.middle - _middle(row)) <= min(line.height, _height(row)) / 2:
            row.append(line)
        else:
            rows.append([line])
    typical = statistics.median(line.height for line in found)
    char = statistics.median(line.width / max(1, len(line.text.strip())) for line in found)
    out: list[str] = []
    previous_bottom: float | None = None
    for row in rows:
        top = min(line.top for line in row)
        if previous_bottom is not None and top - previous_bottom > typical:
            out.append("")
        out.append(_row_text(sorted(row, key=lambda ln: ln.left), char if layout else 0.0))
        previous_bottom = max(line.bottom for line in row)
    return "\n".join(out)


def _row_text(row: list[TextLine], char: float) -> str:
    """The row's boxes joined by a space; with a character width, a box after a column gap padded to
    its column instead."""
    out = ""
    for i, line in enumerate(row):
        text = " ".join(line.text.split())
        if i and char > 0 and line.left - row[i - 1].right > WIDE_GAP * char:
            out += " " * max(2, min(round(line.left / char), MAX_COLUMN) - len(out))
        elif i:
            out += " "
        out += text
    return out


def _middle(row: list[TextLine]) -> float:
    return sum(line.middle for line in row) / len(row)


def _height(row: list[TextLine]) -> float:
    return max(line.height for line in row)
