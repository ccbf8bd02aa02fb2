"""HTML → sections: h1–h6 build the heading path, block elements become lines, and a table a section
of its own (:func:`~ragline.documents.tables.table_section`): its rows as Markdown lines, its
``<caption>`` and header rows (``<thead>``, or leading rows of ``<th>`` only; else the first row) as the
header every chunk of it repeats. A nested table folds into its outer cell. An image's ``alt`` text is
kept where the image is, as ``[Image: …]``; a ``<figcaption>`` is a line like any block.

Streamed through libxml2's HTML parser (lxml) with a target that receives start/end/data events: no
tree is built, time is linear in the input (CPython's ``html.parser`` is quadratic on runs of ``</``
or ``<!``), and the deadline is checked between fed slices. Text is decoded first with
:func:`.decode_text`, honouring a ``<meta charset>`` only when the bytes really are in it.
"""

from __future__ import annotations

import re

from ragline.documents.encoding import decode_text
from ragline.documents.limits import ParseBudget
from ragline.documents.raw import Parsed, RawSection, image_note, unreadable
from ragline.documents.tables import table_section

_DROP = frozenset({"script", "style", "nav", "noscript", "template", "head", "svg", "iframe", "object"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "dialog", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hr", "html", "li",
        "main", "ol", "p", "section", "summary", "table", "tbody", "thead", "tfoot", "tr", "ul",
    }
)  # fmt: skip
_CELLS = frozenset({"td", "th"})
_META_CHARSET = re.compile(rb"<meta[^>]{0,512}?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]{1,40})", re.IGNORECASE)
_FEED = 1 << 20
MAX_COLSPAN = 64


class _HtmlText:
    """lxml parser target: collects lines of text per heading path from the event stream."""

    def __init__(self, budget: ParseBudget) -> None:
        self.sections: list[RawSection] = []
        self._budget = budget
        self._events = 0
        self._path: list[tuple[int, str]] = []
        self._lines: list[str] = []
        self._inline: list[str] = []
        self._dropped = 0  # open elements inside a dropped one (script, nav, …)
        self._capture: list[str] | None = None  # text of the open heading or <pre>
        self._capture_tag = ""
        self._capture_depth = 0
        self._table: _Table | None = None  # the open outermost table
        self._tables = 0

    def start(self, tag: str, attrib: object) -> None:
        self._events += 1
        if not self._events % 65536:
            self._budget.tick()
        if self._dropped or tag in _DROP:
            self._dropped += 1
        elif self._table is not None:
            self._tables += tag == "table"
            self._table.start(tag, attrib, nested=self._tables > 1)
        elif tag == "table" and self._capture is None:
            self._end_block()
            self._flush()
            self._table, self._tables = _Table(), 1
        elif self._capture is not None:
            self._capture_depth += 1
        elif tag == "img" and (note := image_note(_attribute(attrib, "alt"))):
            self._inline.append(f" {note} ")
        elif tag in _HEADINGS or tag == "pre":
            self._end_block()
            self._capture, self._capture_tag, self._capture_depth = [], tag, 0
        elif tag == "br" or tag in _BLOCKS:
            self._end_block()

    def end(self, tag: str) -> None:
        if self._dropped:
            self._dropped -= 1
        elif self._table is not None:
            if tag == "table":
                self._tables -= 1
            if self._tables:
                self._table.end(tag, nested=self._tables > 1)
                return
            path = tuple(t for _, t in self._path)
            section = self._table.section(path)
            self._table = None
            if section is not None:
                self.sections.append(section)
        elif self._capture is not None:
            if self._capture_depth:
                self._capture_depth -= 1
                return
            text = "".join(self._capture)
            self._capture = None
            if self._capture_tag == "pre":
                if code := text.strip("\n"):
                    self._lines.append(code)
            else:
                self.heading(int(self._capture_tag[1]), " ".join(text.split()))
        elif tag in _CELLS:
            self._inline.append(" ")
        elif tag in _BLOCKS:
            self._end_block()

    def data(self, data: str) -> None:
        if self._dropped:
            return
        if self._table is not None:
            self._table.data(data)
        elif self._capture is not None:
            self._capture.append(data if self._capture_tag == "pre" else f" {data}")
        else:
            self._inline.append(data)

    def close(self) -> None:
        self.heading(0, "")

    def _end_block(self) -> None:
        line = " ".join("".join(self._inline).split())
        self._inline.clear()
        if line:
            self._lines.append(line)

    def heading(self, level: int, title: str) -> None:
        self._end_block()
        self._flush()
        while self._path and self._path[-1][0] >= level:
            self._path.pop()
        if title:
            self._path.append((level, title))

    def _flush(self) -> None:
        if self._lines:
            self.sections.append(RawSection("\n".join(self._lines), tuple(t for _, t in self._path)))
            self._lines.clear()


class _Table:
    """One outermost table's rows, cells, caption and header rows, from the parser's events."""

    def __init__(self) -> None:
        self.rows: list[list[str]] = []
        self.header_rows = 0
        self._caption: list[str] | None = None
        self._caption_text = ""
        self._row: list[str] | None = None
        self._row_headed = True  # only <th> cells so far
        self._cell: list[str] | None = None
        self._span = 1
        self._head = False  # inside <thead>

    def start(self, tag: str, attrib: object, *, nested: bool) -> None:
        if tag == "img" and (note := image_note(_attribute(attrib, "alt"))):
            self._text(f" {note} ")
        elif nested or self._cell is not None:
            self._text(" ")
        elif tag == "caption":
            self._caption = []
        elif tag == "thead":
            self._head = True
        elif tag in ("tbody", "tfoot"):
            self._head = False
        elif tag == "tr":
            self._row, self._row_headed = [], True
        elif tag in _CELLS:
            self._cell, self._span = [], _span(attrib)
            self._row_headed &= tag == "th"

    def end(self, tag: str, *, nested: bool) -> None:
        if nested:
            self._text(" ")
        elif tag in _CELLS and self._cell is not None:
            if self._row is None:  # a cell outside any row: a row of its own
                self._row, self._row_headed = [], False
            self._row += ["".join(self._cell), *[""] * (self._span - 1)]
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if (self._head or self._row_headed) and len(self.rows) == self.header_rows and self._row:
                self.header_rows += 1
            self.rows.append(self._row)
            self._row = None
        elif tag == "caption" and self._caption is not None:
            self._caption_text, self._caption = "".join(self._caption), None
        elif tag == "thead":
            self._head = False
        elif self._cell is not None:
            self._text(" ")

    def data(self, data: str) -> None:
        self._text(data)

    def _text(self, text: str) -> None:
        if self._cell is not None:
            self._cell.append(text)
        elif self._caption is not None:
            self._caption.append(text)

    def section(self, heading_path: tuple[str, ...]) -> RawSection | None:
        self.end("tr", nested=False)  # a last row left open
        return table_section(
            self.rows,
            header_rows=self.header_rows or 1,
            caption=self._caption_text,
            heading_path=heading_path,
        )


def _attribute(attrib: object, name: str) -> str:
    return str(getattr(attrib, "get", lambda _: "")(name) or "")


def _span(attrib: object) -> int:
    value = _attribute(attrib, "colspan").strip()
    return max(1, min(int(value), MAX_COLSPAN)) if value.isdigit() and len(value) < 6 else 1


def parse_html(budget: ParseBudget, data: bytes) -> Parsed:
    """h1–h6 build the heading path; block elements become lines; script/style/nav are dropped."""
    from lxml import etree  # deferred: only HTML pays its import

    declared = _META_CHARSET.search(data[:4096])
    text = decode_text(budget.filename, data, declared=declared.group(1).decode() if declared else "")
    target = _HtmlText(budget)
    parser = etree.HTMLParser(target=target, no_network=True, remove_comments=True, remove_pis=True)
    try:
        for start in range(0, len(text), _FEED):
            budget.tick()
            parser.feed(text[start : start + _FEED])
        parser.close()
    except etree.Error as exc:
        raise unreadable(budget.filename, f"it is not parseable HTML ({exc})") from exc
    return target.sections, 1
