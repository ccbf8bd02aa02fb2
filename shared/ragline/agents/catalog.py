"""The chat agents, in the order the RAG router numbers them; the first is the default."""

from __future__ import annotations

from ragline.agents.agentic import AgenticAgent
from ragline.agents.base import Agent, AgentDeps
from ragline.agents.chain_of_rag import ChainOfRagAgent
from ragline.agents.deep_search import DeepSearchAgent
from ragline.agents.routing import AgentInfo

AGENTS: tuple[type[Agent], ...] = (AgenticAgent, DeepSearchAgent, ChainOfRagAgent)
DEFAULT_AGENT = AGENTS[0].name
INFOS = tuple(AgentInfo(a.name, a.description) for a in AGENTS)


def build_agent(name: str, deps: AgentDeps) -> Agent:
    """The agent called ``name`` (one of :data:`AGENTS`; the request model allows no other)."""
    agent_type = next(a for a in AGENTS if a.name == name)
    return agent_type(deps)  # type: ignore[call-arg]
