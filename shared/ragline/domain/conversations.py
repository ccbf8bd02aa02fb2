"""Conversations the server keeps: each turn's messages, its answer, its run and what it quoted.

A chat request with a ``conversationId`` sends only its new messages; the earlier turns come from
here. Each turn keeps the documents its answer drew on and when it read them (like a replay's
recorded result, :mod:`ragline.services.replays`), so a later turn re-checks them and does not show
the model an answer whose documents were deleted, rewritten or are no longer the user's to read.
Standard library only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

CONVERSATION_TTL_SECONDS = 30 * 24 * 3600
"""A conversation is kept 30 days after its last turn (then the DynamoDB TTL removes it)."""
MAX_TURNS = 50
"""Turns kept per conversation: a longer one keeps its newest 50 (the model's context is pruned to far
fewer; the usage total still counts every turn)."""
MAX_CONVERSATION_BYTES = 300 * 1024
"""The kept turns' bytes (one DynamoDB item is at most 400 KB): the oldest turns go first."""
MAX_CONVERSATIONS_LISTED = 100
WITHHELD = (
    "[This earlier answer is withheld: a document it drew on was changed, removed or is not readable now.]"
)
"""What the model (and the reader) sees in place of an answer whose documents failed the re-check."""


@dataclass(frozen=True)
class Turn:
    run_id: str
    messages: list[tuple[str, str]]
    """The request's own messages: (role, content), ``user`` or ``assistant``."""
    answer: str
    at: float
    """Unix seconds: when the run read its documents."""
    documents: list[tuple[str, str]]
    """(namespace, document_id) of every chunk the run retrieved."""
    usage: dict[str, int] = field(default_factory=dict)
    """The run's charge (:class:`~ragline.domain.models.RunUsage` fields)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "messages": [list(m) for m in self.messages],
            "answer": self.answer,
            "at": self.at,
            "documents": [list(d) for d in self.documents],
            "usage": self.usage,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Turn:
        return cls(
            run_id=str(data["runId"]),
            messages=[(str(r), str(c)) for r, c in data["messages"]],
            answer=str(data["answer"]),
            at=float(data["at"]),
            documents=[(str(n), str(d)) for n, d in data["documents"]],
            usage={str(k): int(v) for k, v in dict(data.get("usage") or {}).items()},
        )


@dataclass(frozen=True)
class Conversation:
    tenant_id: str
    conversation_id: str
    owner: str
    """:func:`~ragline.domain.runs.owner_of` who started it."""
    key_id: str
    created_at: float
    updated_at: float
    turns: list[Turn] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    """The sum of every turn's charge (also of turns no longer kept)."""
    turn_count: int = 0
    """Every turn taken (``len(turns)`` once past :data:`MAX_TURNS`)."""
    version: int = 0
    """Bumped by each write: a write expects the version it read (two turns racing both land)."""
    title: str = ""
    """The first user message, cut to 80 characters (what a list shows)."""

    @property
    def expires_at(self) -> int:
        return int(self.updated_at) + CONVERSATION_TTL_SECONDS

    def with_turn(self, turn: Turn) -> Conversation:
        """This conversation with ``turn`` added last, within :data:`MAX_TURNS` and
        :data:`MAX_CONVERSATION_BYTES` (the oldest turns go first; the newest always stays)."""
        usage = dict(self.usage)
        for name, value in turn.usage.items():
            usage[name] = usage.get(name, 0) + value
        turns = [*self.turns, turn][-MAX_TURNS:]
        while len(turns) > 1 and len(turns_json(turns).encode()) > MAX_CONVERSATION_BYTES:
            turns = turns[1:]
        title = self.title or next(
            (" ".join(c.split())[:80] for r, c in turn.messages if r == "user" and c.strip()), ""
        )
        return replace(
            self,
            title=title,
            turns=turns,
            usage=usage,
            turn_count=self.turn_count + 1,
            updated_at=max(self.updated_at, turn.at),
        )


def turns_json(turns: list[Turn]) -> str:
    return json.dumps([t.to_json() for t in turns], separators=(",", ":"))


def turns_from_json(text: str) -> list[Turn]:
    return [Turn.from_json(t) for t in json.loads(text)]
