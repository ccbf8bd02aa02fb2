"""What parsing and chunking one document may spend: time, unpacked bytes, extracted text.

Every parser runs in time linear in its input, but a large input still takes long and some formats
expand (a zip member, JSON key paths repeated per value). These bounds turn such files into a
``failed`` record with a reason, well inside the ingestion function's 300 s and its memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragline.errors import DocumentDeadlineExceeded, DocumentTooLarge

if TYPE_CHECKING:
    from ragline.ports import TextRecognizer

MiB = 1024 * 1024

DEFAULT_DOCUMENT_SECONDS = 120.0
"""Parse + chunk budget of one document: leaves the 300 s function time to embed and write."""

MAX_HEADING_CHARS = 200
"""One heading as a chunk carries it: a longer one is cut (with ``…``); headings are for citing."""
MAX_HEADING_PATH_CHARS = 600
"""A chunk's whole heading path: the nearest headings are kept, outer ones give way to ``…``."""
DEFAULT_MAX_CHUNK_BYTES = 256 * MiB
"""What one document's chunks may total (UTF-8 text, sentence window and metadata): a prose or
JSON file at the upload limit stays well under it (about 2.5x its text: ~130 MB), while no file can make
the store write gigabytes for it."""
ELIDED = "…"


def bounded_heading_path(path: tuple[str, ...]) -> tuple[str, ...]:
    """``path`` within :data:`MAX_HEADING_CHARS` per heading and :data:`MAX_HEADING_PATH_CHARS` in
    all, keeping the headings nearest the text; a dropped outer part becomes one ``…`` entry."""
    if sum(map(len, path)) <= MAX_HEADING_PATH_CHARS and max(map(len, path), default=0) <= MAX_HEADING_CHARS:
        return path
    kept: list[str] = []
    room = MAX_HEADING_PATH_CHARS - len(ELIDED)
    for title in reversed(path):
        heading = title
        if len(title) > MAX_HEADING_CHARS:
            heading = title[: MAX_HEADING_CHARS - len(ELIDED)].rstrip() + ELIDED
        if len(heading) > room:
            kept.append(ELIDED)
            break
        kept.append(heading)
        room -= len(heading)
    return tuple(reversed(kept))


class ChunkBytes:
    """One document's running total of chunk bytes; past ``limit``, :class:`DocumentTooLarge`."""

    def __init__(self, filename: str, limit: int) -> None:
        self.filename = filename
        self.limit = limit
        self.total = 0

    def add(self, *texts: str) -> None:
        self.total += sum(len(text.encode()) for text in texts)
        if self.total > self.limit:
            reason = (
                f"its chunks (text, sentence windows and metadata) exceed the limit of {self.limit:,} bytes"
                " for one document"
            )
            raise DocumentTooLarge(
                f"Cannot index {self.filename!r}: {reason}.",
                filename=self.filename,
                reason=reason,
                max_chunk_bytes=self.limit,
            )


class Deadline:
    """The moment one document's parsing and chunking must be done by; loops call :meth:`check`.

    One instance spans both stages, so the budget is for the whole document. Cooperative: the check
    runs between units of work (a page, a paragraph, a batch of sentences), never interrupts one.
    """

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._ends = clock() + seconds

    def check(self, filename: str) -> None:
        """Raise :class:`DocumentDeadlineExceeded` once the budget is spent."""
        if self._clock() > self._ends:
            reason = f"parsing and chunking took longer than the {self.seconds:g} s budget"
            raise DocumentDeadlineExceeded(
                f"Gave up on {filename!r}: {reason}.",
                filename=filename,
                reason=reason,
                budget_seconds=self.seconds,
            )


@dataclass(frozen=True)
class ParseLimits:
    """Bounds on what a file may expand to while it is parsed."""

    max_unpacked_bytes: int = 256 * MiB
    """Sum of the declared sizes of a zip container's members (DOCX), checked before reading any."""
    max_compression_ratio: float = 100.0
    """Declared size over compressed size of one member, for members over ``ratio_free_bytes``
    (XML compresses 5-20:1; deflate tops out near 1000:1, which is what zip bombs use)."""
    ratio_free_bytes: int = 16 * MiB
    """Members up to this size are never refused for their ratio: small is harmless."""
    max_pdf_pages: int = 20_000
    """Pages of one PDF, checked against the page tree's count before any page is read: plain text
    pages parse at a few milliseconds each, so this many fit the parse deadline."""
    max_text_chars: int = 64 * MiB
    """Extracted text of one document: above the 50 MiB upload limit, so a plain text file at the
    upload limit always fits, while JSON/CSV flattening or a DOCX cannot grow without bound."""
    max_image_pixels: int = 50_000_000
    """Pixels of one image or image page (an A4 page scanned at 600 dpi is 35 million), checked from
    the image's header before it is decoded: a few kilobytes of PNG can declare gigapixels."""
    max_ocr_pages: int = 500
    """Pages of one document read by OCR (scanned PDF pages, a TIFF's frames); each page's own time is
    bounded by its pixels (:data:`~ragline.documents.images.OCR_DPI`) and the document's deadline."""


DEFAULT_LIMITS = ParseLimits()


class ParseBudget:
    """One parse's running account: the shared deadline, the text extracted so far, and the OCR engine
    image pages are read with (``None``: the deployment reads no images)."""

    def __init__(
        self, filename: str, limits: ParseLimits, deadline: Deadline, recognizer: TextRecognizer | None = None
    ) -> None:
        self.filename = filename
        self.limits = limits
        self.deadline = deadline
        self.recognizer = recognizer
        self.text_chars = 0
        self.ocr_pages = 0

    def tick(self) -> None:
        self.deadline.check(self.filename)

    def add_text(self, chars: int) -> None:
        """Count ``chars`` more characters of extracted text; refuse past ``max_text_chars``."""
        self.text_chars += chars
        self.check_text(self.text_chars)

    def check_text(self, total_chars: int) -> None:
        """Refuse a document whose extracted text totals more than ``max_text_chars``."""
        limit = self.limits.max_text_chars
        if total_chars > limit:
            reason = f"its extracted text exceeds the limit of {limit} characters"
            raise DocumentTooLarge(
                f"Cannot index {self.filename!r}: {reason}.",
                filename=self.filename,
                reason=reason,
                max_text_chars=limit,
            )
