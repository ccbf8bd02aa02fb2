"""HTML → sections: h1–h6 build the heading path, block elements become lines.

Streamed through libxml2's HTML parser (lxml) with a target that receives start/end/data events: no
tree is built, time is linear in the input (CPython's ``html.parser`` is quadratic on runs of ``</``
or ``<!``), and the deadline is checked between fed slices. Text is decoded first with
:func:`.decode_text`, honouring a ``<meta charset>`` only when the bytes really are in it.
"""

from __future__ import annotations

import re

from ragline.documents.encoding import decode_text
from ragline.documents.limits import ParseBudget
from ragline.documents.raw import Parsed, RawSection, unreadable

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

    def start(self, tag: str, attrib: object) -> None:
        self._events += 1
        if not self._events % 65536:
            self._budget.tick()
        if self._dropped or tag in _DROP:
            self._dropped += 1
        elif self._capture is not None:
            self._capture_depth += 1
        elif tag in _HEADINGS or tag == "pre":
            self._end_block()
            self._capture, self._capture_tag, self._capture_depth = [], tag, 0
        elif tag == "br" or tag in _BLOCKS:
            self._end_block()

    def end(self, tag: str) -> None:
        if self._dropped:
            self._dropped -= 1
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
        if self._capture is not None:
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
        if self._lines:
            self.sections.append(RawSection("\n".join(self._lines), tuple(t for _, t in self._path)))
            self._lines.clear()
        while self._path and self._path[-1][0] >= level:
            self._path.pop()
        if title:
            self._path.append((level, title))


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
