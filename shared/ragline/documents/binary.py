"""Container formats: PDF (pypdf) and DOCX (python-docx).

Library exceptions never escape: they become :class:`UnreadableDocument` chained with ``from``.
"""

from __future__ import annotations

import io
import logging
import re
from typing import Any

from ragline.documents.formats import Parsed, RawSection, unreadable, unwrap_lines

_log = logging.getLogger(__name__)


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


# ----------------------------------------------------------------------------------------------- pdf


def parse_pdf(filename: str, data: bytes) -> Parsed:
    """One section per page with text, ``page`` 1-based; owner-only encryption is opened."""
    from pypdf import PasswordType, PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        encrypted = reader.is_encrypted
    except Exception as exc:
        raise unreadable(filename, f"it is not a valid PDF ({_short(exc)})") from exc
    if encrypted:
        try:
            opened = reader.decrypt("")
        except Exception as exc:
            raise unreadable(
                filename, f"the PDF is encrypted and cannot be decrypted ({_short(exc)})"
            ) from exc
        if opened == PasswordType.NOT_DECRYPTED:
            raise unreadable(filename, "the PDF is password-protected")
    try:
        pages = list(reader.pages)
    except Exception as exc:
        raise unreadable(filename, f"its page tree is corrupt ({_short(exc)})") from exc
    if not pages:
        raise unreadable(filename, "the PDF has no pages")

    sections: list[RawSection] = []
    failed: list[int] = []
    last_error: Exception | None = None
    for number, page in enumerate(pages, start=1):
        try:
            text = page.extract_text()
        except Exception as exc:
            failed.append(number)
            last_error = exc
            continue
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        if text.strip():
            sections.append(RawSection(unwrap_lines(text), (), number))
    if len(failed) == len(pages):
        reason = f"no page could be read ({_short(last_error)})" if last_error else "no page could be read"
        raise unreadable(filename, reason) from last_error
    if failed:
        _log.warning("pdf %r: skipped %d unreadable page(s): %s", filename, len(failed), failed[:20])
    return sections, len(pages)


# ---------------------------------------------------------------------------------------------- docx

_HEADING_STYLE = re.compile(r"^Heading ([1-9])$")


def _heading_level(paragraph: Any) -> int | None:
    style = paragraph.style
    name = str(style.name) if style is not None and style.name else ""
    if name == "Title":
        return 0
    m = _HEADING_STYLE.match(name)
    return int(m.group(1)) if m else None


def _table_lines(table: Any) -> list[str]:
    """One line per row, cells joined by `` | ``; merged cells (repeated by python-docx) once."""
    lines = []
    for row in table.rows:
        seen: set[int] = set()
        cells: list[str] = []
        for cell in row.cells:
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            if text := " ".join(str(cell.text).split()):
                cells.append(text)
        if cells:
            lines.append(" | ".join(cells))
    return lines


def parse_docx(filename: str, data: bytes) -> Parsed:
    """``Heading N`` (and ``Title``) paragraphs build the heading path; tables become row lines."""
    import docx
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:
        raise unreadable(
            filename, f"it is not a valid .docx (a legacy .doc or an encrypted file?) ({_short(exc)})"
        ) from exc
    sections: list[RawSection] = []
    path: list[tuple[int, str]] = []
    lines: list[str] = []

    def flush() -> None:
        if lines:
            sections.append(RawSection("\n".join(lines), tuple(title for _, title in path)))
            lines.clear()

    try:
        for block in document.iter_inner_content():
            if isinstance(block, Table):
                lines.extend(_table_lines(block))
                continue
            text = str(block.text).strip()
            level = _heading_level(block)
            if level is None:
                if text:
                    lines.append(text)
                continue
            flush()
            while path and path[-1][0] >= level:
                path.pop()
            if text:
                path.append((level, " ".join(text.split())))
    except Exception as exc:
        raise unreadable(filename, f"its document body is corrupt ({_short(exc)})") from exc
    flush()
    return sections, 1
