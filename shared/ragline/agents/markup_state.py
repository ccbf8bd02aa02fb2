"""The state a streaming markup filter carries, and the plumbing every part of its scanner shares.

:class:`~ragline.agents.text_calls.MarkupFilter` is one single-pass scanner whose concerns live in
separate modules -- tags in :mod:`~ragline.agents.markup_tags`, backticks and code fences in
:mod:`~ragline.agents.markup_fences`, prose and bare JSON in :mod:`~ragline.agents.text_calls`. They
share one set of fields, declared here: the scanner mode, the text held back while a block may still
be markup, and the output so far; and the few moves on them: emit text, hold it, release it unchanged,
drop it as markup, record it as calls, and start a nested filter for a block's inner text.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import Any, Final, Self

from ragline.agents.text_call_parsing import TextCall
from ragline.agents.tool_markup import CLOSE, Head, Tables

# Scanner modes: the first seven hold text back (bounded by max_block_chars), the rest do not.
TAG, HEAD, BODY, JSON, TICKS, INFO, FENCE = range(7)
TEXT, SKIP, CODE, INLINE = range(7, 11)
HELD: Final = frozenset({TAG, HEAD, BODY, JSON, TICKS, INFO, FENCE})


class ScannerState(ABC):
    """The fields and moves shared by the parts of :class:`~ragline.agents.text_calls.MarkupFilter`.

    ``feed`` and ``close`` are abstract so that a part can drive a nested filter (:meth:`_child`)
    without knowing the concrete class that assembles the parts.
    """

    calls: list[TextCall]
    removed: int

    # Shared by every part: the mode, the held block and whether non-space text has streamed yet.
    _mode: int
    _at_start: bool
    _held_len: int
    _raw: list[str]
    # Tags (markup_tags).
    _tag: str
    _head: Head
    _head_attrs: dict[str, Any]
    _fname: str
    _quote: str
    _eq: bool
    _body_start: int
    _body_len: int
    _tail: str
    _markers: re.Pattern[str] | None
    _keep: int
    # Bare JSON (text_calls).
    _jdepth: int
    _in_str: bool
    _esc: bool
    _expect: str
    # Backticks and fences (markup_fences).
    _ticks: int
    _inline: int
    _fence: int
    _info: str
    _run: int
    _sub: ScannerState | None
    # Fixed for the filter's life (and shared with its nested filters).
    _t: Tables
    _max: int
    _depth: int
    _out: list[str]

    @abstractmethod
    def feed(self, text: str) -> str:
        """Take the next delta of the turn; return the text that is safe to stream now (may be "")."""

    @abstractmethod
    def close(self) -> str:
        """End the turn: settle any held block and return the rest of the safe text."""

    def _reset(self) -> None:
        """Back to the start of a turn (the calls and removed count are kept)."""
        self._mode = TEXT
        self._at_start = True
        self._clear()
        self._head = Head(CLOSE, "", False)
        self._head_attrs = {}
        self._fname = ""
        self._quote = ""
        self._eq = False
        self._body_start = self._body_len = 0
        self._tail = ""
        self._markers = None
        self._keep = 0
        self._jdepth = 0
        self._in_str = self._esc = False
        self._expect = ""
        self._ticks = self._inline = self._fence = self._run = 0
        self._info = ""
        self._sub = None

    def _take(self) -> str:
        out = "".join(self._out)
        self._out = []
        return out

    def _emit(self, text: str) -> None:
        if text:
            self._out.append(text)
            if self._at_start and not text.isspace():
                self._at_start = False

    def _hold(self, text: str) -> None:
        self._raw.append(text)
        self._held_len += len(text)

    def _clear(self) -> None:
        self._raw = []
        self._held_len = 0
        self._tag = ""

    def _release(self) -> None:
        """Stream the held text unchanged."""
        self._emit("".join(self._raw))
        self._clear()

    def _drop(self) -> None:
        self.removed += 1
        self._clear()

    def _record(self, calls: list[TextCall]) -> None:
        self.calls.extend(calls)
        self._clear()

    def _child(self) -> Self:
        """A filter for a block's inner text: same tools, one level deeper (no fences inside)."""
        # Built without __init__: the tables are shared, the depth stops nesting (and fences).
        child = type(self).__new__(type(self))
        child.calls, child.removed = [], 0
        child._t, child._max, child._depth, child._out = self._t, self._max, self._depth + 1, []
        child._reset()
        return child
