"""The backtick part of the markup filter: inline code, code fences, and fences that hold a tool call.

Models wrap calls in fences (```` ```json ````, ```` ```tool_call ````, a plain ```` ``` ````...). A
fence whose info string may hold a call is held and its body fed to a nested filter: if that filter
finds only calls or tool markup, the fence is settled as such; at the first prose it is released as
code. Any other fence, and every inline code span, streams verbatim up to its closing backticks, and
markup inside it is not looked for (a model quoting ``<tool_call>`` in code is showing, not calling).
"""

from __future__ import annotations

import re
from typing import Final

from ragline.agents.markup_state import CODE, FENCE, INFO, INLINE, TEXT, TICKS, ScannerState
from ragline.agents.tool_markup import FENCE_INFOS

_MAX_INFO: Final = 32
"""Longest info string looked at: past it the fence is code, whatever it says."""
_TICK = re.compile("`")
_NOT_TICK = re.compile("[^`]")
_INLINE_STOP = re.compile("[`\n]")


def _is_info(c: str) -> bool:
    """A character that may be part of a fence's info string (``json``, ``tool_call``, ``c++``)."""
    return c.isascii() and (c.isalnum() or c in "_+.-")


class FenceScanning(ScannerState):
    """Scanner steps for backticks: inline code spans, fence openers, fence bodies."""

    def _inline_step(self, s: str, i: int) -> int:
        m = _INLINE_STOP.search(s, i)
        if m is None:
            self._emit(s[i:])
            return len(s)
        j = m.start()
        if s[j] == "\n":
            self._emit(s[i : j + 1])
            self._mode, self._inline = TEXT, 0
            return j + 1
        self._emit(s[i:j])
        self._mode, self._ticks = TICKS, 0
        return j

    def _ticks_step(self, s: str, k: int, end: int) -> int:
        m = _NOT_TICK.search(s, k, end)
        j = m.start() if m else end
        self._ticks += j - k
        self._held_len += j - k
        if m is None:
            return end
        run, self._ticks, self._held_len = self._ticks, 0, 0
        if self._inline and run == self._inline:  # closes the inline code span
            self._emit("`" * run)
            self._mode, self._inline = TEXT, 0
        elif run >= 3:
            self._mode, self._inline, self._fence, self._info = INFO, 0, run, ""
            self._hold("`" * run)
        else:
            self._emit("`" * run)
            self._mode, self._inline = INLINE, self._inline or run
        return j

    def _info_step(self, s: str, k: int, end: int) -> int:
        start = k
        while k < end and len(self._info) + k - start < _MAX_INFO and _is_info(s[k]):
            k += 1
        self._info += s[start:k]
        self._hold(s[start:k])
        if k == end and len(self._info) < _MAX_INFO:
            return k
        if self._info.lower() in FENCE_INFOS or self._info in self._t.names:
            self._mode, self._sub, self._run = FENCE, None, 0
        else:
            self._release()
            self._mode, self._run = CODE, 0
        return k

    def _fence_step(self, s: str, k: int, end: int) -> int:
        """The body of a fence that may be markup: held, and fed to a child filter to decide."""
        while k < end:
            if s[k] == "`":
                m = _NOT_TICK.search(s, k, end)
                j = m.start() if m else end
                if self._run + (j - k) >= self._fence:
                    stop = k + self._fence - self._run
                    self._hold(s[k:stop])
                    self._run = 0
                    self._finish_fence()
                    return stop
                self._hold(s[k:j])
                self._run += j - k
                k = j
                continue
            if self._run:
                run, self._run = self._run, 0
                if self._fence_feed("`" * run):
                    return k
            m = _TICK.search(s, k, end)
            j = m.start() if m else end
            self._hold(s[k:j])
            if self._fence_feed(s[k:j]):
                return j
            k = j
        return k

    def _fence_feed(self, text: str) -> bool:
        """Feed the fence's child filter; on prose, release the fence as code and say so."""
        if self._sub is None:
            if not text or text.isspace():
                return False  # a fresh filter would only echo it: start one when there is more
            self._sub = self._child()
        out = self._sub.feed(text)
        if out and not out.isspace():
            self._release()
            self._mode, self._sub = CODE, None
            return True
        return False

    def _finish_fence(self) -> None:
        sub, run = self._sub, self._run
        self._mode, self._sub, self._run = TEXT, None, 0
        if sub is None or run:
            self._release()
            return
        out = sub.close()
        if (not out or out.isspace()) and (sub.calls or sub.removed):
            self.removed += sub.removed
            self._record(sub.calls)
        else:
            self._release()

    def _code_step(self, s: str, k: int) -> int:
        """A fence that is not markup: stream it up to its closing backticks."""
        n = len(s)
        while k < n:
            if s[k] == "`":
                m = _NOT_TICK.search(s, k)
                j = m.start() if m else n
                if self._run + (j - k) >= self._fence:
                    stop = k + self._fence - self._run
                    self._emit(s[k:stop])
                    self._mode, self._run = TEXT, 0
                    return stop
                self._emit(s[k:j])
                self._run += j - k
                k = j
                continue
            self._run = 0
            m = _TICK.search(s, k)
            j = m.start() if m else n
            self._emit(s[k:j])
            k = j
        return k
