"""What OCR reads off a page, and the page's text in reading order.

A :class:`~ragline.ports.TextRecognizer` returns the lines it found, each with its box in the image's
pixels; :func:`page_text` lays them out: lines whose vertical centres are within half a line's height
of each other form one row (a table's cells, a label and its value), read left to right and joined by
a space; a vertical gap taller than the rows around it starts a new paragraph (a blank line, which the
chunker treats as a paragraph break). Columns side by side are read row by row across the page (not
one column after the other): noted in docs/decisions.md, "Offline OCR".
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TextLine:
    """One line of recognised text and its box (pixels, origin top left)."""

    text: str
    left: float
    top: float
    right: float
    bottom: float
    confidence: float = 1.0

    @property
    def height(self) -> float:
        return max(1.0, self.bottom - self.top)

    @property
    def middle(self) -> float:
        return (self.top + self.bottom) / 2


def page_text(lines: Sequence[TextLine]) -> str:
    """``lines`` as the page's text: rows top to bottom, each row's lines left to right; paragraphs
    separated by a blank line where the gap between rows exceeds the median line height."""
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
    out: list[str] = []
    previous_bottom: float | None = None
    for row in rows:
        top = min(line.top for line in row)
        if previous_bottom is not None and top - previous_bottom > typical:
            out.append("")
        out.append(" ".join(" ".join(line.text.split()) for line in sorted(row, key=lambda ln: ln.left)))
        previous_bottom = max(line.bottom for line in row)
    return "\n".join(out)


def _middle(row: list[TextLine]) -> float:
    return sum(line.middle for line in row) / len(row)


def _height(row: list[TextLine]) -> float:
    return max(line.height for line in row)
