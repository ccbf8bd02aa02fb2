"""What every chat agent shares: the interface, the bounds of a run and what a run reports.

An agent streams the chat events clients already know (``tool_start``/``tool_end`` per retrieval,
``text``, ``warning``) for one conversation, retrieving only through its :class:`ToolContext` (so the
run's scopes, usage, evidence and query plan are the service's), and records why it stopped in
:class:`LoopOutcome`.
Citations, ``sources``, ``final`` and the one charge are the chat service's, whichever agent ran.

Each agent class declares ``name`` and a one-paragraph ``description``: the RAG router shows the model
those descriptions, numbered, and :data:`ragline.agents.catalog.AGENTS` lists them in that order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from ragline.agents.events import RunEvent
from ragline.agents.plan_recorder import PlanRecorder
from ragline.agents.tools import ToolContext
from ragline.domain.chat import ChatMessage
from ragline.ports import ChatModel


@dataclass(frozen=True)
class LoopLimits:
    max_steps: int = 20
    """Model turns of the tool loop; the planned agents' rounds are bounded by their own constants."""
    max_output_tokens: int = 5000
    """Output tokens of the whole run: planning, routing and the answer."""
    turn_output_tokens: int = 2000
    """Output tokens one model turn may write (a runaway turn cannot spend the whole run)."""
    evidence_budget: int = 60
    max_tool_errors: int = 3
    max_tool_calls_per_turn: int = 8
    max_tool_calls_per_run: int = 24
    """Tool calls of a run; for the planned agents, the searches they run."""


@dataclass
class LoopOutcome:
    answer: str = ""
    exit_reason: str = "running"
    plan: PlanRecorder = field(default_factory=PlanRecorder)
    """The run's query plan (the run's :attr:`ToolContext.plan`): on the final event, whatever ran."""


@dataclass(frozen=True)
class AgentDeps:
    """What an agent is built from (by the chat service, once per run)."""

    model: ChatModel
    """Writes the answer (and drives the tool loop)."""
    planner: ChatModel | None
    """Plans, filters and routes; None: no model endpoint, the offline heuristics plan instead."""
    limits: LoopLimits


class Agent(Protocol):
    name: ClassVar[str]
    description: ClassVar[str]
    uses_tools: ClassVar[bool]
    """True when the model calls the tools itself (its system prompt gets the tool rules)."""

    def run(
        self, conversation: Sequence[ChatMessage], ctx: ToolContext, outcome: LoopOutcome
    ) -> Iterator[RunEvent]:
        """Stream the run; ``conversation`` starts with the system message. ``outcome`` is filled in as
        it goes (also when the consumer stops early)."""
        ...
