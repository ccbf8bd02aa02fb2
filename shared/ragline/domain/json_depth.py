"""How deep JSON text nests, measured without parsing it: ``json`` and pydantic recurse once per
level, so text of ``[`` x 100k overflows the stack of whatever parses it. Request bodies (at the
edge) and the model's tool-call arguments (in the agent loop) are both measured here first."""

from __future__ import annotations

import re
from itertools import accumulate

_STRINGS_AND_SCALARS = re.compile(r'"[^"]*"?|[^\[\]{}"]+')
_NESTING_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def nests_deeper_than(text: str, limit: int) -> bool:
    """Whether JSON ``text`` nests ``[``/``{`` deeper than ``limit``, in linear time, without recursion.

    Escaped backslashes and quotes are dropped first, so every remaining ``"`` opens or closes a
    string; strings (even an unterminated one) and scalars are then cut out in one regex pass,
    leaving the brackets, whose running sum is the depth. Invalid JSON gets some depth; the parser
    that runs next rejects it.
    """
    if text.count("[") + text.count("{") <= limit:
        return False  # too few brackets to nest too deep: the usual text costs two counts
    unescaped = text.replace("\\\\", "").replace('\\"', "")
    brackets = _STRINGS_AND_SCALARS.sub("", unescaped)
    return max(accumulate(map(_NESTING_STEP.__getitem__, brackets)), default=0) > limit
