"""Tables found in a page laid out as text: a PDF page's text layer in pypdf's layout mode, or an OCR'd
page (:func:`~ragline.documents.page_text.page_text` keeps wide gaps between boxes as runs of spaces).

A line's *cells* are its runs of text separated by two or more spaces. A table is a block of at least
:data:`MIN_ROWS` consecutive lines (blank lines between them allowed) with at least two cells each,
whose cells line up: the character spans of all the block's cells, merged where they overlap, make
the columns (numbers aligned right and words aligned left share a column as long as their spans
overlap; two neighbouring columns no row fills both of are one, as a centred header over numbers
aligned right), and there must be at least two. Its cells must be short (median at most
:data:`MAX_MEDIAN_CELL` characters): two columns of prose side by side are not a table. The first row
is the header unless it holds a digit (then the table is key–value rows without one); a short line
right above the block (no full stop at its end) is its caption. A block whose first column holds only
list markers (``1.``, ``b)``, bullets) is a list, not a table. The table
becomes :func:`~ragline.documents.tables.table_section`; the text around it stays prose, its runs of
spaces closed up. :func:`continued` gives a table's part on the next page its caption and header. A
cell wrapped onto two lines is read as two rows: a limit, noted in README "Tables".
"""

from __future__ import annotations

import re
import statistics
from bisect import bisect_right
from dataclasses import dataclass

from ragline.documents.formats import unwrap_lines
from ragline.documents.raw import RawSection
from ragline.documents.tables import MAX_COLUMNS, table_section

MIN_ROWS = 3
"""Lines (the header included) a block needs to be a table."""
MAX_MEDIAN_CELL = 30
"""The longest median cell (characters) a table may have."""
MAX_CAPTION = 100
"""The longest line above a table taken as its caption."""

_CELL = re.compile(r"\S+(?: \S+)*")
"""A run of words separated by single spaces: a cell (two spaces or more end it)."""
_MARKER = re.compile(r"(?:\(?\d{1,3}|[a-zA-Z]|[ivxIVX]{1,4})[.)]|[•·▪◦‣*–—-]")
"""A list item's marker (``1.``, ``a)``, ``iv.``, a bullet): a column of only these is a list."""


@dataclass(frozen=True)
class _Line:
    number: int
    cells: list[tuple[int, int, str]]  # (start, end, text)


def split_tables(text: str, page: int | None) -> tuple[list[RawSection], int]:
    """``text`` (a laid-out page) as sections: prose and each table found, in page order; and how many
    tables were found."""
    lines = text.split("\n")
    parsed = [
        _Line(i, [(m.start(), m.end(), m.group()) for m in _CELL.finditer(line)])
        for i, line in enumerate(lines)
    ]
    blocks = _blocks(parsed)
    sections: list[RawSection] = []
    prose: list[str] = []
    tables = 0
    at = 0
    for block in blocks:
        rows = _rows(block)
        if rows is None:
            continue
        caption, prose_end = _caption(parsed, block[0].number)
        prose += lines[at:prose_end]
        _flush(prose, page, sections)
        header = 0 if any(ch.isdigit() for cell in rows[0] for ch in cell) else 1
        section = table_section(rows, header_rows=header, caption=caption, page=page)
        if section is not None:
            sections.append(section)
            tables += 1
        at = block[-1].number + 1
    prose += lines[at:]
    _flush(prose, page, sections)
    return sections, tables


def _blocks(lines: list[_Line]) -> list[list[_Line]]:
    """Runs of lines with two cells or more (blank lines inside a run skipped, not ending it)."""
    blocks: list[list[_Line]] = []
    current: list[_Line] = []
    for line in lines:
        if not line.cells:
            continue
        if len(line.cells) >= 2:
            current.append(line)
            continue
        if len(current) >= MIN_ROWS:
            blocks.append(current)
        current = []
    if len(current) >= MIN_ROWS:
        blocks.append(current)
    return blocks


def _rows(block: list[_Line]) -> list[list[str]] | None:
    """The block's rows by column, or ``None`` when it is not a table."""
    spans = sorted((start, end) for line in block for start, end, _ in line.cells)
    columns: list[list[int]] = []
    for start, end in spans:
        if columns and start < columns[-1][1]:
            columns[-1][1] = max(columns[-1][1], end)
        else:
            columns.append([start, end])
    if not 2 <= len(columns) <= 4 * MAX_COLUMNS:
        return None
    if statistics.median(len(text) for line in block for _, _, text in line.cells) > MAX_MEDIAN_CELL:
        return None
    starts = [lo for lo, _ in columns]
    placed = [[(bisect_right(starts, start) - 1, text) for start, _, text in line.cells] for line in block]
    merged = _merged(len(columns), placed)
    if merged[-1] < 1:
        return None
    rows = []
    for cells in placed:
        row = [""] * (merged[-1] + 1)
        for column, text in cells:
            row[merged[column]] = f"{row[merged[column]]} {text}".strip()
        rows.append(row)
    if all(not row[0] or _MARKER.fullmatch(row[0]) for row in rows):
        return None  # a numbered or bulleted list laid out with a gap after its markers
    return rows


def _merged(count: int, placed: list[list[tuple[int, str]]]) -> list[int]:
    """Each column's index once neighbouring columns no row has cells in both of are merged: a header
    centred or aligned left over numbers aligned right shares no span with them, and is still their
    column's header."""
    filled: list[set[int]] = [set() for _ in range(count)]
    for row, cells in enumerate(placed):
        for column, _ in cells:
            filled[column].add(row)
    target, used = [0], set(filled[0])
    for column in range(1, count):
        if used.isdisjoint(filled[column]):
            used |= filled[column]
            target.append(target[-1])
        else:
            used = set(filled[column])
            target.append(target[-1] + 1)
    return target


def _caption(lines: list[_Line], first: int) -> tuple[str, int]:
    """The line above a table (blank lines between allowed) when it reads as a caption — one cell,
    short, no full stop — and where the prose before the table ends."""
    above = first - 1
    while above >= 0 and not lines[above].cells:
        above -= 1
    if above < 0 or len(lines[above].cells) != 1:
        return "", first
    text = lines[above].cells[0][2]
    if len(text) > MAX_CAPTION or text.endswith("."):
        return "", first
    return text, above


def _flush(prose: list[str], page: int | None, sections: list[RawSection]) -> None:
    text = "\n".join(" ".join(line.split()) for line in prose).strip("\n")
    if text.strip():
        sections.append(RawSection(unwrap_lines(text), (), page))
    prose.clear()


def continued(sections: list[RawSection]) -> list[RawSection]:
    """``sections`` (a PDF's, in page order) with each table that goes on at the top of the next page
    given the first part's caption and header: a table ends its page (nothing after it) and the next
    page starts with a table of as many columns (nothing before it) with no caption, and either no
    header (its first row held a digit) or the first part's header repeated. A second part with a
    caption or a header of its own is another table."""
    out = list(sections)
    for i in range(1, len(out)):
        before, after = out[i - 1], out[i]
        if not (_is_table(before) and _is_table(after) and before.header):
            continue
        if before.page is None or after.page != before.page + 1:
            continue
        own, head = _header_row(after.header), _header_row(before.header)
        if not head or _width(head) != _width(after.text.split("\n", 1)[0]):
            continue
        if after.header != _own_header(own) or own not in ("", head):
            continue  # a caption or a header of its own: another table
        out[i] = RawSection(after.text, after.heading_path, after.page, before.header)
    return out


def _own_header(row: str) -> str:
    """A table section's header made of ``row`` alone (no caption)."""
    return f"{row}\n| {' | '.join(['---'] * _width(row))} |" if row else ""


def _is_table(section: RawSection) -> bool:
    return section.text.startswith("| ")


def _header_row(header: str) -> str:
    """The header row of a table section's header (its caption and separator left out)."""
    lines = header.split("\n")
    return lines[-2] if len(lines) >= 2 and lines[-1].startswith("| ---") else ""


def _width(row: str) -> int:
    return row.count(" | ") + 1 if row.startswith("| ") else 0
