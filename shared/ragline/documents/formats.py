"""Text formats: plain text, Markdown, HTML, JSON / JSON Lines, CSV.

Each parser takes ``(filename, data)`` and returns ``(sections, pages)``; :mod:`.parsers` validates
and wraps the result. Parsers raise only Ragline errors.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from ragline.errors import UnreadableDocument


class RawSection(NamedTuple):
    text: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None


Parsed = tuple[list[RawSection], int]


def unreadable(filename: str, reason: str) -> UnreadableDocument:
    return UnreadableDocument(f"Cannot read {filename!r}: {reason}.", filename=filename, reason=reason)


# ---------------------------------------------------------------------------------------------- text

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_SOFT_WRAP = re.compile(r"\n(?<=[^\s.!?:;]\n)(?=[a-z])")
_SAMPLE = 65536


def decode_text(filename: str, data: bytes) -> str:
    """UTF-8 (BOM-aware, UTF-16 by BOM); lenient only when the bytes are clearly text."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", errors="replace")
    else:
        if b"\x00" in data:
            raise unreadable(filename, "it contains binary data (NUL bytes), not text")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("utf-8", errors="replace")
            if text.count("\ufffd") > len(text) // 10:
                raise unreadable(filename, "it is not UTF-8 text (mostly undecodable bytes)") from None
    sample = text[:_SAMPLE]
    if len(_CONTROL.findall(sample)) > len(sample) // 20:
        raise unreadable(filename, "it contains binary data (control characters), not text")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def unwrap_lines(text: str) -> str:
    """Join soft-wrapped prose: a line break inside a sentence (the next line starts lowercase)."""
    return _SOFT_WRAP.sub(" ", text)


def parse_text(filename: str, data: bytes) -> Parsed:
    return [RawSection(unwrap_lines(decode_text(filename, data)))], 1


# ------------------------------------------------------------------------------------------ markdown

_MD_BLOCK = re.compile(r"^ {0,3}(?:(#{1,6})(?:[ \t]+(.*?))?[ \t]*|(`{3,}|~{3,}).*)$", re.MULTILINE)
_MD_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")


def parse_markdown(filename: str, data: bytes) -> Parsed:
    """ATX headings (``#``..``######``) build the heading path; fenced code is kept verbatim."""
    text = decode_text(filename, data)
    sections: list[RawSection] = []
    path: list[tuple[int, str]] = []
    parts: list[str] = []
    pos = 0
    fence = ""

    def flush() -> None:
        body = "".join(parts)
        parts.clear()
        if body.strip():
            sections.append(RawSection(body, tuple(title for _, title in path)))

    for m in _MD_BLOCK.finditer(text):
        hashes, title, marker = m.group(1), m.group(2), m.group(3)
        if fence:
            if (
                marker
                and marker[0] == fence[0]
                and len(marker) >= len(fence)
                and m.group(0).strip() == marker
            ):
                parts.append(text[pos : m.end()])
                pos, fence = m.end(), ""
            continue
        parts.append(unwrap_lines(text[pos : m.start()]))
        pos = m.start()
        if marker:
            fence = marker
            continue
        flush()
        level = len(hashes)
        while path and path[-1][0] >= level:
            path.pop()
        heading = _MD_CLOSING_HASHES.sub("", title or "").strip()
        if heading:
            path.append((level, heading))
        pos = m.end()
    parts.append(text[pos:] if fence else unwrap_lines(text[pos:]))
    flush()
    return sections, 1


# ---------------------------------------------------------------------------------------------- html

_HTML_DROP = frozenset({"script", "style", "nav", "noscript", "template", "head", "svg", "iframe", "object"})
_HTML_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_HTML_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "dialog", "div",
        "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hr", "html", "li",
        "main", "ol", "p", "section", "summary", "table", "tbody", "thead", "tfoot", "tr", "ul",
    }
)  # fmt: skip
_HTML_CELLS = frozenset({"td", "th"})


class _HtmlText:
    """Collects lines of text per heading path while walking the tree."""

    def __init__(self) -> None:
        self.sections: list[RawSection] = []
        self.path: list[tuple[int, str]] = []
        self.lines: list[str] = []
        self.inline: list[str] = []

    def end_block(self) -> None:
        line = " ".join("".join(self.inline).split())
        self.inline.clear()
        if line:
            self.lines.append(line)

    def heading(self, level: int, title: str) -> None:
        self.end_block()
        if self.lines:
            self.sections.append(RawSection("\n".join(self.lines), tuple(t for _, t in self.path)))
            self.lines.clear()
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        if title:
            self.path.append((level, title))


def parse_html(filename: str, data: bytes) -> Parsed:
    """h1–h6 build the heading path; block elements become lines; script/style/nav are dropped."""
    from bs4 import BeautifulSoup  # deferred: handlers that never parse HTML skip its import
    from bs4.element import NavigableString, PreformattedString, Tag

    try:
        soup = BeautifulSoup(data, "html.parser")
    except Exception as exc:
        raise unreadable(filename, f"it is not parseable HTML ({exc})") from exc
    out = _HtmlText()
    stack: list[tuple[Any, bool]] = [(soup, False)]  # (node, closing): an explicit stack, no recursion
    while stack:
        node, closing = stack.pop()
        if isinstance(node, NavigableString):
            if not isinstance(node, PreformattedString):  # comments, doctype, CDATA, PIs
                out.inline.append(str(node))
            continue
        if not isinstance(node, Tag):
            continue
        name = node.name
        if closing:
            if name in _HTML_CELLS:
                out.inline.append(" ")
            elif name in _HTML_BLOCKS:
                out.end_block()
        elif name in _HTML_HEADINGS:
            out.heading(int(name[1]), " ".join(node.get_text(" ").split()))
        elif name == "br":
            out.end_block()
        elif name == "pre":
            out.end_block()
            if code := node.get_text().strip("\n"):
                out.lines.append(code)
        elif name not in _HTML_DROP:
            if name in _HTML_BLOCKS:
                out.end_block()
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.contents))
    out.heading(0, "")
    return out.sections, 1


# ---------------------------------------------------------------------------------------------- json


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _flatten(value: Any) -> Iterator[str]:
    """``key.path: value`` lines, depth-first in document order; list items as ``key[i]``."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, dict):
            prefix = f"{path}." if path else ""
            stack.extend((f"{prefix}{key}", child) for key, child in reversed(list(item.items())))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", child) for i, child in reversed(list(enumerate(item))))
        else:
            yield f"{path}: {_scalar(item)}" if path else _scalar(item)


def _load_json(filename: str, text: str, where: str = "") -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = where or f"line {exc.lineno}"
        raise unreadable(filename, f"invalid JSON at {line}, column {exc.colno}: {exc.msg}") from exc
    except (RecursionError, ValueError) as exc:
        raise unreadable(filename, f"unsupported JSON{' at ' + where if where else ''} ({exc})") from exc


def parse_json(filename: str, data: bytes) -> Parsed:
    value = _load_json(filename, decode_text(filename, data))
    return [RawSection("\n".join(_flatten(value)))], 1


def parse_jsonl(filename: str, data: bytes) -> Parsed:
    """One record per line; records are separated by paragraph breaks."""
    records = []
    for number, line in enumerate(decode_text(filename, data).split("\n"), start=1):
        if line.strip():
            records.append("\n".join(_flatten(_load_json(filename, line, f"line {number}"))))
    return [RawSection("\n\n".join(record for record in records if record))], 1


# ----------------------------------------------------------------------------------------------- csv


def parse_csv(filename: str, data: bytes) -> Parsed:
    """The header names the columns; each row becomes one ``col: value; col: value`` line."""
    reader = csv.reader(io.StringIO(decode_text(filename, data), newline=""))
    lines: list[str] = []
    header: list[str] | None = None
    try:
        for row in reader:
            cells = [" ".join(cell.split()) for cell in row]
            if not any(cells):
                continue
            if header is None:
                header = [name or f"column_{i}" for i, name in enumerate(cells, start=1)]
                continue
            names = header + [f"column_{i}" for i in range(len(header) + 1, len(cells) + 1)]
            lines.append(
                "; ".join(f"{name}: {cell}" for name, cell in zip(names, cells, strict=False) if cell)
            )
    except csv.Error as exc:
        raise unreadable(filename, f"invalid CSV at line {reader.line_num} ({exc})") from exc
    if header is not None and not lines:
        lines.append("; ".join(header))
    return [RawSection("\n".join(lines))], 1
