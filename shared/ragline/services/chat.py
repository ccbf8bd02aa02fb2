"""``answer_chat``: one chat run — the agent loop, verified citations, and exactly one charge.

The run ends through :meth:`MeteredRun.finish`, which is idempotent and is reached on success, on error
and when the consumer stops reading (client disconnect), so every run is metered once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ragline import errors
from ragline.agents.agentic import AgenticAgent, LoopLimits, LoopOutcome
from ragline.agents.events import RunError, RunEvent, RunFinished, Sources, Warning
from ragline.agents.prompts import resolve_system_prompt
from ragline.agents.tools import RerankFn, ToolContext, rich
from ragline.domain.chat import ChatMessage, ChatMode, ChatRequest
from ragline.domain.citations import verify_citations
from ragline.domain.models import RunUsage, SearchHit, SearchMode, TenantScope
from ragline.domain.pruning import prune_messages
from ragline.domain.tenancy import Namespace
from ragline.ports import ChatModel, TenantRegistry, UsageLedger, VectorStoreProvider
from ragline.services.metering import MeteredRun, Metering
from ragline.services.namespaces import require_namespace
from ragline.services.search import SearchService
from ragline.services.tenancy import Principal


@dataclass(frozen=True)
class ModeSettings:
    """How much a mode retrieves: ``accurate`` fetches 30 and reranks to 10; ``fast`` fetches 10."""

    candidates: int
    keep: int
    rerank: bool


MODES: dict[ChatMode, ModeSettings] = {
    "accurate": ModeSettings(candidates=30, keep=10, rerank=True),
    "fast": ModeSettings(candidates=10, keep=10, rerank=False),
}


class ChatService:
    def __init__(
        self,
        *,
        registry: TenantRegistry,
        stores: VectorStoreProvider,
        search: SearchService,
        model: ChatModel,
        ledger: UsageLedger,
        rerank: RerankFn | None = None,
        limits: LoopLimits | None = None,
    ) -> None:
        self._registry = registry
        self._stores = stores
        self._search = search
        self._model = model
        self._metering = Metering(ledger=ledger, registry=registry)
        self._rerank = rerank
        self._limits = limits or LoopLimits()

    def answer_chat(
        self,
        tenant_id: str,
        request: ChatRequest,
        *,
        run_id: str | None = None,
        principal: Principal | None = None,
    ) -> Iterator[RunEvent]:
        """Validate, authorise and reserve before any work (errors raise here); then stream the run."""
        last = request.messages[-1]
        if any(m.role == "system" for m in request.messages):
            raise errors.InvalidRequest(
                "system messages are not accepted; the namespace sets the system prompt"
            )
        if last.role == "user" and not last.content.strip():
            raise errors.InvalidRequest("the last user message is empty")
        spaces = self._namespaces(tenant_id, request.namespaces)
        if principal is not None:
            for ns in spaces:
                principal.require("chat", ns.namespace_id)
        scopes = [TenantScope(tenant_id=tenant_id, namespace_id=ns.namespace_id) for ns in spaces]
        run = self._metering.start(tenant_id, run_id)
        warnings = []
        if request.legacy_mode:
            warnings.append(
                Warning(
                    code="deprecated_mode",
                    message=f"mode {request.mode!r} is deprecated and ran as 'accurate'",
                )
            )
        mode = MODES[request.resolved_mode]
        return self._run(spaces[0].settings.system_prompt, scopes, request.messages, run, mode, warnings)

    def _namespaces(self, tenant_id: str, requested: Sequence[str]) -> list[Namespace]:
        if requested:
            return [require_namespace(self._registry, tenant_id, ns) for ns in dict.fromkeys(requested)]
        owned = self._registry.list_namespaces(tenant_id)
        defaults = [ns for ns in owned if ns.default] or (owned if len(owned) == 1 else [])
        if not defaults:
            raise errors.InvalidRequest("no default namespace: name the namespaces to search")
        return defaults[:1]

    def _run(
        self,
        stored_prompt: str,
        scopes: list[TenantScope],
        messages: Sequence[ChatMessage],
        run: MeteredRun,
        mode: ModeSettings,
        warnings: list[Warning],
    ) -> Iterator[RunEvent]:
        ctx = ToolContext(
            scopes=scopes,
            stores={s: self._stores.scoped(s) for s in scopes},
            search=self._search_leg,
            candidates=mode.candidates,
            keep=mode.keep,
            rerank=self._rerank if mode.rerank else None,
            usage=run.usage,
        )
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
            verified = verify_citations(outcome.answer, ctx.retrieved)
            if verified.invented:
                yield Warning(
                    code="unknown_citations",
                    message="the answer cited chunks that were not retrieved; those citations were removed",
                    details={"ids": verified.invented},
                )
            yield Sources(chunks=[rich(*ctx.retrieved[i]) for i in verified.cited])
            usage = run.finish()
            yield RunFinished(
                run_id=run.run_id, exit_reason=outcome.exit_reason, answer=verified.text, usage=usage
            )
        finally:
            run.finish()

    def _search_leg(
        self, scope: TenantScope, text: str, mode: SearchMode, k: int
    ) -> tuple[list[SearchHit], RunUsage, list[str]]:
        out = self._search.search(scope, text, mode=mode, k=k)
        return out.hits, out.usage, out.warnings
