"""``answer_chat``: one chat run — the agent loop, verified citations, and exactly one charge.

The run ends through :meth:`MeteredRun.finish`, which is idempotent and is reached on success, on error
and when the consumer stops reading (client disconnect), so every run is metered once; a run that
did no work (no namespace to search, the model down on its first call) is not charged. Its final event
is recorded with the charge: a replay of a completed ``Idempotency-Key`` streams that one ``final``
event again, with ``replayed: true`` (the answer left out when it was over ``MAX_RESULT_BYTES``; sources
and steps are not kept), and does no retrieval and no model call.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Generator, Iterator
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
from ragline.domain.conversations import Turn
from ragline.domain.models import RunUsage, TenantScope
from ragline.domain.pruning import prune_messages
from ragline.domain.retrieval import EvidenceTable, Notice
from ragline.domain.runs import RunHead
from ragline.domain.tenancy import Namespace
from ragline.ports import ChatModel
from ragline.services.authentication import Principal
from ragline.services.chat_replays import recorded, replayed
from ragline.services.conversations import ConversationService
from ragline.services.grounding import GroundingService
from ragline.services.metering import MeteredRun, Metering
from ragline.services.read_views import RequestAccess
from ragline.services.replays import reach_of
from ragline.services.retrieval import Fusion, RetrievalService
from ragline.services.runs import RunService


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
    principal: Principal | None = None
    conversation_id: str = ""
    """The conversation this run is a turn of (its earlier turns are in ``messages``); empty: none
    is kept (no conversation store)."""
    new_messages: list[ChatMessage] = field(default_factory=list)
    """The request's own messages: what the conversation keeps of this turn."""


@dataclass(frozen=True)
class _Prepared:
    plan: RunPlan
    access: RequestAccess
    reach: dict[str, list[str]]


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
        runs: RunService | None = None,
        conversations: ConversationService | None = None,
    ) -> None:
        """``planner`` routes and plans (the same model as ``model`` behind an endpoint); None: the
        offline heuristics route and plan. ``search_first``: an ``accurate`` run's first model turn
        must call a tool (``tool_choice: required``). ``chunks_per_search``: what one search shows
        the model unless the run's namespaces set their own (the largest applies); ``layout``: how (see
        :func:`ragline.agents.tools.render`). ``grounding``: checks the final answer's cited sentences
        (None: off). ``runs``: records every run's events (None: not recorded, not resumable);
        ``conversations``: keeps each run as a turn of a conversation (None: none kept)."""
        self._retrieval = retrieval
        self._model = model
        self._planner = planner
        self._metering = metering
        self._limits = limits or LoopLimits()
        self._search_first = search_first
        self._chunks_per_search = chunks_per_search
        self._layout = layout
        self._grounding = grounding or GroundingService(None)
        self._runs = runs
        self._conversations = conversations
        self._shown: Callable[[list[ChunkView]], None] | None = None

    def variant(
        self,
        *,
        fusion: Fusion | None = None,
        alpha: float | None = None,
        shown: Callable[[list[ChunkView]], None] | None = None,
    ) -> ChatService:
        """A copy for an evaluation's runs: its searches fused with ``fusion`` and ``alpha`` (None: as
        configured); no conversation kept and no run log (nobody resumes them); ``shown`` is told every
        chunk the run was shown, in order, when it ends (its retrieval, beyond what it cited)."""
        other = copy.copy(self)
        other._retrieval = self._retrieval.tuned(fusion, alpha)
        other._runs, other._conversations, other._shown = None, None, shown
        return other

    def answer_chat(
        self,
        principal: Principal,
        request: ChatRequest,
        *,
        run_id: str | None = None,
        claimed: RunHead | None = None,
    ) -> Generator[RunEvent, None, None]:
        """Validate, authorise and reserve before any work (errors raise here); then stream the run,
        recorded under ``run_id`` (``claimed``: the head of a background run its worker claimed)."""
        prepared = self._prepare(principal, request)
        # ``stream`` and ``background`` only change the transport; no conversation: as it always was.
        ignore = {"stream", "background"} | ({"conversation_id"} if not request.conversation_id else set())
        fingerprint = request_fingerprint("POST", "/v1/chat", request, ignore=ignore, reach=prepared.reach)
        run = self._metering.start(principal.tenant_id, run_id, fingerprint)
        if run.replay is not None:
            readers = prepared.access.readers
            return replayed(self._metering, principal.tenant_id, run.replay, run.run_id, readers)
        plan = prepared.plan
        if self._runs is None:
            return self._run(principal.tenant_id, plan, run)
        head = claimed or self._runs.new_head(principal, run.run_id, background=False, status="running")
        recording = self._runs.recording(head, fresh=claimed is None)
        return recording.record(self._run(principal.tenant_id, plan, run, recording.stop))

    def check(self, principal: Principal, request: ChatRequest) -> None:
        """What :meth:`answer_chat` refuses before any work, without reserving (a background run is
        checked when it is queued, then run by its worker)."""
        self._prepare(principal, request)

    def _prepare(self, principal: Principal, request: ChatRequest) -> _Prepared:
        new = [ChatMessage(role=m.role, content=m.content) for m in request.messages]
        if any(m.role == "system" for m in new):
            raise errors.InvalidRequest(
                "system messages are not accepted; the namespace sets the system prompt"
            )
        last = new[-1]
        if last.role == "user" and not last.content.strip():
            raise errors.InvalidRequest("the last user message is empty")
        earlier: list[ChatMessage] = []
        conversation_id = ""
        if request.conversation_id is not None:
            if self._conversations is None:
                raise errors.InvalidRequest("this deployment keeps no conversations", field="conversationId")
            if last.role != "user":
                raise errors.InvalidRequest("a turn of a conversation ends with the user's message")
            earlier = self._conversations.history(principal, request.conversation_id)
            conversation_id = request.conversation_id
        elif self._conversations is not None:
            conversation_id = self._conversations.new_id()
        messages = [*earlier, *new]
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
        reach = reach_of(principal, "chat", [n.namespace_id for n in (spaces or candidates)]) | access.reach()
        if request.legacy_mode:
            notices.append(
                Notice("deprecated_mode", f"mode {request.mode!r} is deprecated and ran as 'accurate'")
            )
        plan = RunPlan(
            messages, request.agent, MODES[request.resolved_mode], spaces, candidates, notices, access,
            principal, conversation_id, new,
        )  # fmt: skip
        return _Prepared(plan, access, reach)

    def _run(
        self, tenant_id: str, plan: RunPlan, run: MeteredRun, stop: Callable[[], bool] = lambda: False
    ) -> Generator[RunEvent, None, None]:
        outcome = LoopOutcome()
        evidence = EvidenceTable()
        try:
            yield from (Warning(code=n.code, message=n.message) for n in plan.notices)
            answer = self._answer(tenant_id, plan, run, outcome, evidence)
            try:
                for event in answer:
                    yield event
                    if stop():  # cancelled: end here, charged for what was spent
                        answer.close()
                        outcome.exit_reason = "cancelled"
                        break
            except errors.RaglineError as exc:
                # Infrastructure failed mid-run: end cleanly, keep what was retrieved, charge what was used.
                outcome.exit_reason = "error"
                yield RunError(code=exc.code, message=exc.message)
            except Exception:
                # A bug: the client still gets an error event and a final event (never the bug's text).
                logger.exception("chat run failed", extra={"run_id": run.run_id})
                outcome.exit_reason = "error"
                yield RunError(code="internal_error", message="internal error")
            if self._shown is not None:
                self._shown([ChunkView.of_evidence(e) for e in map(evidence.get, evidence) if e is not None])
            for event in self._finish(outcome, evidence, plan.mode, run, plan.conversation_id):
                if isinstance(event, RunFinished) and plan.conversation_id:
                    self._add_turn(plan, event, evidence, run)
                yield event
        finally:
            run.finish()

    def _add_turn(self, plan: RunPlan, final: RunFinished, evidence: EvidenceTable, run: MeteredRun) -> None:
        """The run as its conversation's next turn (a run that did no work is not a turn)."""
        if self._conversations is None or plan.principal is None or not run.did_work:
            return
        documents = {(e.scope.namespace_id, e.chunk.document_id) for e in map(evidence.get, evidence) if e}
        turn = Turn(
            run_id=run.run_id,
            messages=[(m.role, m.content) for m in plan.new_messages],
            answer=final.answer,
            at=run.started_at.timestamp(),
            documents=sorted(documents),
            usage=(run.charged or run.usage).model_dump(),
        )
        try:
            self._conversations.add_turn(plan.principal, plan.conversation_id, turn)
        except errors.RaglineError as exc:  # the answer stands; the conversation misses this turn
            logger.warning("turn not kept: %s", exc.code, extra={"run_id": run.run_id})
            final.conversation_id = None

    def _answer(
        self, tenant_id: str, plan: RunPlan, run: MeteredRun, outcome: LoopOutcome, evidence: EvidenceTable
    ) -> Generator[RunEvent, None, None]:
        """Route (namespaces, then agent) when asked to, then run the agent."""
        conversation = prune_messages(plan.messages)
        spaces = plan.spaces
        outcome.plan.agent = plan.agent
        if spaces is None:
            routed = CollectionRouter(self._planner).route(conversation, plan.candidates)
            run.usage.add(routed.usage)
            spaces = routed.namespaces
            collections = Collections(namespaces=[n.namespace_id for n in spaces], reason=routed.reason)
            outcome.plan.note(collections)
            yield collections
            yield from (Warning(code=n.code, message=n.message) for n in routed.notices)
        if not spaces:
            outcome.exit_reason = "no_namespaces"
            return
        agent_name: str = plan.agent
        if agent_name == "auto":
            route = AgentRouter(self._planner, INFOS, DEFAULT_AGENT).route(conversation)
            run.usage.add(route.usage)
            agent_name = route.agent
            chosen = Route(agent=route.agent, reason=route.reason, fallback=route.fallback)
            outcome.plan.note(chosen)
            yield chosen
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
            namespaces=[ns.namespace_id for ns in spaces],
            plan=outcome.plan,
        )
        prompt = run_system_prompt(
            [(ns.namespace_id, ns.settings.system_prompt) for ns in spaces], tools=agent.uses_tools
        )
        history = [ChatMessage(role="system", content=prompt), *conversation]
        yield from smooth_words(agent.run(history, ctx, outcome))

    def _finish(
        self,
        outcome: LoopOutcome,
        evidence: EvidenceTable,
        mode: ModeSettings,
        run: MeteredRun,
        conversation_id: str = "",
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
            plan=outcome.plan.build(),
            conversation_id=conversation_id or None,
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
