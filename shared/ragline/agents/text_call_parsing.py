"""Reading tool calls out of text a model wrote: JSON call shapes, Python-style calls, tag attributes.

:class:`~ragline.agents.text_calls.MarkupFilter` finds *where* a block of possible tool markup starts
and ends in the stream; the pure functions here decide *what* the block says: which calls (by the
known tool ``names``) with which arguments, as :class:`TextCall`. Each reports failure (None, or
False for "not all of it was calls") instead of raising, also on hostile input (deep nesting, huge
literals), so a model's text can never crash a turn.
"""

from __future__ import annotations

import ast
import html
import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Final

from ragline.agents.tool_markup import TAG_NAME


@dataclass(frozen=True)
class TextCall:
    """A tool call the model wrote as text."""

    name: str
    arguments: str
    """JSON object text: ``json.dumps`` of the arguments."""


# The shapes of a JSON call: ``{"name": ..., "arguments": ...}`` and its many spellings.
_NAME_KEYS: Final = ("name", "tool", "tool_name", "function", "action")
_ARG_KEYS: Final = ("arguments", "parameters", "args", "input", "tool_input", "action_input")
_CALL_EXTRA_KEYS: Final = frozenset({"id", "type", "index", "call_id"})
_CALL_TYPES: Final = ("function", "tool_call", "tool_use")

_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_ATTR = re.compile(r"""\s*([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>=`/]+))""", re.ASCII)
_PY_CALL = re.compile(r"\[?\s*[A-Za-z_]\w*\s*\(", re.ASCII)


def loads(text: str) -> tuple[bool, Any]:
    """``json.loads`` that reports failure instead of raising (also on hostile nesting)."""
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def loads_lenient(text: str) -> tuple[bool, Any]:
    """Like :func:`loads`, also accepting extra closing brackets after the value (a common slip)."""
    ok, value = loads(text)
    if ok:
        return ok, value
    try:
        value, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return False, None
    return (not text[end:].strip(" \t\r\n}]")), value


def call_args(value: Any) -> dict[str, Any] | None:
    """Call arguments from an object or a JSON string of one; None if not an object (or a schema)."""
    if isinstance(value, str):
        if not value.strip():
            return {}
        ok, value = loads(value)
        if not ok:
            return None
    if not isinstance(value, dict):
        return None
    if value.get("type") == "object" and "properties" in value:
        return None  # an echoed tool definition's parameter schema, not arguments
    return value


def _scalar(value: str) -> Any:
    return int(value) if _INT.fullmatch(value) else value


def parse_attrs(text: str) -> dict[str, Any] | None:
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
        ok, parsed = loads(value)
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
            m = TAG_NAME.match(text, pos + 1) if text.startswith("<", pos) else None
            if m is None or not text.startswith(">", m.end()):
                return None
            key, gt = m.group(), m.end()
            closer = f"</{key}>"
        end = text.find(closer, gt + 1)
        if not key or end < 0:
            return None
        out[key] = _param_value(text[gt + 1 : end])
        pos = end + len(closer)


def make_call(name: str, args: dict[str, Any]) -> TextCall | None:
    try:
        return TextCall(name=name, arguments=json.dumps(args))
    except (TypeError, ValueError, RecursionError):
        return None


def calls_from_value(value: Any, names: Collection[str], *, strict: bool) -> tuple[list[TextCall], bool]:
    """Calls in a parsed JSON value, and whether every item in it was a call."""
    if isinstance(value, dict) and "tool_calls" in value:
        if set(value) - {"tool_calls", "role", "content"} or value.get("content") not in (None, ""):
            return [], False
        value = value["tool_calls"]
    items = value if isinstance(value, list) else [value]
    calls: list[TextCall] = []
    ok = bool(items)
    for item in items:
        call = _call(item, names, strict=strict)
        if call is None:
            ok = False
        else:
            calls.append(call)
    return calls, ok


def _call(obj: Any, names: Collection[str], *, strict: bool) -> TextCall | None:
    """One JSON call object, if it names a known tool; ``strict`` requires an arguments key."""
    if not isinstance(obj, dict):
        return None
    function = obj.get("function")
    if isinstance(function, dict):
        if set(obj) - {"function"} - _CALL_EXTRA_KEYS:
            return None
        obj = function
    name_keys = [k for k in _NAME_KEYS if k in obj]
    arg_keys = [k for k in _ARG_KEYS if k in obj]
    if len(name_keys) != 1 or len(arg_keys) > 1 or (strict and not arg_keys):
        return None
    if set(obj) - set(_NAME_KEYS) - set(_ARG_KEYS) - _CALL_EXTRA_KEYS:
        return None
    if "type" in obj and obj["type"] not in _CALL_TYPES:
        return None
    name = obj[name_keys[0]]
    if not isinstance(name, str) or name not in names:
        return None
    args = call_args(obj[arg_keys[0]]) if arg_keys else {}
    return None if args is None else make_call(name, args)


def python_calls(text: str, names: Collection[str]) -> tuple[list[TextCall], bool] | None:
    """``NAME(key=value, ...)`` or a list of them; None if the text is not such calls."""
    if not _PY_CALL.match(text):
        return None  # cheap check first: most text is not Python, and ast.parse is not cheap
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
        call = _python_call(node, names)
        if call is None:
            ok = False
        else:
            calls.append(call)
    return calls, ok


def _python_call(node: ast.expr, names: Collection[str]) -> TextCall | None:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)) or node.args:
        return None
    if node.func.id not in names:
        return None
    args: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            return None
        try:
            args[keyword.arg] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return None
    return make_call(node.func.id, args)


def function_args(body: str) -> dict[str, Any] | None:
    """Arguments from the body of ``<function=NAME>body</function>``: a JSON object or elements."""
    text = body.strip()
    if not text:
        return {}
    if text[0] == "{":
        ok, value = loads_lenient(text)
        return call_args(value) if ok and isinstance(value, dict) else None
    if text[0] == "<":
        return _elements(text)
    return None


def tool_args(name: str, body: str, names: Collection[str], *, closed: bool) -> dict[str, Any] | None:
    """Arguments from the body of ``<NAME ...>body</NAME>``; plain text only if closed."""
    text = body.strip()
    if not text:
        return {}
    if text[0] == "{":
        ok, value = loads(text)
        if not ok or not isinstance(value, dict):
            return None
        call = _call(value, names, strict=True)
        if call is not None and call.name == name:
            parsed: dict[str, Any] = json.loads(call.arguments)
            return parsed
        return call_args(value)
    if text[0] == "<":
        return _elements(text)
    if text[0] == "[" or not closed:
        return None
    return {"query": html.unescape(text)}
