"""The expat handlers that turn a DOCX main part (``word/document.xml``) into sections.

Text is what Word shows: runs' ``w:t``, ``w:tab``, ``w:br``/``w:cr`` (line breaks) and
``w:noBreakHyphen``, anywhere in a paragraph (hyperlinks, fields, content controls, insertions),
but not deleted or moved-from text, nor ``mc:Fallback`` copies of what ``mc:Choice`` already holds.
A table becomes a section of its own (:func:`~ragline.documents.tables.table_section`): its rows as
Markdown lines, and as the header every chunk of it repeats, the rows Word repeats on each page
(``w:tblHeader``; else the first row) and a ``Caption`` paragraph right above it. A vertically merged
cell repeats its first cell's text in each row (as python-docx does); a cell spanning columns is
followed by empty ones; nested tables fold into their outer cell. A picture's alt text (its
``wp:docPr`` ``descr``, else ``title``) stands where the picture is, as ``[Image: …]``, followed by a
mark for the text OCR reads off it (:data:`IMAGE_MARK`).
"""

from __future__ import annotations

import re

from ragline.documents.limits import ParseBudget
from ragline.documents.raw import RawSection, image_note
from ragline.documents.tables import table_section

W_NAMESPACES = (
    "http://schemas.openxmlformats.org/wordprocessingml/2006/main",  # transitional (what Word writes)
    "http://purl.oclc.org/ooxml/wordprocessingml/main",  # strict
)
_SKIPPED = frozenset(
    {f"{ns} {local}" for ns in W_NAMESPACES for local in ("del", "moveFrom")}
    | {"http://schemas.openxmlformats.org/markup-compatibility/2006 Fallback"}
)
_DRAWING = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
_DRAWING_MAIN = "http://schemas.openxmlformats.org/drawingml/2006/main"
_EMBED = "http://schemas.openxmlformats.org/officeDocument/2006/relationships embed"
IMAGE_MARK = "\x00"
"""Wraps a picture's number where the picture stands (``\x000\x00``): XML text can never hold NUL, so
:func:`~ragline.documents.docx_text.parse_docx` finds exactly the marks it put, and puts the picture's
OCR text there (or nothing)."""
_RUN_TEXT = {"tab": "\t", "ptab": "\t", "cr": "\n", "noBreakHyphen": "-"}
_HEADING_STYLE = re.compile(r"heading ([1-9])")
MAX_SPAN = 64
"""Empty cells a spanning or skipped cell adds (a table's width is bounded again by the renderer)."""


_CAPTION_STYLE = "caption"


class _Paragraph:
    __slots__ = ("parts", "style")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.style: str | None = None


class BodyText:
    """expat handlers (``start``/``end``/``data``) collecting sections from a document part."""

    def __init__(self, budget: ParseBudget, style_names: dict[str, str], default_style: str) -> None:
        self._budget = budget
        self._style_names = style_names
        self._default_style = default_style
        self._levels: dict[str | None, int | None] = {}
        self._stack: list[str] = []  # open elements, namespaced names (interned by expat)
        self._skipped = 0  # open elements at or inside a skipped one
        self._paragraphs: list[_Paragraph] = []  # open paragraphs: text boxes nest them
        self._tables = 0
        self._rows: list[list[str]] = []
        self._header_rows = 0  # leading rows marked as repeated header rows
        self._row_header = False
        self._caption = ""  # the text of the last line, when a Caption paragraph made it
        self._row: list[str] = []
        self._cell: list[str] = []
        self._column = 0  # grid column of the current cell in the outermost table
        self._span = 1
        self._vmerge = ""
        self._merged: dict[int, str] = {}
        self._sections: list[RawSection] = []
        self.images: list[str] = []  # relationship ids of the pictures, in document order
        self._path: list[tuple[int, str]] = []
        self._lines: list[str] = []

    # -- expat handlers -------------------------------------------------------------------------
    def start(self, name: str, attrs: dict[str, str]) -> None:
        stack = self._stack
        stack.append(name)
        if self._skipped or name in _SKIPPED:
            self._skipped += 1
            return
        ns, _, local = name.rpartition(" ")
        if ns == _DRAWING and local == "docPr" and self._paragraphs:  # a picture's alt text, in place
            note = image_note(attrs.get("descr") or attrs.get("title") or "")
            if note:
                self._budget.add_text(len(note))
                self._paragraphs[-1].parts.append(f" {note} ")
            return
        if ns == _DRAWING_MAIN and local == "blip" and self._paragraphs and (rid := attrs.get(_EMBED)):
            self.images.append(rid)  # the picture's part, read by OCR once the body is parsed
            self._paragraphs[-1].parts.append(f" {IMAGE_MARK}{len(self.images) - 1}{IMAGE_MARK} ")
            return
        if ns not in W_NAMESPACES:
            return
        parent = stack[-2].rpartition(" ")[2] if len(stack) > 1 else ""
        if local == "p":
            self._paragraphs.append(_Paragraph())
        elif self._paragraphs and parent == "r" and local in _RUN_TEXT:
            self._paragraphs[-1].parts.append(_RUN_TEXT[local])
        elif self._paragraphs and parent == "r" and local == "br":
            kind = attrs.get(f"{ns} type", "textWrapping")
            self._paragraphs[-1].parts.append("\n" if kind == "textWrapping" else "")
        elif local == "pStyle" and parent == "pPr" and self._paragraphs and stack[-3].endswith(" p"):
            self._paragraphs[-1].style = attrs.get(f"{ns} val")
        elif local == "tbl":
            self._tables += 1
            if self._tables == 1:
                self._merged, self._rows, self._header_rows = {}, [], 0
                caption = self._caption
                if caption:
                    self._lines.pop()
                self._flush()
                self._caption = caption
        elif self._tables == 1:
            self._table_start(local, parent, attrs.get(f"{ns} val"))

    def _table_start(self, local: str, parent: str, value: str | None) -> None:
        if local == "tr":
            self._row, self._column, self._row_header = [], 0, False
        elif local == "tc":
            self._cell, self._span, self._vmerge = [], 1, ""
        elif local == "tblHeader" and parent == "trPr":
            self._row_header = value not in ("0", "false", "off")
        elif local == "gridBefore" and parent == "trPr":
            self._column += _number(value)
            self._row += [""] * min(_number(value), MAX_SPAN)
        elif local == "gridSpan" and parent == "tcPr":
            self._span = max(1, _number(value))
        elif local == "vMerge" and parent == "tcPr":
            self._vmerge = value or "continue"

    def data(self, text: str) -> None:
        if not self._skipped and self._paragraphs and self._stack[-1].endswith(" t"):
            ns = self._stack[-1][:-2]
            if ns in W_NAMESPACES:
                self._budget.add_text(len(text))
                self._paragraphs[-1].parts.append(text)

    def end(self, name: str) -> None:
        self._stack.pop()
        if self._skipped:
            self._skipped -= 1
            return
        ns, _, local = name.rpartition(" ")
        if ns not in W_NAMESPACES:
            return
        if local == "p" and self._paragraphs:
            paragraph = self._paragraphs.pop()
            self._paragraph("".join(paragraph.parts), paragraph.style)
        elif local == "tbl":
            self._tables -= 1
            if not self._tables:
                self._table()
        elif self._tables == 1 and local == "tc":
            text = "\n".join(self._cell)
            if self._vmerge == "restart":
                self._merged[self._column] = text
            elif self._vmerge:
                text = self._merged.get(self._column, "")
            self._row += [text, *[""] * (min(self._span, MAX_SPAN) - 1)]
            self._column += self._span
        elif self._tables == 1 and local == "tr":
            if self._row_header and len(self._rows) == self._header_rows:
                self._header_rows += 1
            self._rows.append(self._row)

    # -- sections -------------------------------------------------------------------------------
    def _paragraph(self, text: str, style: str | None) -> None:
        if self._tables:
            self._cell.append(text)
            return
        text = text.strip()
        level = self._level(style)
        self._caption = ""
        if level is None:
            if text:
                self._lines.append(text)
                if self._style_name(style).startswith(_CAPTION_STYLE):
                    self._caption = text
            return
        self._flush()
        while self._path and self._path[-1][0] >= level:
            self._path.pop()
        if text:
            self._path.append((level, " ".join(text.split())))

    def _table(self) -> None:
        """The finished outermost table as its own section, its caption taken from the lines."""
        section = table_section(
            self._rows,
            header_rows=self._header_rows or 1,
            caption=self._caption,
            heading_path=tuple(t for _, t in self._path),
        )
        self._rows, self._caption = [], ""
        if section is not None:
            self._sections.append(section)

    def _style_name(self, style: str | None) -> str:
        return (self._style_names.get(style, self._default_style) if style else self._default_style).lower()

    def _level(self, style: str | None) -> int | None:
        """0 for ``Title``, N for ``Heading N`` (any case), else ``None``; unknown ids are the default."""
        if style not in self._levels:
            lowered = self._style_name(style)
            m = _HEADING_STYLE.fullmatch(lowered)
            self._levels[style] = 0 if lowered == "title" else int(m.group(1)) if m else None
        return self._levels[style]

    def _flush(self) -> None:
        if self._lines:
            self._sections.append(RawSection("\n".join(self._lines), tuple(t for _, t in self._path)))
            self._lines.clear()

    def finish(self) -> list[RawSection]:
        self._flush()
        return self._sections


def _number(value: str | None) -> int:
    return int(value) if value and value.isdigit() and len(value) < 6 else 0
