"""``answer_chat``: one chat run — the agent loop, verified citations, and exactly one charge.

The run ends through :meth:`MeteredRun.finish`, which is idempotent and is reached on success, on error
and when the consumer stops reading (client disconnect), so every run is metered once; a run that
did no work (no namespace to search, the model down on its first call) is not charged. Its final event
is recorded with the charge: a replay of a completed ``Idempotency-Key`` streams that one ``final``
event again, with ``replayed: true`` (the answer left out when it was over ``MAX_RESULT_BYTES``; sources
and steps are not kept), and does no retrieval and no model call.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field, replace

from ragline import errors
from ragline.agents.base import AgentDeps, LoopLimits, LoopOutcome
from ragline.agents.catalog import DEFAULT_AGENT, INFOS, build_agent
from ragline.agents.events import Collections, Route, RunError, RunEvent, RunFinished, Sources, Warning
from ragline.agents.prompts import run_system_prompt
from ragline.agents.routing import AgentRouter, CollectionRouter
from ragline.agents.smoothing import smooth_words
from ragline.agents.tools import ToolContext, ToolResultLayout
from ragline.domain.api import ChatAgent, ChatMode, ChatRequest, ChunkView, Usage
from ragline.domain.billing import request_fingerprint
from ragline.domain.chat import ChatMessage
from ragline.domain.citations import verify_citations
from ragline.domain.models import RunUsage, TenantScope
from ragline.domain.pruning import prune_messages
from ragline.domain.retrieval import EvidenceTable, Notice
from ragline.domain.tenancy import Namespace
from ragline.ports import ChatModel
from ragline.services.authentication import Principal
from ragline.services.chat_replays import recorded, replayed
from ragline.services.grounding import GroundingService
from ragline.services.metering import MeteredRun, Metering
from ragline.services.read_views import RequestAccess
from ragline.services.replays import reach_of
from ragline.services.retrieval import RetrievalService


@dataclass(frozen=True)
class ModeSettings:
    """How much a mode retrieves: ``accurate`` fetches 30 and reranks to 10; ``fast`` fetches 10."""

    name: ChatMode
    candidates: int
    keep: int
    rerank: bool

    def showing(self, chunks: int) -> ModeSettings:
        """This mode when a search shows the model ``chunks``: ``accurate`` still fetches three times
        that (at least 30) for the reranker to choose from; ``fast`` fetches just that."""
        candidates = max(self.candidates, 3 * chunks) if self.rerank else chunks
        return replace(self, candidates=candidates, keep=chunks)


logger = logging.getLogger(__name__)

MODES: dict[ChatMode, ModeSettings] = {
    "accurate": ModeSettings("accurate", candidates=30, keep=10, rerank=True),
    "fast": ModeSettings("fast", candidates=10, keep=10, rerank=False),
}


@dataclass
class RunPlan:
    """What a run was asked for, authorised before the run starts."""

    messages: list[ChatMessage]
    agent: ChatAgent
    mode: ModeSettings
    spaces: list[Namespace] | None
    """The namespaces named by the request; None: the collection router picks among ``candidates``."""
    candidates: list[Namespace]
    notices: list[Notice]
    access: RequestAccess = field(default_factory=RequestAccess)
    """The request's filter and user, bound into every store the run searches (never the model's)."""


class ChatService:
    def __init__(
        self,
        *,
        retrieval: RetrievalService,
        model: ChatModel,
        metering: Metering,
        planner: ChatModel | None = None,
        limits: LoopLimits | None = None,
        search_first: bool = True,
        chunks_per_search: int = 10,
        layout: ToolResultLayout = "compact",
        grounding: GroundingService | None = None,
    ) -> None:
        """``planner`` routes and plans (the same model as ``model`` behind an endpoint); None: the
        offline heuristics route and plan. ``search_first``: an ``accurate`` run's first model turn
        must call a tool (``tool_choice: required``). ``chunks_per_search``: what one search shows
        the model unless the run's namespaces set their own (the largest applies); ``layout``: how (see
        :func:`ragline.agents.tools.render`). ``grounding``: checks the final answer's cited sentences
        (None: off)."""
        self._retrieval = retrieval
        self._model = model
        self._planner = planner
        self._metering = metering
        self._limits = limits or LoopLimits()
        self._search_first = search_first
        self._chunks_per_search = chunks_per_search
        self._layout = layout
        self._grounding = grounding or GroundingService(None)

    def answer_chat(
        self, principal: Principal, request: ChatRequest, *, run_id: str | None = None
    ) -> Generator[RunEvent, None, None]:
        """Validate, authorise and reserve before any work (errors raise here); then stream the run."""
        messages = [ChatMessage(role=m.role, content=m.content) for m in request.messages]
        last = messages[-1]
        if any(m.role == "system" for m in messages):
            raise errors.InvalidRequest(
                "system messages are not accepted; the namespace sets the system prompt"
            )
        if last.role == "user" and not last.content.strip():
            raise errors.InvalidRequest("the last user message is empty")
        if not any(m.role == "user" for m in messages):
            raise errors.InvalidRequest("the conversation has no user message")
        if request.routes_namespaces:
            spaces, (candidates, notices) = None, self._retrieval.readable(principal, "chat")
        else:
            spaces, candidates, notices = (
                self._retrieval.namespaces(principal, request.named_namespaces, "chat"),
                [],
                [],
            )
        access = RequestAccess.of(principal, request.filter)
        access.check(spaces or candidates)
        # ``stream`` only changes the transport: a streamed run may be replayed as JSON and back.
        reach = reach_of(principal, "chat", [n.namespace_id for n in (spaces or candidates)]) | access.reach()
        fingerprint = request_fingerprint("POST", "/v1/chat", request, ignore={"stream"}, reach=reach)
        run = self._metering.start(principal.tenant_id, run_id, fingerprint)
        if run.replay is not None:
            return replayed(self._metering, principal.tenant_id, run.replay, run.run_id, access.readers)
        if request.legacy_mode:
            notices.append(
                Notice("deprecated_mode", f"mode {request.mode!r} is deprecated and ran as 'accurate'")
            )
        plan = RunPlan(
            messages, request.agent, MODES[request.resolved_mode], spaces, candidates, notices, access
        )
        return self._run(principal.tenant_id, plan, run)

    def _run(self, tenant_id: str, plan: RunPlan, run: MeteredRun) -> Generator[RunEvent, None, None]:
        outcome = LoopOutcome()
        evidence = EvidenceTable()
        try:
            yield from (Warning(code=n.code, message=n.message) for n in plan.notices)
            try:
                yield from self._answer(tenant_id, plan, run, outcome, evidence)
            except errors.RaglineError as exc:
                # Infrastructure failed mid-run: end cleanly, keep what was retrieved, charge what was used.
                outcome.exit_reason = "error"
                yield RunError(code=exc.code, message=exc.message)
            except Exception:
                # A bug: the client still gets an error event and a final event (never the bug's text).
                logger.exception("chat run failed", extra={"run_id": run.run_id})
                outcome.exit_reason = "error"
                yield RunError(code="internal_error", message="internal error")
            yield from self._finish(outcome, evidence, plan.mode, run)
        finally:
            run.finish()

    def _answer(
        self, tenant_id: str, plan: RunPlan, run: MeteredRun, outcome: LoopOutcome, evidence: EvidenceTable
    ) -> Iterator[RunEvent]:
        """Route (namespaces, then agent) when asked to, then run the agent."""
        conversation = prune_messages(plan.messages)
        spaces = plan.spaces
        if spaces is None:
            routed = CollectionRouter(self._planner).route(conversation, plan.candidates)
            run.usage.add(routed.usage)
            spaces = routed.namespaces
            yield Collections(namespaces=[n.namespace_id for n in spaces], reason=routed.reason)
            yield from (Warning(code=n.code, message=n.message) for n in routed.notices)
        if not spaces:
            outcome.exit_reason = "no_namespaces"
            return
        agent_name: str = plan.agent
        if agent_name == "auto":
            route = AgentRouter(self._planner, INFOS, DEFAULT_AGENT).route(conversation)
            run.usage.add(route.usage)
            agent_name = route.agent
            yield Route(agent=route.agent, reason=route.reason, fallback=route.fallback)
            yield from (Warning(code=n.code, message=n.message) for n in route.notices)
        planner = run.watching(self._planner) if self._planner is not None else None
        agent = build_agent(agent_name, AgentDeps(run.watching(self._model), planner, self._limits))
        # Each namespace's own setting: a search over several shows the most any of them asks for.
        mode = plan.mode.showing(
            max(ns.settings.chunks_per_search or self._chunks_per_search for ns in spaces)
        )
        ctx = ToolContext(
            retriever=self._retrieval.bind(
                [TenantScope(tenant_id=tenant_id, namespace_id=ns.namespace_id) for ns in spaces],
                usage=run.usage,
                view=plan.access.views(spaces),
            ),
            narrowing=plan.access.narrowing(spaces),
            candidates=mode.candidates,
            keep=mode.keep,
            layout=self._layout,
            # accurate mode reranks when the deployment has a reranker; without one it is fused order
            rerank=mode.rerank and self._retrieval.reranker_name is not None,
            evidence=evidence,
            search_first=self._search_first and mode.name == "accurate",
        )
        prompt = run_system_prompt(
            [(ns.namespace_id, ns.settings.system_prompt) for ns in spaces], tools=agent.uses_tools
        )
        history = [ChatMessage(role="system", content=prompt), *conversation]
        yield from smooth_words(agent.run(history, ctx, outcome))

    def _finish(
        self, outcome: LoopOutcome, evidence: EvidenceTable, mode: ModeSettings, run: MeteredRun
    ) -> Iterator[RunEvent]:
        """Verified citations, warnings on the answer, its grounding, the sources and the final event
        (with the charge: what the grounding scorer spent is in the run's usage by then)."""
        verified = verify_citations(outcome.answer, evidence)
        if verified.invented:
            yield Warning(
                code="unknown_citations",
                message="the answer cited chunks that were not retrieved; those citations were removed",
                details={"ids": verified.invented},
            )
        ungrounded = _ungrounded(outcome, verified.text, bool(verified.cited), run.usage, mode)
        if ungrounded is not None:
            yield Warning(code="ungrounded_answer", message=ungrounded)
        cited = [e for e in (evidence.get(alias) for alias in verified.cited) if e is not None]
        assessment = self._grounding.assess(verified.text, {e.alias: e.chunk.text for e in cited}, run.usage)
        yield from assessment.warnings
        yield Sources(chunks=[ChunkView.of_evidence(e) for e in cited])
        final = RunFinished(
            run_id=run.run_id,
            exit_reason=outcome.exit_reason,
            answer=verified.text,
            usage=Usage.of(run.usage),
            grounding=assessment.grounding,
        )
        # A run that failed before doing any work keeps no result: the same request may run again
        # under its key (a retry after an outage), as nothing was done that a replay must not redo.
        failed_idle = outcome.exit_reason == "error" and not run.did_work
        final.usage = Usage.of(run.finish(None if failed_idle else recorded(final, evidence, run.started_at)))
        yield final


def _ungrounded(
    outcome: LoopOutcome, answer: str, cited: bool, usage: RunUsage, mode: ModeSettings
) -> str | None:
    """Why an answer the model finished is not grounded in the documents, or None."""
    if outcome.exit_reason != "answered" or not answer.strip():
        return None
    if usage.retrievals == 0:
        return "the answer was written without searching the documents"
    if mode.name == "accurate" and not cited:  # an accurate answer cites what it used
        return "the answer cites no retrieved passage"
    return None
