"""Citations rendered as ``[n]`` while the answer streams, so the terminal shows the answer once.

The model's text carries ``<citation ids="docId#3,docId#4"/>`` markers, and a marker can arrive cut
anywhere across text events (``<cita`` … ``tion ids="a#1"/>``). :class:`CitationMarks` holds only a
possible marker's start until it completes or can no longer be one, renders each complete marker as
``[n][m]`` — ``n`` numbering ids in the order the answer first cites them — and passes every other
character through at once. The numbers are the ones the sources are listed under afterwards.
"""

from __future__ import annotations

import re

MAX_HELD_CHARS = 2_000
"""A marker not closed within this many characters is released as plain text (bounded memory)."""

_MARKER = re.compile(r'<citation\s+ids="([^"]*)"\s*/?>|</citation\s*>')


def _prefixes(*parts: str) -> str:
    """A pattern matching every non-empty start of the sequence of ``parts`` (regex pieces)."""
    pattern = ""
    for part in reversed(parts[1:]):
        pattern = f"(?:{part}{pattern})?"
    return parts[0] + pattern


_UNFINISHED = re.compile(
    _prefixes("<", *"citation", r"\s+", *"ids=", '"', '[^"]*', '"', r"\s*", "/?")
    + "|"
    + _prefixes("<", "/", *"citation", r"\s*")
)
"""The starts of a marker that more text may complete."""


class CitationMarks:
    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}
        """Each cited id and its number, in the order of first citation."""
        self._held = ""

    def feed(self, text: str) -> str:
        """The part of the text so far that can be shown now, markers rendered."""
        self._held += text
        shown: list[str] = []
        while self._held:
            start = self._held.find("<")
            if start < 0:
                shown.append(self._held)
                self._held = ""
                break
            shown.append(self._held[:start])
            self._held = self._held[start:]
            if self._may_grow_into_marker():
                break
            match = _MARKER.match(self._held)
            if match is None:  # not a marker: the "<" is text
                shown.append("<")
                self._held = self._held[1:]
                continue
            shown.append(self._marks(match.group(1)))
            self._held = self._held[match.end() :]
        return "".join(shown)

    def flush(self) -> str:
        """What is still held, at the end of the text, as it is (an unfinished marker is text)."""
        rest, self._held = self._held, ""
        return rest

    def _may_grow_into_marker(self) -> bool:
        """Whether the held text (starting at "<") is an unfinished marker that more text may complete."""
        return len(self._held) <= MAX_HELD_CHARS and _UNFINISHED.fullmatch(self._held) is not None

    def _marks(self, ids: str | None) -> str:
        if ids is None:  # a closing tag renders as nothing
            return ""
        out = []
        for cited in (i.strip() for i in ids.split(",")):
            if cited:
                number = self.numbers.setdefault(cited, len(self.numbers) + 1)
                out.append(f"[{number}]")
        return "".join(out)
