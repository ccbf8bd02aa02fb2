"""The bounds on a tool call's arguments, checked before anything reads them.

``json`` and pydantic recurse once per nesting level, so arguments of ``[`` x 100k would overflow the
stack wherever they are first parsed (the UI label, the tool's model) and end the run; a model's
runaway output would also be sent back to it, and billed as input, on every later turn. Over a bound
the call is a tool error the model can read and correct, and its history entry carries ``{}``.
"""

from __future__ import annotations

from ragline.domain.chat import ToolCall
from ragline.domain.json_depth import nests_deeper_than

MAX_ARGUMENT_CHARS = 8_000
"""Longest tool-call arguments read: the tools take a query of at most 1,000 characters, a label and
a filter."""
MAX_ARGUMENT_DEPTH = 18
"""Deepest nesting read in tool-call arguments: one object whose ``filter`` nests at most 8 filter
levels (two JSON levels each: ``{"andAll": [ … ]}``)."""


def argument_problem(arguments: str) -> str | None:
    """Why the model's arguments are not read at all (too long, too deep), else None."""
    if len(arguments) > MAX_ARGUMENT_CHARS:
        return f"invalid arguments: longer than {MAX_ARGUMENT_CHARS} characters"
    if nests_deeper_than(arguments, MAX_ARGUMENT_DEPTH):
        return f"invalid arguments: nested deeper than {MAX_ARGUMENT_DEPTH} levels; send one flat JSON object"
    return None


def echoed(call: ToolCall) -> ToolCall:
    """``call`` as the run's history sends it back to the model: arguments that were not read are
    replaced by ``{}`` (the tool's reply says why), so they are not re-sent on every later turn."""
    if argument_problem(call.arguments) is None:
        return call
    return call.model_copy(update={"arguments": "{}"})
