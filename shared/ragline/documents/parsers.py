"""Bytes → :class:`ParsedDocument`: sections of text with their heading path and page.

The format is chosen by the file extension (case-insensitive). Every failure is a Ragline error whose
``details`` carry ``filename`` and ``reason``; library exceptions are chained, never raised raw.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ragline.documents import binary, docx_text, formats, images, markup
from ragline.documents.library_logs import library_notes
from ragline.documents.limits import (
    DEFAULT_DOCUMENT_SECONDS,
    DEFAULT_LIMITS,
    Deadline,
    ParseBudget,
    ParseLimits,
)
from ragline.documents.raw import Parsed
from ragline.errors import (
    DocumentTooLarge,
    EmptyDocument,
    RaglineError,
    UnreadableDocument,
    UnsupportedDocument,
)

if TYPE_CHECKING:
    from ragline.ports import TextRecognizer

_log = logging.getLogger(__name__)


class Section(BaseModel):
    """A run of text under one heading path (and, for paged formats, on one page)."""

    model_config = ConfigDict(frozen=True)

    text: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    """1-based page number; ``None`` for formats without pages."""
    header: str = ""
    """What every chunk of this section starts with: a table's caption and header row (its ``text``
    is then its rows, one per line, and a chunk never splits a row). Empty for prose."""


class ParsedDocument(BaseModel):
    model_config = ConfigDict(frozen=True)

    sections: list[Section]
    pages: int
    """Page count for PDFs; 1 for formats without pages."""
    content_hash: str
    """sha256 hex of the raw bytes."""
    notes: list[str] = []
    """What the parsing library recovered from, in its words (:mod:`.library_logs`): the file was
    read, but not as cleanly as its format promises (``pypdf: incorrect startxref pointer(3)``)."""


_PARSERS: dict[str, Callable[[ParseBudget, bytes], Parsed]] = {
    ".txt": formats.parse_text,
    ".md": formats.parse_markdown,
    ".markdown": formats.parse_markdown,
    ".html": markup.parse_html,
    ".htm": markup.parse_html,
    ".pdf": binary.parse_pdf,
    ".docx": docx_text.parse_docx,
    ".json": formats.parse_json,
    ".jsonl": formats.parse_jsonl,
    ".csv": formats.parse_csv,
    **dict.fromkeys(images.IMAGE_EXTENSIONS, images.parse_image),
}

SUPPORTED_EXTENSIONS: tuple[str, ...] = tuple(_PARSERS)


def extension_of(filename: str) -> str:
    """The lowercased extension with its dot (``"Report.PDF"`` → ``".pdf"``), or ``""``."""
    return os.path.splitext(filename.rsplit("/", 1)[-1])[1].lower()


def is_supported(filename: str) -> bool:
    return extension_of(filename) in _PARSERS


def parse_document(
    filename: str,
    data: bytes,
    *,
    max_bytes: int | None = None,
    limits: ParseLimits = DEFAULT_LIMITS,
    deadline: Deadline | None = None,
    recognizer: TextRecognizer | None = None,
) -> ParsedDocument:
    """Parse ``data`` by ``filename``'s extension, in time linear in its size.

    Raises, in this order of checks: :class:`UnsupportedDocument` (unknown extension),
    :class:`DocumentTooLarge` (more than ``max_bytes``, before any parsing; or expanding past
    ``limits`` while parsed), :class:`EmptyDocument` (empty, whitespace only, or nothing
    extractable), :class:`UnreadableDocument` (corrupt, encrypted, binary data under a text
    extension, text in no encoding it can be sure of, invalid JSON/CSV), and
    :class:`DocumentDeadlineExceeded` once ``deadline`` passes (pass the same one to
    :func:`chunk_document`; without one, a fresh :data:`DEFAULT_DOCUMENT_SECONDS` one).

    ``recognizer`` reads images and PDF pages without a text layer (OCR); without one, an image is
    :class:`UnsupportedDocument` and a scanned PDF :class:`EmptyDocument`, each saying OCR is off.

    Nothing else escapes, whatever the bytes: any other exception from a parser is an
    :class:`UnreadableDocument` naming its type (message cut to 200 characters, chained), and a
    :class:`MemoryError` a :class:`DocumentTooLarge` (retrying would run out of memory again).
    """
    ext = extension_of(filename)
    parser = _PARSERS.get(ext)
    if parser is None:
        supported = ", ".join(SUPPORTED_EXTENSIONS)
        shown = repr(ext) if ext else "(no extension)"
        raise UnsupportedDocument(
            f"Cannot parse {filename!r}: unsupported file type {shown}; supported types are {supported}.",
            filename=filename,
            reason="unsupported file type",
            extension=ext,
            supported=list(SUPPORTED_EXTENSIONS),
        )
    if max_bytes is not None and len(data) > max_bytes:
        raise DocumentTooLarge(
            f"Cannot parse {filename!r}: it is {len(data)} bytes, over the limit of {max_bytes} bytes.",
            filename=filename,
            reason="document too large",
            size_bytes=len(data),
            max_bytes=max_bytes,
        )
    if not data or data.isspace():
        raise _empty(filename, "the file is empty" if not data else "the file holds only whitespace")
    budget = ParseBudget(filename, limits, deadline or Deadline(DEFAULT_DOCUMENT_SECONDS), recognizer)
    out_of_memory = False
    try:
        with library_notes(filename) as notes:
            raw_sections, pages = parser(budget, data)
        budget.tick()
        budget.check_text(sum(len(raw.text) for raw in raw_sections))
        sections = [
            Section(text=text, heading_path=raw.heading_path, page=raw.page, header=raw.header.strip())
            for raw in raw_sections
            if (text := raw.text.strip())
        ]
    except RaglineError:
        raise
    except MemoryError:
        out_of_memory = True  # raised below, once this handler has dropped the parser's frames
    except Exception as exc:
        # The safety net: parsers map every failure they know of; one they do not (a library bug,
        # a corner no test reached) is still this file's fault, never an HTTP 500 or a retried event.
        _log.warning("unexpected %s while parsing %r", type(exc).__name__, filename, exc_info=True)
        reason = f"the {ext} parser failed ({_bounded(exc)})"
        raise UnreadableDocument(
            f"Cannot read {filename!r}: {reason}.",
            filename=filename,
            reason=reason,
            error_type=type(exc).__name__,
        ) from exc
    if out_of_memory:
        reason = "parsing it needed more memory than is available"
        raise DocumentTooLarge(
            f"Cannot parse {filename!r}: {reason}.", filename=filename, reason=reason, size_bytes=len(data)
        )
    if not sections:
        reason = ""
        if ext == ".pdf":
            off = " (scanned pages need OCR, which this deployment has turned off)"
            reason = "the PDF has no extractable text" + (off if recognizer is None else "")
        raise _empty(filename, reason or "it contains no text")
    return ParsedDocument(
        sections=sections, pages=pages, content_hash=hashlib.sha256(data).hexdigest(), notes=notes
    )


def _bounded(exc: Exception, limit: int = 200) -> str:
    """``Type: message`` with the message cut to ``limit`` characters (a library's message may quote
    the input: megabytes of it)."""
    try:
        text = " ".join(str(exc)[: limit * 2].split())[:limit]
    except Exception:  # a broken __str__ must not replace the error it describes
        text = ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _empty(filename: str, reason: str) -> EmptyDocument:
    return EmptyDocument(f"Nothing to index in {filename!r}: {reason}.", filename=filename, reason=reason)
