"""What parsing and chunking one document may spend: time, unpacked bytes, extracted text.

Every parser runs in time linear in its input, but a large input still takes long and some formats
expand (a zip member, JSON key paths repeated per value). These bounds turn such files into a
``failed`` record with a reason, well inside the ingestion function's 300 s and its memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ragline.errors import DocumentDeadlineExceeded, DocumentTooLarge

MiB = 1024 * 1024

DEFAULT_DOCUMENT_SECONDS = 120.0
"""Parse + chunk budget of one document: leaves the 300 s function time to embed and write."""


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


DEFAULT_LIMITS = ParseLimits()


class ParseBudget:
    """One parse's running account: the shared deadline, and the text extracted so far."""

    def __init__(self, filename: str, limits: ParseLimits, deadline: Deadline) -> None:
        self.filename = filename
        self.limits = limits
        self.deadline = deadline
        self.text_chars = 0

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
