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
"""

from __future__ import annotations

import ast
import html
import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final


@dataclass(frozen=True)
class TextCall:
    """A tool call the model wrote as text."""

    name: str
    arguments: str
    """JSON object text: ``json.dumps`` of the arguments."""


# -- markup vocabulary ------------------------------------------------------------------------------

_CALL_TAGS: Final = ("tool_call", "tool_calls", "tools", "function_call", "function_calls")
_RESPONSE_TAGS: Final = (
    "tool_response",
    "tool_responses",
    "tool_result",
    "tool_results",
    "tool_output",
    "tool_outputs",
    "function_response",
    "function_result",
    "function_results",
)
_PIPE_SUFFIXES: Final = ("", "_start", "_begin")
_FENCE_INFOS: Final = frozenset(
    {"", "json", "jsonc", "json5", "xml", "tool", "tools", "tool_call", "tool_calls", "tool_code"}
    | {"toolcall", "function", "function_call", "functions"}
)
_NAME_KEYS: Final = ("name", "tool", "tool_name", "function", "action")
_ARG_KEYS: Final = ("arguments", "parameters", "args", "input", "tool_input", "action_input")
_CALL_EXTRA_KEYS: Final = frozenset({"id", "type", "index", "call_id"})
_CALL_TYPES: Final = ("function", "tool_call", "tool_use")
_MAX_NESTING: Final = 2
_MAX_INFO: Final = 32

# Kinds of tag.
_CALL, _RESPONSE, _FUNCTION, _TOOL, _CLOSE = range(5)

# Scanner modes: the first five hold text back (bounded by max_block_chars), the rest do not.
_TAG, _HEAD, _BODY, _JSON, _TICKS, _INFO, _FENCE = range(7)
_TEXT, _SKIP, _CODE, _INLINE = range(7, 11)
_HELD: Final = frozenset({_TAG, _HEAD, _BODY, _JSON, _TICKS, _INFO, _FENCE})

_TAG_NAME = re.compile(r"[A-Za-z_][\w.-]*", re.ASCII)
_DELIMS: Final = frozenset(" \t\r\n>/")
_JSON_WS: Final = frozenset(" \t\r\n")
_JSON_SPECIAL = re.compile(r'["{}\[\]]')
_STR_SPECIAL = re.compile(r'["\\]')
_TICK = re.compile("`")
_NOT_TICK = re.compile("[^`]")
_INLINE_STOP = re.compile("[`\n]")
_NON_SPACE = re.compile(r"\S")
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_ATTR = re.compile(r"""\s*([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>=`/]+))""", re.ASCII)
_PY_CALL = re.compile(r"\[?\s*[A-Za-z_]\w*\s*\(", re.ASCII)


@dataclass(frozen=True)
class _Head:
    """A known tag opener: what it is and how its block ends."""

    kind: int
    name: str
    open: bool
    """True for ``<name``, which needs a delimiter and a head up to ``>``; False for complete tokens."""
    closers: tuple[str, ...] = ()
    stops: tuple[str, ...] = ()
    """Openers of a next block of the same kind: they end this one (a missing closing tag)."""


@dataclass(frozen=True)
class _Tables:
    names: frozenset[str]
    heads: Mapping[str, _Head]
    prefixes: frozenset[str]
    opener: re.Pattern[str]
    nested_opener: re.Pattern[str]


@lru_cache(maxsize=64)
def _tables(names: frozenset[str]) -> _Tables:
    heads: dict[str, _Head] = {}
    for name in names:
        if _TAG_NAME.fullmatch(name):
            heads["<" + name] = _Head(_TOOL, name, True, (f"</{name}>",))
    for name in _CALL_TAGS + _RESPONSE_TAGS:
        kind = _CALL if name in _CALL_TAGS else _RESPONSE
        heads["<" + name] = _Head(kind, name, True, (f"</{name}>",), (f"<{name}>", f"<{name} ", f"<{name}\n"))
        heads[f"</{name}>"] = _Head(_CLOSE, name, False)
        closers = (f"<|/{name}|>", f"<|{name}_end|>", f"<|end_{name}|>", f"</{name}>")
        for suffix in _PIPE_SUFFIXES:
            token = f"<|{name}{suffix}|>"
            heads[token] = _Head(kind, name, False, closers, (token,))
        for closer in closers[:3]:
            heads[closer] = _Head(_CLOSE, name, False)
    heads["<function"] = _Head(
        _FUNCTION, "function", True, ("</function>",), ("<function=", "<function>", "<function ")
    )
    heads["</function>"] = _Head(_CLOSE, "function", False)
    prefixes = frozenset(head[:i] for head in heads for i in range(1, len(head) + 1))
    second = "".join(sorted({re.escape(head[1]) for head in heads}))
    tag = f"<(?![^{second}])"
    return _Tables(names, heads, prefixes, re.compile(f"`|{tag}"), re.compile(tag))


@lru_cache(maxsize=256)
def _marker_pattern(markers: tuple[str, ...]) -> tuple[re.Pattern[str], int]:
    ordered = sorted(markers, key=len, reverse=True)
    return re.compile("|".join(re.escape(m) for m in ordered)), max(map(len, markers)) - 1


# -- parsing helpers --------------------------------------------------------------------------------


def _loads(text: str) -> tuple[bool, Any]:
    """``json.loads`` that reports failure instead of raising (also on hostile nesting)."""
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def _loads_lenient(text: str) -> tuple[bool, Any]:
    """Like :func:`_loads`, also accepting extra closing brackets after the value (a common slip)."""
    ok, value = _loads(text)
    if ok:
        return ok, value
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return False, None
    return (not text[end:].strip(" \t\r\n}]")), value


def _args(value: Any) -> dict[str, Any] | None:
    """Call arguments from an object or a JSON string of one; None if not an object (or a schema)."""
    if isinstance(value, str):
        if not value.strip():
            return {}
        ok, value = _loads(value)
        if not ok:
            return None
    if not isinstance(value, dict):
        return None
    if value.get("type") == "object" and "properties" in value:
        return None  # an echoed tool definition's parameter schema, not arguments
    return value


def _scalar(value: str) -> Any:
    return int(value) if _INT.fullmatch(value) else value


def _attrs(text: str) -> dict[str, Any] | None:
    """``key="value"`` attributes (any quotes, or none); None unless the text is all attributes."""
    out: dict[str, Any] = {}
    pos = 0
    while (m := _ATTR.match(text, pos)) is not None:
        value = next(g for g in m.groups()[1:] if g is not None)
        out[m.group(1)] = _scalar(html.unescape(value))
        pos = m.end()
    return out if not text[pos:].strip() else None


def _param_value(text: str) -> Any:
    value = text.strip()
    if value[:1] in ("{", "["):
        ok, parsed = _loads(value)
        if ok:
            return parsed
    return _scalar(value)


def _elements(text: str) -> dict[str, Any] | None:
    """A body of ``<key>value</key>`` or ``<parameter=key>value</parameter>`` elements, else None."""
    out: dict[str, Any] = {}
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos].isspace():
            pos += 1
        if pos == n:
            return out or None
        if text.startswith("<parameter=", pos):
            gt = text.find(">", pos)
            if gt < 0:
                return None
            key, closer = text[pos + len("<parameter=") : gt].strip(), "</parameter>"
        else:
            m = _TAG_NAME.match(text, pos + 1) if text.startswith("<", pos) else None
            if m is None or not text.startswith(">", m.end()):
                return None
            key, gt = m.group(), m.end()
            closer = f"</{key}>"
        end = text.find(closer, gt + 1)
        if not key or end < 0:
            return None
        out[key] = _param_value(text[gt + 1 : end])
        pos = end + len(closer)


def _is_info(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c in "_+.-")


def _make_call(name: str, args: dict[str, Any]) -> TextCall | None:
    try:
        return TextCall(name=name, arguments=json.dumps(args))
    except (TypeError, ValueError, RecursionError):
        return None


# -- the filter -------------------------------------------------------------------------------------


class MarkupFilter:
    """Streams one model turn's text: prose out, text-form tool calls recorded, tool markup removed.

    Feed each text delta to :meth:`feed` and stream what it returns; call :meth:`close` at the end of
    the turn and stream that too. :attr:`calls` then holds the calls written as text, in order, and
    :attr:`removed` the number of markup blocks dropped that were not calls.
    """

    calls: list[TextCall]
    removed: int

    _mode: int
    _at_start: bool
    _held_len: int
    _raw: list[str]
    _tag: str
    _head: _Head
    _head_attrs: dict[str, Any]
    _fname: str
    _quote: str
    _eq: bool
    _body_start: int
    _body_len: int
    _tail: str
    _markers: re.Pattern[str] | None
    _keep: int
    _jdepth: int
    _in_str: bool
    _esc: bool
    _expect: str
    _ticks: int
    _inline: int
    _fence: int
    _info: str
    _run: int
    _sub: MarkupFilter | None

    def __init__(self, tool_names: Collection[str], *, max_block_chars: int = 16_000) -> None:
        if max_block_chars < 1:
            raise ValueError("max_block_chars must be at least 1")
        self.calls = []
        self.removed = 0
        self._t = _tables(frozenset(tool_names))
        self._max = max_block_chars
        self._depth = 0
        self._out: list[str] = []
        self._reset()

    def feed(self, text: str) -> str:
        """Take the next delta of the turn; return the text that is safe to stream now (may be "")."""
        self._scan(text)
        return self._take()

    def close(self) -> str:
        """End the turn: settle any held block and return the rest of the safe text."""
        mode = self._mode
        if mode == _TAG:
            head = self._t.heads.get(self._tag)
            if head is not None and head.open and head.kind != _TOOL:
                self.removed += 1
            else:
                self._emit(self._tag)
        elif mode == _HEAD:
            self._close_head()
        elif mode == _BODY:
            text = "".join(self._raw)
            self._finish_body(text[self._body_start :], closed=False)
        elif mode == _TICKS:
            self._emit("`" * self._ticks)
        elif mode in (_JSON, _INFO):
            self._release()
        elif mode == _FENCE:
            self._finish_fence()
        out = self._take()
        self._reset()
        return out

    # -- plumbing ----------------------------------------------------------------------------------

    def _reset(self) -> None:
        self._mode = _TEXT
        self._at_start = True
        self._clear()
        self._head = _Head(_CLOSE, "", False)
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

    def _child(self) -> MarkupFilter:
        """A filter for a block's inner text: same tools, one level deeper (no fences inside)."""
        child = MarkupFilter.__new__(MarkupFilter)
        child.calls, child.removed = [], 0
        child._t, child._max, child._depth, child._out = self._t, self._max, self._depth + 1, []
        child._reset()
        return child

    def _scan(self, s: str) -> None:
        i, n = 0, len(s)
        while i < n:
            mode = self._mode
            if mode in _HELD:
                room = self._max - self._held_len
                if room <= 0:
                    self._overflow()
                    continue
                end = min(n, i + room)
            else:
                end = n
            if mode == _TEXT:
                i = self._text_step(s, i)
            elif mode == _TAG:
                i = self._tag_step(s, i, end)
            elif mode == _HEAD:
                i = self._head_step(s, i, end)
            elif mode in (_BODY, _SKIP):
                i = self._marker_step(s, i, end)
            elif mode == _JSON:
                i = self._json_step(s, i, end)
            elif mode == _TICKS:
                i = self._ticks_step(s, i, end)
            elif mode == _INFO:
                i = self._info_step(s, i, end)
            elif mode == _FENCE:
                i = self._fence_step(s, i, end)
            elif mode == _CODE:
                i = self._code_step(s, i)
            else:
                i = self._inline_step(s, i)

    def _overflow(self) -> None:
        """A held block reached ``max_block_chars`` without closing."""
        mode = self._mode
        if mode in (_HEAD, _BODY) and self._head.kind != _TOOL:
            self._drop()
            self._mode = _SKIP if mode == _BODY else _TEXT
        elif mode == _TAG:
            self._emit(self._tag)
            self._clear()
            self._mode = _TEXT
        elif mode == _TICKS:
            self._emit("`" * self._ticks)
            self._ticks = self._inline = 0
            self._held_len = 0
            self._mode = _TEXT
        elif mode in (_INFO, _FENCE):
            self._release()
            self._mode, self._sub = _CODE, None
            if mode == _INFO:
                self._run = 0
        else:
            self._release()
            self._mode = _TEXT

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
                self._mode = _JSON
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
            self._mode, self._ticks = _TICKS, 0
            return j
        self._mode, self._tag, self._held_len = _TAG, "<", 1
        return j + 1

    def _inline_step(self, s: str, i: int) -> int:
        m = _INLINE_STOP.search(s, i)
        if m is None:
            self._emit(s[i:])
            return len(s)
        j = m.start()
        if s[j] == "\n":
            self._emit(s[i : j + 1])
            self._mode, self._inline = _TEXT, 0
            return j + 1
        self._emit(s[i:j])
        self._mode, self._ticks = _TICKS, 0
        return j

    # -- tags -------------------------------------------------------------------------------------

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
                    if head.kind == _CLOSE:
                        self._drop()
                        self._mode = _TEXT
                    else:
                        self._raw = [candidate]
                        self._start_body()
                    return k
                continue
            head = heads.get(self._tag)
            if head is not None and head.open and (c in _DELIMS or (c == "=" and head.kind == _FUNCTION)):
                self._head, self._raw = head, [self._tag]
                self._quote, self._eq = "", False
                self._mode = _HEAD
                return k
            self._emit(self._tag)
            self._clear()
            self._mode = _TEXT
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
                self._mode = _TEXT
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
        self._mode = _TEXT
        attrs = _attrs(text)
        if head.kind == _FUNCTION and text.strip().startswith("="):
            self._fname = text.strip()[1:].strip()
        elif attrs is None:  # not attributes (``<tools are great>``): prose, not a tag
            self._release()
            return
        elif head.kind == _FUNCTION:
            name = attrs.get("name")
            self._fname = name if isinstance(name, str) else ""
        self._head_attrs = attrs or {}
        if not self_closing:
            self._start_body()
        elif head.kind == _TOOL:
            self._tool_call(head.name, self._head_attrs)
        elif head.kind == _FUNCTION:
            self._function_call({})
        else:
            self._drop()

    def _close_head(self) -> None:
        """End of turn inside a tag's head (``<search query="x"`` with no ``>``)."""
        if self._head.kind != _TOOL:
            self._drop()
            return
        text = self._head_text().rstrip()
        attrs = _attrs(text.removesuffix("/"))
        if attrs:
            self._tool_call(self._head.name, attrs)
        else:
            self._release()

    def _start_body(self) -> None:
        head = self._head
        self._mode = _BODY
        self._body_start, self._body_len, self._tail = self._held_len, 0, ""
        self._markers, self._keep = _marker_pattern(head.closers + head.stops)

    def _marker_step(self, s: str, k: int, end: int) -> int:
        """Look for the end of a tag's body (held in _BODY, discarded in _SKIP)."""
        assert self._markers is not None
        store = self._mode == _BODY
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
        self._mode, self._tail = _TEXT, ""
        self._clear()
        if marker in self._head.stops:  # the next block's opener: rescan its last character as a tag
            self._mode, self._tag = _TAG, marker[:-1]
            self._held_len = len(self._tag)
            return k + consumed - 1
        return k + consumed

    def _finish_body(self, body: str, *, closed: bool) -> None:
        head = self._head
        self._mode = _TEXT
        if head.kind == _RESPONSE:
            self._drop()
        elif head.kind == _CALL:
            self._markup_calls(body)
        elif head.kind == _FUNCTION:
            if self._fname:
                args = self._function_args(body)
                if args is None:
                    self._drop()
                else:
                    self._function_call(args)
            else:
                self._markup_calls(body)
        else:
            args = self._tool_args(head.name, body, closed=closed)
            if args is None:
                self._release()
            else:
                self._tool_call(head.name, {**self._head_attrs, **args})

    def _tool_call(self, name: str, args: dict[str, Any]) -> None:
        call = _make_call(name, args)
        if call is None:
            self._release()
        else:
            self._record([call])

    def _function_call(self, args: dict[str, Any]) -> None:
        call = _make_call(self._fname, args) if self._fname in self._t.names else None
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
        text = body.strip()
        if not text:
            return [], False
        if text[0] in "{[":
            ok, value = _loads_lenient(text)
            if ok:
                return self._calls_from_value(value, strict=False)
        if _PY_CALL.match(text):
            parsed = self._pythonic(text)
            if parsed is not None:
                return parsed
        if self._depth < _MAX_NESTING and "<" in text:
            child = self._child()
            out = child.feed(text) + child.close()
            if child.calls and (not out or out.isspace()):
                return child.calls, child.removed == 0
        return [], False

    def _calls_from_value(self, value: Any, *, strict: bool) -> tuple[list[TextCall], bool]:
        """Calls in a parsed JSON value, and whether every item in it was a call."""
        if isinstance(value, dict) and "tool_calls" in value:
            if set(value) - {"tool_calls", "role", "content"} or value.get("content") not in (None, ""):
                return [], False
            value = value["tool_calls"]
        items = value if isinstance(value, list) else [value]
        calls: list[TextCall] = []
        ok = bool(items)
        for item in items:
            call = self._call(item, strict=strict)
            if call is None:
                ok = False
            else:
                calls.append(call)
        return calls, ok

    def _call(self, obj: Any, *, strict: bool) -> TextCall | None:
        """One JSON call object, if it names a known tool; ``strict`` requires an arguments key."""
        if not isinstance(obj, dict):
            return None
        function = obj.get("function")
        if isinstance(function, dict):
            if set(obj) - {"function"} - _CALL_EXTRA_KEYS:
                return None
            obj = function
        names = [k for k in _NAME_KEYS if k in obj]
        arg_keys = [k for k in _ARG_KEYS if k in obj]
        if len(names) != 1 or len(arg_keys) > 1 or (strict and not arg_keys):
            return None
        if set(obj) - set(_NAME_KEYS) - set(_ARG_KEYS) - _CALL_EXTRA_KEYS:
            return None
        if "type" in obj and obj["type"] not in _CALL_TYPES:
            return None
        name = obj[names[0]]
        if not isinstance(name, str) or name not in self._t.names:
            return None
        args = _args(obj[arg_keys[0]]) if arg_keys else {}
        return None if args is None else _make_call(name, args)

    def _pythonic(self, text: str) -> tuple[list[TextCall], bool] | None:
        """``NAME(key=value, ...)`` or a list of them; None if the text is not such calls."""
        try:
            tree = ast.parse(text, mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        nodes = tree.body.elts if isinstance(tree.body, ast.List) else [tree.body]
        if not nodes or not all(isinstance(node, ast.Call) for node in nodes):
            return None
        calls: list[TextCall] = []
        ok = True
        for node in nodes:
            call = self._python_call(node)
            if call is None:
                ok = False
            else:
                calls.append(call)
        return calls, ok

    def _python_call(self, node: ast.expr) -> TextCall | None:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.args:
            return None
        if node.func.id not in self._t.names:
            return None
        args: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                return None
            try:
                args[keyword.arg] = ast.literal_eval(keyword.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                return None
        return _make_call(node.func.id, args)

    def _function_args(self, body: str) -> dict[str, Any] | None:
        text = body.strip()
        if not text:
            return {}
        if text[0] == "{":
            ok, value = _loads_lenient(text)
            return _args(value) if ok and isinstance(value, dict) else None
        if text[0] == "<":
            return _elements(text)
        return None

    def _tool_args(self, name: str, body: str, *, closed: bool) -> dict[str, Any] | None:
        """Arguments from the body of ``<NAME ...>body</NAME>``; plain text only if closed."""
        text = body.strip()
        if not text:
            return {}
        if text[0] == "{":
            ok, value = _loads(text)
            if not ok or not isinstance(value, dict):
                return None
            call = self._call(value, strict=True)
            if call is not None and call.name == name:
                parsed: dict[str, Any] = json.loads(call.arguments)
                return parsed
            return _args(value)
        if text[0] == "<":
            return _elements(text)
        if text[0] == "[" or not closed:
            return None
        return {"query": html.unescape(text)}

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
                    self._mode = _TEXT
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
        self._mode = _TEXT
        ok, value = _loads("".join(self._raw))
        calls, all_calls = self._calls_from_value(value, strict=True) if ok else ([], False)
        if all_calls:
            self._record(calls)
        else:
            self._release()

    # -- backticks and fences ---------------------------------------------------------------------

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
            self._mode, self._inline = _TEXT, 0
        elif run >= 3:
            self._mode, self._inline, self._fence, self._info = _INFO, 0, run, ""
            self._hold("`" * run)
        else:
            self._emit("`" * run)
            self._mode, self._inline = _INLINE, self._inline or run
        return j

    def _info_step(self, s: str, k: int, end: int) -> int:
        start = k
        while k < end and len(self._info) + k - start < _MAX_INFO and _is_info(s[k]):
            k += 1
        self._info += s[start:k]
        self._hold(s[start:k])
        if k == end and len(self._info) < _MAX_INFO:
            return k
        if self._info.lower() in _FENCE_INFOS or self._info in self._t.names:
            self._mode, self._sub, self._run = _FENCE, None, 0
        else:
            self._release()
            self._mode, self._run = _CODE, 0
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
            self._mode, self._sub = _CODE, None
            return True
        return False

    def _finish_fence(self) -> None:
        sub, run = self._sub, self._run
        self._mode, self._sub, self._run = _TEXT, None, 0
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
                    self._mode, self._run = _TEXT, 0
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
