"""What every format parser returns, and the one way parsers say a file cannot be read."""

from __future__ import annotations

from typing import NamedTuple

from ragline.errors import UnreadableDocument


class RawSection(NamedTuple):
    text: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    header: str = ""
    """Lines every chunk of this section starts with (a table's caption and header row): the
    section's ``text`` is then one unit per line (a table's rows), never split inside one."""


Parsed = tuple[list[RawSection], int]
"""``(sections, pages)``: :mod:`.parsers` validates and wraps it."""


MAX_IMAGE_NOTE_CHARS = 1000


def image_note(description: str) -> str:
    """An embedded image's description (alt text) as it stands in the text: ``[Image: …]``, whitespace
    collapsed and cut at :data:`MAX_IMAGE_NOTE_CHARS`; ``""`` for an image without one."""
    text = " ".join(description.split())[:MAX_IMAGE_NOTE_CHARS]
    return f"[Image: {text}]" if text else ""


def short_error(exc: BaseException | None) -> str:
    """A library exception as ``Type: message`` (first 200 characters) for a reason text."""
    if exc is None:
        return ""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:200]}" if text else type(exc).__name__


def unreadable(filename: str, reason: str) -> UnreadableDocument:
    return UnreadableDocument(f"Cannot read {filename!r}: {reason}.", filename=filename, reason=reason)
