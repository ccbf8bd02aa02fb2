"""The vocabulary of tool markup, and the opener tables the markup filter scans with.

Which tags wrap a tool call or a tool response in the output of the model families Ragline meets
(Hermes and Qwen ``<tool_call>``, special-token ``<|tool_call|>`` spellings, Llama ``<function=...>``,
tags named after a tool), how each block ends, and which code-fence info strings may hold a call.
:func:`tables` turns this vocabulary plus one set of tool names into the lookup structures
:class:`~ragline.agents.text_calls.MarkupFilter` needs to recognise an opener one character at a time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

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
FENCE_INFOS: Final = frozenset(
    {"", "json", "jsonc", "json5", "xml", "tool", "tools", "tool_call", "tool_calls", "tool_code"}
    | {"toolcall", "function", "function_call", "functions"}
)

TAG_NAME: Final = re.compile(r"[A-Za-z_][\w.-]*", re.ASCII)

# Kinds of tag: a call wrapper (settles to calls), a tool response (always dropped), Llama's
# ``<function=NAME>``, a tag named after a tool, and a stray closing tag (dropped).
CALL, RESPONSE, FUNCTION, TOOL, CLOSE = range(5)


@dataclass(frozen=True)
class Head:
    """A known tag opener: what it is and how its block ends."""

    kind: int
    name: str
    open: bool
    """True for ``<name``, which needs a delimiter and a head up to ``>``; False for complete tokens."""
    closers: tuple[str, ...] = ()
    stops: tuple[str, ...] = ()
    """Openers of a next block of the same kind: they end this one (a missing closing tag)."""


@dataclass(frozen=True)
class Tables:
    """Everything the scanner looks up for one set of tool names."""

    names: frozenset[str]
    heads: Mapping[str, Head]
    prefixes: frozenset[str]
    """Every prefix of a key of ``heads``: while the text read so far is one, the tag is still held."""
    opener: re.Pattern[str]
    """A backtick, or a ``<`` whose next character may continue a known opener."""
    nested_opener: re.Pattern[str]
    """Like ``opener`` without the backtick: fences are not looked for inside a block."""


@lru_cache(maxsize=64)
def tables(names: frozenset[str]) -> Tables:
    """The opener tables for these tool names; cached, as a filter is made per turn for few tool sets."""
    heads: dict[str, Head] = {}
    for name in names:
        if TAG_NAME.fullmatch(name):
            heads["<" + name] = Head(TOOL, name, True, (f"</{name}>",))
    for name in _CALL_TAGS + _RESPONSE_TAGS:
        kind = CALL if name in _CALL_TAGS else RESPONSE
        heads["<" + name] = Head(kind, name, True, (f"</{name}>",), (f"<{name}>", f"<{name} ", f"<{name}\n"))
        heads[f"</{name}>"] = Head(CLOSE, name, False)
        closers = (f"<|/{name}|>", f"<|{name}_end|>", f"<|end_{name}|>", f"</{name}>")
        for suffix in _PIPE_SUFFIXES:
            token = f"<|{name}{suffix}|>"
            heads[token] = Head(kind, name, False, closers, (token,))
        for closer in closers[:3]:
            heads[closer] = Head(CLOSE, name, False)
    heads["<function"] = Head(
        FUNCTION, "function", True, ("</function>",), ("<function=", "<function>", "<function ")
    )
    heads["</function>"] = Head(CLOSE, "function", False)
    prefixes = frozenset(head[:i] for head in heads for i in range(1, len(head) + 1))
    second = "".join(sorted({re.escape(head[1]) for head in heads}))
    tag = f"<(?![^{second}])"
    return Tables(names, heads, prefixes, re.compile(f"`|{tag}"), re.compile(tag))


@lru_cache(maxsize=256)
def marker_pattern(markers: tuple[str, ...]) -> tuple[re.Pattern[str], int]:
    """A pattern for any of the markers (longest first), and how much of a piece's tail to keep.

    Keeping the last ``len(longest) - 1`` characters finds a marker split across two deltas.
    """
    ordered = sorted(markers, key=len, reverse=True)
    return re.compile("|".join(re.escape(m) for m in ordered)), max(map(len, markers)) - 1
