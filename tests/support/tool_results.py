"""Read a tool result back the way a model would, in either layout (see ragline.agents.tools.render)."""

from __future__ import annotations

import json
import re
from typing import Any

_HEAD = re.compile(r"\[(?P<id>\S+)\] (?P<filename>.*?) — (?P<text>.*)", re.S)


def tool_results(content: str) -> Any:
    """The results as the JSON layout's objects (``id``, ``documentId``, ``sequenceNumber``,
    ``filename``, ``text``, ``context`` and ``metadata`` when shown), or an error object as it was sent."""
    if content.startswith(("[{", "[]", "{")):
        return json.loads(content)
    if content == "No results.":
        return []
    found = []
    for block in content.split("\n\n"):
        match = _HEAD.fullmatch(block)
        assert match, f"not a compact result block: {block[:200]!r}"
        body, _, shown = match["text"].partition("\nMetadata: ")
        text, _, context = body.partition("\nContext: ")
        document_id, _, seq = match["id"].rpartition("#")
        view: dict[str, Any] = {
            "id": match["id"],
            "documentId": document_id,
            "sequenceNumber": int(seq),
            "filename": match["filename"],
            "text": text,
        }
        if context:
            view["context"] = context
        if shown:
            view["metadata"] = dict(pair.split(": ", 1) for pair in shown.split("; "))
        found.append(view)
    return found
