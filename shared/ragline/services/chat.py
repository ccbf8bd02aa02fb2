"""``answer_chat``: one chat run — the agent loop, verified citations, and exactly one charge.

The run ends through :meth:`MeteredRun.finish`, which is idempotent and is reached on success, on error
and when the consumer stops reading (client disconnect), so every run is metered once. Its final event
is recorded with the charge: a replay of a completed ``Idempotency-Key`` streams that one ``final``
event again, with ``replayed: true`` (the answer left out when it was over ``MAX_RESULT_BYTES``; sources
and steps are not kept), and does no retrieval and no model call.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Sequence
from dataclasses import dataclass

from ragline import errors
from ragline.agents.agentic import AgenticAgent, LoopLimits, LoopOutcome
from ragline.agents.events import RunError, RunEvent, RunFinished, Sources, Warning
from ragline.agents.prompts import resolve_system_prompt
from ragline.agents.tools import ToolContext
from ragline.domain.api import ChatMode, ChatRequest, ChunkView, Usage
from ragline.domain.billing import MAX_RESULT_BYTES, CompletedRun, request_fingerprint
from ragline.domain.chat import ChatMessage
from ragline.domain.citations import verify_citations
from ragline.domain.models import TenantScope
from ragline.domain.pruning import prune_messages
from ragline.ports import ChatModel
from ragline.services.metering import MeteredRun, Metering
from ragline.services.retrieval import RetrievalService, Retriever
from ragline.services.tenancy import Principal


@dataclass(frozen=True)
class ModeSettings:
    """How much a mode retrieves: ``accurate`` fetches 30 and reranks to 10; ``fast`` fetches 10."""

    candidates: int
    keep: int
    rerank: bool


logger = logging.getLogger(__name__)

MODES: dict[ChatMode, ModeSettings] = {
    "accurate": ModeSettings(candidates=30, keep=10, rerank=True),
    "fast": ModeSettings(candidates=10, keep=10, rerank=False),
}


class ChatService:
    def __init__(
        self,
        *,
        retrieval: RetrievalService,
        model: ChatModel,
        metering: Metering,
        limits: LoopLimits | None = None,
    ) -> None:
        self._retrieval = retrieval
        self._model = model
        self._metering = metering
        self._limits = limits or LoopLimits()

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
        spaces = self._retrieval.namespaces(principal, request.namespaces, "chat")
        scopes = [TenantScope(tenant_id=principal.tenant_id, namespace_id=ns.namespace_id) for ns in spaces]
        # ``stream`` only changes the transport: a streamed run may be replayed as JSON and back.
        fingerprint = request_fingerprint("POST", "/v1/chat", request, ignore={"stream"})
        run = self._metering.start(principal.tenant_id, run_id, fingerprint)
        if run.replay is not None:
            return _replayed(run.replay, run.run_id)
        warnings = []
        if request.legacy_mode:
            warnings.append(
                Warning(
                    code="deprecated_mode",
                    message=f"mode {request.mode!r} is deprecated and ran as 'accurate'",
                )
            )
        mode = MODES[request.resolved_mode]
        retriever = self._retrieval.bind(scopes, usage=run.usage)
        return self._run(spaces[0].settings.system_prompt, retriever, messages, run, mode, warnings)

    def _run(
        self,
        stored_prompt: str,
        retriever: Retriever,
        messages: Sequence[ChatMessage],
        run: MeteredRun,
        mode: ModeSettings,
        warnings: list[Warning],
    ) -> Generator[RunEvent, None, None]:
        # accurate mode reranks when the deployment has a reranker; without one it is silently fused order
        rerank = mode.rerank and self._retrieval.reranker_name is not None
        ctx = ToolContext(retriever=retriever, candidates=mode.candidates, keep=mode.keep, rerank=rerank)
        outcome = LoopOutcome()
        system = ChatMessage(role="system", content=resolve_system_prompt(stored_prompt))
        try:
            yield from warnings
            try:
                history = [system, *prune_messages(messages)]
                yield from AgenticAgent(self._model, self._limits).run(history, ctx, outcome)
            except errors.RaglineError as exc:
                # Infrastructure failed mid-run: end cleanly, keep what was retrieved, charge what was used.
                outcome.exit_reason = "error"
                yield RunError(code=exc.code, message=exc.message)
            except Exception:
                # A bug: the client still gets an error event and a final event (never the bug's text).
                logger.exception("chat run failed", extra={"run_id": run.run_id})
                outcome.exit_reason = "error"
                yield RunError(code="internal_error", message="internal error")
            verified = verify_citations(outcome.answer, ctx.evidence)
            if verified.invented:
                yield Warning(
                    code="unknown_citations",
                    message="the answer cited chunks that were not retrieved; those citations were removed",
                    details={"ids": verified.invented},
                )
            cited = [ctx.evidence.get(alias) for alias in verified.cited]
            yield Sources(chunks=[ChunkView.of_evidence(e) for e in cited if e is not None])
            final = RunFinished(
                run_id=run.run_id,
                exit_reason=outcome.exit_reason,
                answer=verified.text,
                usage=Usage.of(run.usage),
            )
            final.usage = Usage.of(run.finish(_recorded(final)))
            yield final
        finally:
            run.finish()


def _recorded(final: RunFinished) -> str:
    """What a replay gets: the final event, without its answer when the whole would be too large."""
    text = final.model_dump_json()
    if len(text.encode()) <= MAX_RESULT_BYTES:
        return text
    return final.model_copy(update={"answer": ""}).model_dump_json()


def _replayed(replay: CompletedRun, run_id: str) -> Generator[RunEvent, None, None]:
    """The run's recorded final event again, flagged; a run that recorded none ends ``replayed``."""
    if replay.result is not None:
        final = RunFinished.model_validate_json(replay.result)
    else:  # the first run stopped before its final event (client gone, a crash) or predates results
        final = RunFinished(run_id=run_id, exit_reason="replayed_without_result", answer="", usage=Usage())
    yield final.model_copy(update={"usage": Usage.of(replay.usage), "replayed": True})
