"""Tool calls a model writes as text, and tool markup that must never reach the client.

Weak self-hosted models (Qwen2.5 behind llama.cpp, vLLM or Ollama, small Llamas) often write a tool
call as *text* instead of a structured call, or echo a tool response back as their answer.
:class:`MarkupFilter` sits between the model's text deltas of one turn and the client: it streams the
prose, recognises text-form calls (:attr:`MarkupFilter.calls`, for the loop to run) and drops every
other block of tool markup (counted in :attr:`MarkupFilter.removed`).

Recognised calls (``NAME`` is one of ``tool_names``; a JSON call is ``{"name": NAME, "arguments":
{...}}``, with ``parameters`` (or ``args``, ``input``...) for ``arguments``, arguments given as an
object or as a JSON string of one; the OpenAI shapes ``{"function": {"name": ..., "arguments": ...}}``
and ``{"tool_calls": [...]}``; or a JSON list of calls):

- ``<tool_call>JSON call</tool_call>`` (Hermes, Qwen), also ``<tools>``, ``<tool_calls>``,
  ``<function_call>`` and the special-token forms ``<|tool_call|>...<|/tool_call|>`` (or
  ``<|tool_call_end|>``); inside them also the forms below and a Python-style ``NAME(key="value")``;
- ``<function=NAME>{"key": "value"}</function>`` (Llama 3.x), also with a body of
  ``<parameter=key>value</parameter>`` elements (Qwen3-Coder);
- a code fence (```` ```json ````, ```` ```tool_call ````, ```` ```xml ````, a plain ```` ``` ````...)
  whose whole body is a JSON call (or list of calls) or tool markup;
- a bare JSON call (or list of calls) as the first non-space text of the turn (prose may follow it;
  after a dropped block the next JSON is still "first"); bare JSON later in the turn is prose;
- a tag named after a tool: ``<NAME key="value"/>`` (attribute values that look like ints become ints),
  ``<NAME>{"key": "value"}</NAME>``, ``<NAME><key>value</key></NAME>`` and ``<NAME>plain text</NAME>``
  (``{"query": "plain text"}``).

Rules:

- Only names in ``tool_names`` are calls. Tag markup (``<tool_call>``, ``<function=...>``...) that is not
  a call -- an unknown tool, arguments that are not an object, unparseable -- is dropped and counted in
  :attr:`~MarkupFilter.removed`; JSON in a fence or bare JSON that is not a call is ordinary text and
  streams unchanged (a JSON call in them also needs an ``arguments`` key). A tag named after a tool that
  does not parse, and any tag whose head is not ``key="value"`` attributes (``<tools are great>``), is
  ordinary text too.
- Tool responses (``<tool_response>``, ``<tool_result>``, ``<|tool_response|>``...) and stray closing
  tags (``</tool_call>``) are dropped and counted.
- Everything else streams unchanged and as early as possible: text is held back only from a possible
  opener (a ``<`` that may start a known tag, three backticks, or ``{``/``[`` as the first non-space
  text of the turn) and released as soon as it cannot be markup. Ragline's ``<citation ids=.../>``, HTML,
  ``a < b``, inline code and code fences in other languages pass through. Inline code spans and the
  body of a fence that is not markup are passed through verbatim (markup inside them is not looked
  for); so is a block released as text (it is not rescanned). Whitespace around a dropped block is kept.
- The result does not depend on how the text is split into deltas: the same text gives the same
  output, calls and removed count, fed at once or a character at a time.
- Bounded: a block not closed within ``max_block_chars`` is released as text if it began with a fence,
  a brace or a tag named after a tool, or dropped (and counted) if it began with tool markup; in that
  case the rest of the block up to its closing tag is dropped too, without being held. At
  :meth:`~MarkupFilter.close` an unclosed block is parsed as a call (models often omit the closing
  tag), else released or dropped by the same rule. Scanning is linear in the text; JSON, Python-style
  and attribute parsing is guarded against hostile input.

This module holds the filter itself: its public face, the dispatch over scanner modes, prose and bare
JSON. The other parts of the scanner are in :mod:`~ragline.agents.markup_tags` (tags) and
:mod:`~ragline.agents.markup_fences` (backticks and fences), over the shared fields of
:mod:`~ragline.agents.markup_state`; what a block says is read by :mod:`~ragline.agents.text_call_parsing`
and the markup vocabulary is in :mod:`~ragline.agents.tool_markup`.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

from ragline.agents.markup_fences import FenceScanning
from ragline.agents.markup_state import (
    BODY,
    CODE,
    FENCE,
    HEAD,
    HELD,
    INFO,
    JSON,
    SKIP,
    TAG,
    TEXT,
    TICKS,
)
from ragline.agents.markup_tags import TagScanning
from ragline.agents.text_call_parsing import TextCall, calls_from_value, loads
from ragline.agents.tool_markup import TOOL, tables

__all__ = ["MarkupFilter", "TextCall"]

_JSON_WS: Final = frozenset(" \t\r\n")
_JSON_SPECIAL = re.compile(r'["{}\[\]]')
_STR_SPECIAL = re.compile(r'["\\]')
_NON_SPACE = re.compile(r"\S")


class MarkupFilter(TagScanning, FenceScanning):
    """Streams one model turn's text: prose out, text-form tool calls recorded, tool markup removed.

    Feed each text delta to :meth:`feed` and stream what it returns; call :meth:`close` at the end of
    the turn and stream that too. :attr:`calls` then holds the calls written as text, in order, and
    :attr:`removed` the number of markup blocks dropped that were not calls.
    """

    def __init__(self, tool_names: Collection[str], *, max_block_chars: int = 16_000) -> None:
        if max_block_chars < 1:
            raise ValueError("max_block_chars must be at least 1")
        self.calls = []
        self.removed = 0
        self._t = tables(frozenset(tool_names))
        self._max = max_block_chars
        self._depth = 0
        self._out = []
        self._reset()

    def feed(self, text: str) -> str:
        """Take the next delta of the turn; return the text that is safe to stream now (may be "")."""
        self._scan(text)
        return self._take()

    def close(self) -> str:
        """End the turn: settle any held block and return the rest of the safe text."""
        mode = self._mode
        if mode == TAG:
            head = self._t.heads.get(self._tag)
            if head is not None and head.open and head.kind != TOOL:
                self.removed += 1
            else:
                self._emit(self._tag)
        elif mode == HEAD:
            self._close_head()
        elif mode == BODY:
            text = "".join(self._raw)
            self._finish_body(text[self._body_start :], closed=False)
        elif mode == TICKS:
            self._emit("`" * self._ticks)
        elif mode in (JSON, INFO):
            self._release()
        elif mode == FENCE:
            self._finish_fence()
        out = self._take()
        self._reset()
        return out

    # -- the scanner: one mode at a time, each part of the markup in its own module ----------------

    def _scan(self, s: str) -> None:
        i, n = 0, len(s)
        while i < n:
            mode = self._mode
            if mode in HELD:
                room = self._max - self._held_len
                if room <= 0:
                    self._overflow()
                    continue
                end = min(n, i + room)
            else:
                end = n
            if mode == TEXT:
                i = self._text_step(s, i)
            elif mode == TAG:
                i = self._tag_step(s, i, end)
            elif mode == HEAD:
                i = self._head_step(s, i, end)
            elif mode in (BODY, SKIP):
                i = self._marker_step(s, i, end)
            elif mode == JSON:
                i = self._json_step(s, i, end)
            elif mode == TICKS:
                i = self._ticks_step(s, i, end)
            elif mode == INFO:
                i = self._info_step(s, i, end)
            elif mode == FENCE:
                i = self._fence_step(s, i, end)
            elif mode == CODE:
                i = self._code_step(s, i)
            else:
                i = self._inline_step(s, i)

    def _overflow(self) -> None:
        """A held block reached ``max_block_chars`` without closing."""
        mode = self._mode
        if mode in (HEAD, BODY) and self._head.kind != TOOL:
            self._drop()
            self._mode = SKIP if mode == BODY else TEXT
        elif mode == TAG:
            self._emit(self._tag)
            self._clear()
            self._mode = TEXT
        elif mode == TICKS:
            self._emit("`" * self._ticks)
            self._ticks = self._inline = 0
            self._held_len = 0
            self._mode = TEXT
        elif mode in (INFO, FENCE):
            self._release()
            self._mode, self._sub = CODE, None
            if mode == INFO:
                self._run = 0
        else:
            self._release()
            self._mode = TEXT

    # -- prose ------------------------------------------------------------------------------------

    def _text_step(self, s: str, i: int) -> int:
        n = len(s)
        if self._at_start:
            m = _NON_SPACE.search(s, i)
            if m is None:
                self._emit(s[i:])
                return n
            j = m.start()
            self._emit(s[i:j])
            if s[j] in "{[":
                self._mode = JSON
                self._hold(s[j])
                self._jdepth, self._expect, self._in_str, self._esc = 1, s[j], False, False
                return j + 1
            i = j
        opener = self._t.nested_opener if self._depth else self._t.opener
        m = opener.search(s, i)
        if m is None:
            self._emit(s[i:])
            return n
        j = m.start()
        self._emit(s[i:j])
        if s[j] == "`":
            self._mode, self._ticks = TICKS, 0
            return j
        self._mode, self._tag, self._held_len = TAG, "<", 1
        return j + 1

    # -- bare JSON --------------------------------------------------------------------------------

    def _json_step(self, s: str, k: int, end: int) -> int:
        start = k
        while k < end:
            if self._expect:  # the first thing inside must fit a call: {"... or [{...
                c = s[k]
                if c in _JSON_WS:
                    k += 1
                    continue
                if c != ('"' if self._expect == "{" else "{"):
                    self._hold(s[start:k])
                    self._release()
                    self._mode = TEXT
                    return k
                self._expect = ""
            if self._in_str:
                if self._esc:
                    self._esc = False
                    k += 1
                    continue
                m = _STR_SPECIAL.search(s, k, end)
                if m is None:
                    k = end
                    break
                k = m.end()
                if m.group() == "\\":
                    self._esc = True
                else:
                    self._in_str = False
                continue
            m = _JSON_SPECIAL.search(s, k, end)
            if m is None:
                k = end
                break
            k = m.end()
            c = m.group()
            if c == '"':
                self._in_str = True
            elif c in "{[":
                self._jdepth += 1
            else:
                self._jdepth -= 1
                if self._jdepth == 0:
                    self._hold(s[start:k])
                    self._finish_json()
                    return k
        self._hold(s[start:k])
        return k

    def _finish_json(self) -> None:
        self._mode = TEXT
        ok, value = loads("".join(self._raw))
        calls, all_calls = calls_from_value(value, self._t.names, strict=True) if ok else ([], False)
        if all_calls:
            self._record(calls)
        else:
            self._release()
