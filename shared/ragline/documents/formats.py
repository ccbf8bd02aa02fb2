"""Text formats: plain text, Markdown, JSON / JSON Lines, CSV (HTML is in :mod:`.markup`).

Each parser takes ``(budget, data)`` and returns ``(sections, pages)``; :mod:`.parsers` validates
and wraps the result. Parsers raise only Ragline errors, run in linear time (no pattern here can
backtrack over a run of characters) and count what they extract against ``budget``, because
JSON key paths and CSV column names are repeated per value and could otherwise grow without bound.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from ragline.documents.encoding import decode_text
from ragline.documents.limits import ParseBudget
from ragline.documents.raw import Parsed, RawSection, unreadable
from ragline.errors import DocumentTooLarge, UnreadableDocument

# ---------------------------------------------------------------------------------------------- text

_SOFT_WRAP = re.compile(r"\n(?<=[^\s.!?:;]\n)(?=[a-z])")  # one fixed-width look each way: linear


def unwrap_lines(text: str) -> str:
    """Join soft-wrapped prose: a line break inside a sentence (the next line starts lowercase)."""
    return _SOFT_WRAP.sub(" ", text)


def parse_text(budget: ParseBudget, data: bytes) -> Parsed:
    return [RawSection(unwrap_lines(decode_text(budget.filename, data)))], 1


# ------------------------------------------------------------------------------------------ markdown

# A heading's title runs to the end of the line (`.*`, nothing after it to backtrack into); trailing
# blanks and closing hashes are stripped in Python, never by a pattern (160k spaces once took 30 s).
_MD_BLOCK = re.compile(r"^ {0,3}(?:(#{1,6})(?:[ \t]+(.*))?|(`{3,}|~{3,}).*)$", re.MULTILINE)


def _heading_title(raw: str) -> str:
    """``## Install ##`` → ``Install``: closing hashes go only after a blank (``C#`` stays)."""
    title = raw.rstrip(" \t")
    bare = title.rstrip("#")
    if bare != title and (not bare or bare[-1] in " \t"):
        title = bare
    return " ".join(title.split())


def parse_markdown(budget: ParseBudget, data: bytes) -> Parsed:
    """ATX headings (``#``..``######``) build the heading path; fenced code is kept verbatim."""
    text = decode_text(budget.filename, data)
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
        budget.tick()
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
        if heading := _heading_title(title or ""):
            path.append((level, heading))
        pos = m.end()
    parts.append(text[pos:] if fence else unwrap_lines(text[pos:]))
    flush()
    return sections, 1


# ---------------------------------------------------------------------------------------------- json

_MAX_JSON_CONTAINERS = 4_000_000
"""Objects and arrays in one JSON document: each costs ~60-200 bytes once loaded, so 50 MB of
``[],[],…`` would need over 1 GB; 4 million is far above real data files and well inside memory."""

MAX_JSON_DEPTH = 512
"""Objects and arrays nested inside one another: far above real data, and safely below the depth at
which Python's JSON decoder runs out of stack (about 1,000 levels, less the caller's frames)."""


def _too_deep(filename: str, where: str = "") -> UnreadableDocument:
    at = f" (at {where})" if where else ""
    return unreadable(
        filename, f"its JSON nests objects and arrays more than {MAX_JSON_DEPTH} levels deep{at}"
    )


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _flatten(filename: str, value: Any) -> Iterator[str]:
    """``key.path: value`` lines, depth-first in document order; list items as ``key[i]``.

    A stack of child iterators, not of children: memory is the nesting depth, not the width.
    """
    stack: list[Iterator[tuple[str, Any]]] = [iter([("", value)])]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
        elif isinstance(child[1], dict | list):
            if len(stack) > MAX_JSON_DEPTH:
                raise _too_deep(filename)
            stack.append(_children(*child))
        else:
            path, item = child
            yield f"{path}: {_scalar(item)}" if path else _scalar(item)


def _children(path: str, value: dict[str, Any] | list[Any]) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        prefix = f"{path}." if path else ""
        return ((f"{prefix}{key}", item) for key, item in value.items())
    return ((f"{path}[{i}]", item) for i, item in enumerate(value))


def _load_json(filename: str, text: str, where: str = "") -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = where or f"line {exc.lineno}"
        raise unreadable(filename, f"invalid JSON at {line}, column {exc.colno}: {exc.msg}") from exc
    except RecursionError as exc:  # the decoder's own stack ran out: deeper than MAX_JSON_DEPTH
        raise _too_deep(filename, where) from exc
    except ValueError as exc:
        raise unreadable(filename, f"unsupported JSON{' at ' + where if where else ''} ({exc})") from exc


def _lines_within(budget: ParseBudget, lines: Iterable[str]) -> Iterator[str]:
    """``lines`` counted against the text budget (and the deadline, every 4,096 lines)."""
    for n, line in enumerate(lines):
        if not n % 4096:
            budget.tick()
        budget.add_text(len(line) + 1)
        yield line


def parse_json(budget: ParseBudget, data: bytes) -> Parsed:
    text = decode_text(budget.filename, data)
    containers = text.count("{") + text.count("[")  # an upper bound: brackets in strings count too
    if containers > _MAX_JSON_CONTAINERS:
        reason = (
            f"it holds up to {containers} JSON objects and arrays, over the limit of {_MAX_JSON_CONTAINERS}"
        )
        raise DocumentTooLarge(
            f"Cannot index {budget.filename!r}: {reason}.",
            filename=budget.filename,
            reason=reason,
            max_json_containers=_MAX_JSON_CONTAINERS,
        )
    value = _load_json(budget.filename, text)
    del text
    return [RawSection("\n".join(_lines_within(budget, _flatten(budget.filename, value))))], 1


def parse_jsonl(budget: ParseBudget, data: bytes) -> Parsed:
    """One record per line; records are separated by paragraph breaks."""
    records = []
    for number, line in enumerate(decode_text(budget.filename, data).split("\n"), start=1):
        if line.strip():
            value = _load_json(budget.filename, line, f"line {number}")
            if record := "\n".join(_lines_within(budget, _flatten(budget.filename, value))):
                records.append(record)
    return [RawSection("\n\n".join(records))], 1


# ----------------------------------------------------------------------------------------------- csv

_MAX_CSV_LINE = 1024 * 1024
"""Characters in one physical CSV line: a longer one is not a table (and a 50 MB line of ``a,a,…``
would be parsed into millions of cells before any check could run)."""


def _csv_lines(filename: str, text: str) -> Iterator[str]:
    for number, line in enumerate(io.StringIO(text, newline=""), start=1):
        if len(line) > _MAX_CSV_LINE:
            raise unreadable(filename, f"line {number} is longer than {_MAX_CSV_LINE} characters")
        yield line


def parse_csv(budget: ParseBudget, data: bytes) -> Parsed:
    """The header names the columns; each row becomes one ``col: value; col: value`` line."""
    filename = budget.filename
    reader = csv.reader(_csv_lines(filename, decode_text(filename, data)))
    lines: list[str] = []
    header: list[str] | None = None
    try:
        for row in reader:
            if not reader.line_num % 4096:
                budget.tick()
            cells = [" ".join(cell.split()) for cell in row]
            if not any(cells):
                continue
            if header is None:
                header = [name or f"column_{i}" for i, name in enumerate(cells, start=1)]
                continue
            names = header
            if len(cells) > len(header):
                names = header + [f"column_{i}" for i in range(len(header) + 1, len(cells) + 1)]
            line = "; ".join(f"{name}: {cell}" for name, cell in zip(names, cells, strict=False) if cell)
            budget.add_text(len(line) + 1)
            lines.append(line)
    except csv.Error as exc:
        raise unreadable(filename, f"invalid CSV at line {reader.line_num} ({exc})") from exc
    if header is not None and not lines:
        lines.append("; ".join(header))
    return [RawSection("\n".join(lines))], 1
