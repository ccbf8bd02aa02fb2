"""``answer_chat``: one chat run — the agent loop, verified citations, and exactly one charge.

The run ends through :meth:`ChatRun.finish`, which is idempotent and is reached on success, on error
and when the consumer stops reading (client disconnect), so every run is metered once.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ragline import errors
from ragline.agents.agentic import AgenticAgent, LoopOutcome
from ragline.agents.events import RunEvent, RunFinished, Sources, Warning
from ragline.agents.prompts import resolve_system_prompt
from ragline.agents.tools import ToolContext, rich
from ragline.domain.chat import ChatMessage
from ragline.domain.citations import verify_citations
from ragline.domain.models import RunUsage, SearchHit, SearchMode, TenantScope
from ragline.ports import ChatModel, TenantRegistry, UsageLedger, VectorStoreProvider
from ragline.services.namespaces import require_namespace
from ragline.services.search import SearchService


@dataclass
class ChatRun:
    tenant_id: str
    run_id: str
    ledger: UsageLedger
    usage: RunUsage
    charged: RunUsage | None = None

    def finish(self) -> RunUsage:
        """Commit the usage once; later calls return the first charge."""
        if self.charged is None:
            self.charged = self.ledger.commit(self.tenant_id, self.run_id, self.usage)
        return self.charged


class ChatService:
    def __init__(
        self,
        *,
        registry: TenantRegistry,
        stores: VectorStoreProvider,
        search: SearchService,
        model: ChatModel,
        ledger: UsageLedger,
        top_k: int = 10,
    ) -> None:
        self._registry = registry
        self._stores = stores
        self._search = search
        self._model = model
        self._ledger = ledger
        self._top_k = top_k

    def answer_chat(
        self,
        tenant_id: str,
        namespaces: Sequence[str],
        messages: Sequence[ChatMessage],
        *,
        run_id: str | None = None,
    ) -> Iterator[RunEvent]:
        if not messages or messages[-1].role != "user" or not messages[-1].content.strip():
            raise errors.InvalidRequest("the last message must be a non-empty user message")
        if not namespaces:
            raise errors.InvalidRequest("at least one namespace is required")
        spaces = [require_namespace(self._registry, tenant_id, ns) for ns in dict.fromkeys(namespaces)]
        scopes = [TenantScope(tenant_id=tenant_id, namespace_id=ns.namespace_id) for ns in spaces]
        run_id = run_id or uuid.uuid4().hex
        self._ledger.reserve(tenant_id, run_id)
        return self._run(spaces[0].settings.system_prompt, scopes, messages, run_id, tenant_id)

    def _run(
        self,
        stored_prompt: str,
        scopes: list[TenantScope],
        messages: Sequence[ChatMessage],
        run_id: str,
        tenant_id: str,
    ) -> Iterator[RunEvent]:
        ctx = ToolContext(
            scopes=scopes,
            stores={s: self._stores.scoped(s) for s in scopes},
            search=self._search_leg,
            top_k=self._top_k,
        )
        run = ChatRun(tenant_id=tenant_id, run_id=run_id, ledger=self._ledger, usage=ctx.usage)
        outcome = LoopOutcome()
        system = ChatMessage(role="system", content=resolve_system_prompt(stored_prompt))
        try:
            yield from AgenticAgent(self._model).run([system, *messages], ctx, outcome)
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
                run_id=run_id, exit_reason=outcome.exit_reason, answer=verified.text, usage=usage
            )
        finally:
            run.finish()

    def _search_leg(
        self, scope: TenantScope, text: str, mode: SearchMode, k: int
    ) -> tuple[list[SearchHit], RunUsage]:
        out = self._search.search(scope, text, mode=mode, k=k)
        return out.hits, out.usage
