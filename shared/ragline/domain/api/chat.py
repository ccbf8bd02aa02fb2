"""``POST /v1/chat``: the request, its modes and agents, and one message of the conversation."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ragline.domain.api.common import ApiRequest, RequestFilter

ChatMode = Literal["accurate", "fast"]
ChatAgent = Literal["auto", "agentic", "deep_search", "chain_of_rag"]
LEGACY_MODES = ("normal", "agentic", "deepResearch")


class RequestMessage(ApiRequest):
    """One turn of the conversation as the client sends it (tool turns are the server's own)."""

    role: Literal["system", "user", "assistant"]
    content: str = Field(default="", max_length=100_000)


class ChatRequest(ApiRequest):
    """``POST /v1/chat``. The tenant is never part of it: it comes from the authorizer."""

    messages: list[RequestMessage] = Field(min_length=1, max_length=200)
    namespaces: Annotated[list[str], Field(max_length=20)] | Literal["auto"] = Field(default_factory=list)
    """The namespaces to search; empty or ``"auto"``: the collection router picks among those the key
    may read."""
    mode: Literal["accurate", "fast", "normal", "agentic", "deepResearch"] = "accurate"
    agent: ChatAgent = "agentic"
    """Which agent answers; ``auto``: the RAG router picks by the agents' descriptions."""
    stream: bool = True
    filter: RequestFilter = None
    """Every search of the run (every agent's tools, ``expand``) reads only chunks it admits."""
    conversation_id: str | None = Field(
        default=None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$"
    )
    """Continue this conversation: ``messages`` are only the new turn's (the earlier turns are kept
    server side). None: the run starts a new conversation (its id is in the final event)."""
    background: bool = False
    """Answer ``202`` with the run id at once; the run goes on without a client (read its events at
    ``/v1/runs/{runId}/events``)."""

    @property
    def routes_namespaces(self) -> bool:
        return self.namespaces == "auto" or not self.namespaces

    @property
    def named_namespaces(self) -> list[str]:
        return [] if self.namespaces == "auto" else list(self.namespaces)

    @property
    def resolved_mode(self) -> ChatMode:
        """Legacy modes run as ``accurate`` (and the response says they are deprecated)."""
        return "fast" if self.mode == "fast" else "accurate"

    @property
    def legacy_mode(self) -> bool:
        return self.mode in LEGACY_MODES
