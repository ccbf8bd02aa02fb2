"""What a chat run streams to its client (the SSE events and the CLI's output), camelCase like every
body of the API (see :mod:`ragline.domain.api`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ragline.domain.api import ApiModel, ChunkView, Usage
from ragline.domain.grounding import GroundingLabel
from ragline.domain.plans import QueryPlan
from ragline.domain.runs import RunStatus


class AnswerDelta(ApiModel):
    type: Literal["text"] = "text"
    text: str


class ToolStarted(ApiModel):
    type: Literal["tool_start"] = "tool_start"
    call_id: str
    tool: str
    label: str


class ToolFinished(ApiModel):
    type: Literal["tool_end"] = "tool_end"
    call_id: str
    tool: str
    label: str
    hits: int
    error: str | None = None


class Sources(ApiModel):
    type: Literal["sources"] = "sources"
    chunks: list[ChunkView]


class Warning(ApiModel):
    type: Literal["warning"] = "warning"
    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class Route(ApiModel):
    """Which agent answers a run: streamed when the request asked for ``agent: "auto"``."""

    type: Literal["route"] = "route"
    agent: str
    reason: str
    fallback: bool = False
    """True when the router's reply was unusable (or its call failed) and the default agent runs."""


class Collections(ApiModel):
    """Which namespaces a run searches: streamed when the request named none (or ``"auto"``)."""

    type: Literal["collections"] = "collections"
    namespaces: list[str]
    reason: str


class RunError(ApiModel):
    """The run stopped on an infrastructure error (model or store down); a final event follows."""

    type: Literal["error"] = "error"
    code: str
    message: str


class GroundingEvidence(ApiModel):
    """A sentence of a cited chunk that decided a verdict (``sentence``: its index in the chunk)."""

    chunk_id: str
    sentence: int
    text: str


class SentenceGrounding(ApiModel):
    """One cited sentence of the answer, checked against the chunks it cites."""

    text: str
    citations: list[str]
    label: GroundingLabel
    score: float
    """Support in [0, 1]: near 1 well supported, near 0 contradicted."""
    evidence: list[GroundingEvidence] = Field(default_factory=list)


class Grounding(ApiModel):
    """How well the final answer is supported by the chunks it cites.

    ``status``: ``scored``; ``no_citations`` (nothing to check: the answer cites no chunk);
    ``unavailable`` (the scorer failed: the answer stands, a ``grounding_unavailable`` warning says
    why); ``off`` (the deployment turned grounding off). ``score``: the mean support of the checked
    sentences. ``unchecked``: cited sentences past the deployment's cap; ``uncited``: sentences with no
    citation (never checked: the ``ungrounded_answer`` warning covers an answer that cites nothing).
    """

    status: Literal["scored", "no_citations", "unavailable", "off"]
    scorer: str
    score: float | None = None
    sentences: list[SentenceGrounding] = Field(default_factory=list)
    unchecked: int = 0
    uncited: int = 0


class RunFinished(ApiModel):
    type: Literal["final"] = "final"
    run_id: str
    exit_reason: str
    answer: str
    usage: Usage
    grounding: Grounding | None = None
    """Each cited sentence checked against its chunks (absent on runs recorded before it existed)."""
    plan: QueryPlan | None = None
    """How the run searched (see :mod:`ragline.domain.plans`); null on a replay that had to leave it
    out, and on runs recorded before it existed."""
    conversation_id: str | None = None
    """The conversation this run is a turn of (send it as ``conversationId`` to continue)."""
    replayed: bool = Field(default=False, exclude_if=lambda v: not v)
    """``true`` only on a replay of a completed ``Idempotency-Key`` (the run's only event then)."""


RunEvent = (
    AnswerDelta
    | ToolStarted
    | ToolFinished
    | Sources
    | Warning
    | Route
    | Collections
    | RunError
    | RunFinished
)


class ChatResponse(ApiModel):
    """``stream: false``: the whole run as one body."""

    answer: str = ""
    sources: list[ChunkView] = Field(default_factory=list)
    warnings: list[Warning] = Field(default_factory=list)
    steps: list[ToolStarted | ToolFinished] = Field(default_factory=list)
    error: RunError | None = None
    route: Route | None = None
    collections: Collections | None = None
    usage: Usage = Field(default_factory=Usage)
    grounding: Grounding | None = None
    plan: QueryPlan | None = None
    exit_reason: str = ""
    run_id: str = ""
    conversation_id: str | None = None
    replayed: bool = Field(default=False, exclude_if=lambda v: not v)

    @classmethod
    def collect(cls, events: Any) -> ChatResponse:
        body = cls()
        for event in events:
            if isinstance(event, Sources):
                body.sources = event.chunks
            elif isinstance(event, Warning):
                body.warnings.append(event)
            elif isinstance(event, ToolStarted | ToolFinished):
                body.steps.append(event)
            elif isinstance(event, RunError):
                body.error = event
            elif isinstance(event, Route):
                body.route = event
            elif isinstance(event, Collections):
                body.collections = event
            elif isinstance(event, RunFinished):
                body.answer, body.usage, body.grounding = event.answer, event.usage, event.grounding
                body.plan = event.plan
                body.exit_reason, body.run_id = event.exit_reason, event.run_id
                body.replayed, body.conversation_id = event.replayed, event.conversation_id
        return body


class RunView(ApiModel):
    """``GET /v1/runs/{id}``: where a run stands; ``result`` is its final event once it ended."""

    run_id: str
    status: RunStatus
    background: bool
    created_at: float
    last_event_id: int
    result: RunFinished | None = None


class RunAccepted(ApiModel):
    """``POST /v1/chat`` with ``background: true``: 202, the run queued."""

    run_id: str
    status: RunStatus
    events: str
    """Where its events are: ``/v1/runs/{runId}/events``."""
