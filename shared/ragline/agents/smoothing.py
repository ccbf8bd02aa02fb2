"""Word smoothing of a run's stream (like Agentset's ``smoothStream({chunking: "word"})``, with no delay).

A model streams text in pieces that cut words anywhere (``"Bic"``, ``"ycles can be ret"``);
:func:`smooth_words` re-cuts the text events so each one carries whole words, and passes every
other event through in its place. Only the cutting changes: the text, joined, is the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ragline.agents.events import AnswerDelta, RunEvent

MAX_HELD_CHARS = 200
"""Text with no whitespace held longer than this is released in pieces of this size (bounded memory)."""

_WORD = re.compile(r"\s*\S+\s+")
"""One word and its trailing whitespace (whitespace before it, at the start of the text, rides along)."""


def smooth_words(events: Iterable[RunEvent]) -> Iterator[RunEvent]:
    """``events`` with each text event cut into whole words (``\\S+\\s+``), in order.

    A trailing partial word is held until more text completes it. Any other event first releases
    what is held (as one text event), then passes through unchanged; the end releases the rest.
    """
    held = ""
    for event in events:
        if isinstance(event, AnswerDelta):
            held += event.text
            pieces, held = _cut(held)
            for piece in pieces:
                yield AnswerDelta(text=piece)
            continue
        if held:
            yield AnswerDelta(text=held)
            held = ""
        yield event
    if held:
        yield AnswerDelta(text=held)


def _cut(text: str) -> tuple[list[str], str]:
    """The whole words at the start of ``text`` (pieces of at most :data:`MAX_HELD_CHARS` of an
    overlong rest) and the rest to hold."""
    pieces: list[str] = []
    at = 0
    while (match := _WORD.match(text, at)) is not None:
        pieces.append(match.group())
        at = match.end()
    while len(text) - at > MAX_HELD_CHARS:
        pieces.append(text[at : at + MAX_HELD_CHARS])
        at += MAX_HELD_CHARS
    return pieces, text[at:]
