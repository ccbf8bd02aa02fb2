"""The tag part of the markup filter: ``<tool_call>``, ``<function=...>``, ``<|tool_call|>``, ``<NAME .../>``.

A ``<`` that may open a known tag is held while its name is matched against the opener tables, then
its head (``key="value"`` attributes up to ``>``) and its body up to a closing tag -- or up to the next
opener of the same kind, since models often omit the closing tag. The settled block becomes calls,
is dropped as markup (a tool response, an unknown tool), or is released as text (``<tools are great>``,
a tag named after a tool that does not parse).
"""

from __future__ import annotations

from typing import Any, Final

from ragline.agents.markup_state import BODY, HEAD, TAG, TEXT, ScannerState
from ragline.agents.text_call_parsing import (
    TextCall,
    calls_from_value,
    function_args,
    loads_lenient,
    make_call,
    parse_attrs,
    python_calls,
    tool_args,
)
from ragline.agents.tool_markup import CALL, CLOSE, FUNCTION, RESPONSE, TOOL, marker_pattern

_DELIMS: Final = frozenset(" \t\r\n>/")
_MAX_NESTING: Final = 2
"""Levels of markup parsed inside a call tag (``<tool_call><function=...>`` is one); deeper is text."""


class TagScanning(ScannerState):
    """Scanner steps for tag markup: the opener, the head, the body and what it settles to."""

    def _tag_step(self, s: str, k: int, end: int) -> int:
        heads, prefixes = self._t.heads, self._t.prefixes
        while k < end:
            c = s[k]
            candidate = self._tag + c
            if candidate in prefixes:
                self._tag = candidate
                self._held_len += 1
                k += 1
                head = heads.get(candidate)
                if head is not None and not head.open:
                    self._head = head
                    if head.kind == CLOSE:
                        self._drop()
                        self._mode = TEXT
                    else:
                        self._raw = [candidate]
                        self._start_body()
                    return k
                continue
            head = heads.get(self._tag)
            if head is not None and head.open and (c in _DELIMS or (c == "=" and head.kind == FUNCTION)):
                self._head, self._raw = head, [self._tag]
                self._quote, self._eq = "", False
                self._mode = HEAD
                return k
            self._emit(self._tag)
            self._clear()
            self._mode = TEXT
            return k
        return k

    def _head_step(self, s: str, k: int, end: int) -> int:
        start = k
        while k < end:
            c = s[k]
            if self._quote:
                j = s.find(self._quote, k, end)
                if j < 0:
                    k = end
                    break
                self._quote, self._eq = "", False
                k = j + 1
                continue
            if c == ">":
                self._hold(s[start : k + 1])
                self._head_done()
                return k + 1
            if c == "<":  # not a tag after all: release what was held, rescan the "<"
                self._hold(s[start:k])
                self._release()
                self._mode = TEXT
                return k
            if c in "\"'" and self._eq:
                self._quote = c
            elif c == "=":
                self._eq = True
            elif not c.isspace():
                self._eq = False
            k += 1
        self._hold(s[start:k])
        return k

    def _head_text(self) -> str:
        return "".join(self._raw)[len(self._tag) :]

    def _head_done(self) -> None:
        """A tag's head ended with ``>``: a self-closing tag is settled, else its body starts."""
        head = self._head
        text = self._head_text()[:-1].rstrip()
        self_closing = text.endswith("/")
        if self_closing:
            text = text[:-1]
        self._mode = TEXT
        attrs = parse_attrs(text)
        if head.kind == FUNCTION and text.strip().startswith("="):
            self._fname = text.strip()[1:].strip()
        elif attrs is None:  # not attributes (``<tools are great>``): prose, not a tag
            self._release()
            return
        elif head.kind == FUNCTION:
            name = attrs.get("name")
            self._fname = name if isinstance(name, str) else ""
        self._head_attrs = attrs or {}
        if not self_closing:
            self._start_body()
        elif head.kind == TOOL:
            self._tool_call(head.name, self._head_attrs)
        elif head.kind == FUNCTION:
            self._function_call({})
        else:
            self._drop()

    def _close_head(self) -> None:
        """End of turn inside a tag's head (``<search query="x"`` with no ``>``)."""
        if self._head.kind != TOOL:
            self._drop()
            return
        text = self._head_text().rstrip()
        attrs = parse_attrs(text.removesuffix("/"))
        if attrs:
            self._tool_call(self._head.name, attrs)
        else:
            self._release()

    def _start_body(self) -> None:
        head = self._head
        self._mode = BODY
        self._body_start, self._body_len, self._tail = self._held_len, 0, ""
        self._markers, self._keep = marker_pattern(head.closers + head.stops)

    def _marker_step(self, s: str, k: int, end: int) -> int:
        """Look for the end of a tag's body (held in BODY, discarded in SKIP)."""
        assert self._markers is not None
        store = self._mode == BODY
        piece = s[k:end]
        window = self._tail + piece
        m = self._markers.search(window)
        if m is None:
            if store:
                self._hold(piece)
                self._body_len += len(piece)
            self._tail = window[max(0, len(window) - self._keep) :]
            return end
        consumed = m.end() - len(self._tail)
        marker = m.group()
        if store:
            self._hold(piece[:consumed])
            body_end = self._body_start + self._body_len - len(self._tail) + m.start()
            self._finish_body("".join(self._raw)[self._body_start : body_end], closed=True)
        self._mode, self._tail = TEXT, ""
        self._clear()
        if marker in self._head.stops:  # the next block's opener: rescan its last character as a tag
            self._mode, self._tag = TAG, marker[:-1]
            self._held_len = len(self._tag)
            return k + consumed - 1
        return k + consumed

    def _finish_body(self, body: str, *, closed: bool) -> None:
        head = self._head
        self._mode = TEXT
        if head.kind == RESPONSE:
            self._drop()
        elif head.kind == CALL:
            self._markup_calls(body)
        elif head.kind == FUNCTION:
            if self._fname:
                args = function_args(body)
                if args is None:
                    self._drop()
                else:
                    self._function_call(args)
            else:
                self._markup_calls(body)
        else:
            args = tool_args(head.name, body, self._t.names, closed=closed)
            if args is None:
                self._release()
            else:
                self._tool_call(head.name, {**self._head_attrs, **args})

    def _tool_call(self, name: str, args: dict[str, Any]) -> None:
        call = make_call(name, args)
        if call is None:
            self._release()
        else:
            self._record([call])

    def _function_call(self, args: dict[str, Any]) -> None:
        call = make_call(self._fname, args) if self._fname in self._t.names else None
        if call is None:
            self._drop()
        else:
            self._record([call])

    def _markup_calls(self, body: str) -> None:
        """Settle a call tag's body: record its calls; count it removed unless it was all calls."""
        calls, ok = self._parse_markup(body)
        self.calls.extend(calls)
        if not (ok and calls):
            self.removed += 1
        self._clear()

    def _parse_markup(self, body: str) -> tuple[list[TextCall], bool]:
        """The calls in a call tag's body (JSON, Python-style or nested markup), and if all was calls."""
        text = body.strip()
        if not text:
            return [], False
        if text[0] in "{[":
            ok, value = loads_lenient(text)
            if ok:
                return calls_from_value(value, self._t.names, strict=False)
        parsed = python_calls(text, self._t.names)
        if parsed is not None:
            return parsed
        if self._depth < _MAX_NESTING and "<" in text:
            child = self._child()
            out = child.feed(text) + child.close()
            if child.calls and (not out or out.isspace()):
                return child.calls, child.removed == 0
        return [], False
