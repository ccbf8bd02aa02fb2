"""A table as one section: its rows as Markdown lines, its caption and header row as the section's
header, so every chunk cut from it carries them (a question about a cell finds the row with the
column's name beside it). Shared by the DOCX and HTML parsers.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragline.documents.raw import RawSection

MAX_COLUMNS = 64
"""Columns a table keeps; the cells of a wider row are joined into its last column (every row is
padded to the table's width, so an unbounded width would multiply the text)."""


def table_section(
    rows: Sequence[Sequence[str]],
    *,
    header_rows: int,
    caption: str = "",
    heading_path: tuple[str, ...] = (),
    page: int | None = None,
) -> RawSection | None:
    """``rows`` (cells' text; whitespace collapsed, rows of only empty cells dropped, short rows
    padded, at most :data:`MAX_COLUMNS` columns) with the first ``header_rows`` of them as the
    header. A table of one row has no header (nothing to repeat): its row is its text. ``None`` for a
    table without text."""
    cleaned = [_folded([" ".join(cell.split()) for cell in row]) for row in rows]
    kept = [(i, row) for i, row in enumerate(cleaned) if any(row)]
    if not kept:
        return None
    width = max(len(row) for _, row in kept)
    lines = [_line([*row, *[""] * (width - len(row))]) for _, row in kept]
    heads = sum(1 for i, _ in kept if i < header_rows) if len(kept) > 1 else 0
    if heads == len(lines):  # every row a header: no body to repeat them over
        heads = 0
    caption = " ".join(caption.split())
    header = [caption] if caption else []
    if heads:
        header += [*lines[:heads], _line(["---"] * width)]
    return RawSection("\n".join(lines[heads:]), heading_path, page, "\n".join(header))


def _folded(cells: list[str]) -> list[str]:
    if len(cells) <= MAX_COLUMNS:
        return cells
    return [*cells[: MAX_COLUMNS - 1], " ".join(cell for cell in cells[MAX_COLUMNS - 1 :] if cell)]


def _line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
