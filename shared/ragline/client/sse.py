"""Server-Sent Events as the API streams a run: each ``data`` event parsed into the typed
:data:`~ragline.agents.events.RunEvent`, with its ``id`` (the sequence number a resumed stream
starts after)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from pydantic import TypeAdapter

from ragline.agents.events import RunEvent

_EVENTS: TypeAdapter[RunEvent] = TypeAdapter(RunEvent)


def _sse(lines: Iterator[str]) -> Iterator[tuple[int, RunEvent]]:
    """Server-Sent Events → (sequence number, typed run event): ``data`` lines joined, the ``id``
    kept (0 when absent: a replay's one event), comments ignored."""
    data: list[str] = []
    seq = 0
    for line in lines:
        if line == "":
            if data:
                yield seq, _EVENTS.validate_python(json.loads("\n".join(data)))
                data, seq = [], 0
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line.startswith("id:") and line[3:].strip().isdigit():
            seq = int(line[3:].strip())
    if data:
        yield seq, _EVENTS.validate_python(json.loads("\n".join(data)))
