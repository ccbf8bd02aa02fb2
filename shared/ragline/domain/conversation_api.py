"""The bodies of ``GET /v1/conversations`` and ``GET /v1/conversations/{id}`` (camelCase, like every
body of the API)."""

from __future__ import annotations

from ragline.domain.api import ApiModel, Usage


class TurnView(ApiModel):
    run_id: str
    messages: list[dict[str, str]]
    answer: str
    withheld: bool
    created_at: str
    usage: Usage


class ConversationView(ApiModel):
    conversation_id: str
    created_at: str
    updated_at: str
    turns: list[TurnView]
    turn_count: int
    usage: Usage
    """The sum of every turn's charge."""


class ConversationSummary(ApiModel):
    conversation_id: str
    title: str
    created_at: str
    updated_at: str
    turn_count: int


class ConversationList(ApiModel):
    conversations: list[ConversationSummary]
