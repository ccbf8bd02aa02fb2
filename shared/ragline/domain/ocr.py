"""What OCR reads off a page image: one line of text and its box.

A pure data type, in the domain so that the :class:`~ragline.ports.TextRecognizer` port (which
returns it) and the parsers that lay it out (:mod:`ragline.documents.page_text`) both depend on the
domain rather than on each other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TextLine:
    """One line of recognised text and its box (pixels, origin top left)."""

    text: str
    left: float
    top: float
    right: float
    bottom: float
    confidence: float = 1.0

    @property
    def height(self) -> float:
        return max(1.0, self.bottom - self.top)

    @property
    def width(self) -> float:
        return max(1.0, self.right - self.left)

    @property
    def middle(self) -> float:
        return (self.top + self.bottom) / 2
