"""The client's runs: the metered ones (search, hosting search, chat streamed, whole or in the
background), then following and cancelling a run, and the conversations runs continue.

A metered POST always carries an ``Idempotency-Key`` (the caller's, or one made per call), so a
retry replays the recorded run instead of running and charging it again; a chat stream that drops
after its first event is resumed from its last event's id (``GET /v1/runs/{id}/events``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

import httpx

from ragline.agents.events import ChatResponse, RunAccepted, RunEvent, RunView
from ragline.domain.api import HostingSearchResponse, SearchResponse
from ragline.domain.conversation_api import ConversationList, ConversationView
from ragline.domain.models import FusionName

from .api_errors import api_error
from .sse import _sse
from .transport import ApiTransport, _json, _run_key, _seg

Message = Mapping[str, str]


class RunRequests(ApiTransport):
    """Runs, their events and conversations (see the module docstring for retries and resumption)."""

    # -- runs (metered) ------------------------------------------------------------------------
    def search(
        self,
        namespace: str,
        query: str,
        *,
        mode: Literal["semantic", "keyword", "hybrid"] = "hybrid",
        k: int = 10,
        rerank: bool = False,
        fusion: FusionName | None = None,
        filter: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> SearchResponse:
        body: dict[str, Any] = {"query": query, "mode": mode, "k": k, "rerank": rerank}
        if fusion is not None:
            body["fusion"] = fusion
        if filter is not None:
            body["filter"] = dict(filter)
        path = f"/v1/namespaces/{_seg(namespace)}/search"
        return self._call(SearchResponse, "POST", path, body, run=idempotency_key or _run_key())

    def hosting_search(
        self,
        query: str | None = None,
        *,
        messages: Sequence[Message] | None = None,
        namespaces: Sequence[str] = (),
        max_evals: int = 3,
        token_budget: int = 4096,
        top_k: int = 15,
        mode: Literal["accurate", "fast"] = "accurate",
        filter: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> HostingSearchResponse:
        body: dict[str, Any] = {
            "namespaces": list(namespaces),
            "maxEvals": max_evals,
            "tokenBudget": token_budget,
            "topK": top_k,
            "mode": mode,
        }
        if filter is not None:
            body["filter"] = dict(filter)
        if messages is not None:
            body["messages"] = [dict(m) for m in messages]
        if query is not None:
            body["query"] = query
        return self._call(
            HostingSearchResponse, "POST", "/v1/hosting-search", body, run=idempotency_key or _run_key()
        )

    def chat(
        self,
        question: str | Sequence[Message],
        *,
        namespaces: Sequence[str] | Literal["auto"] = (),
        agent: Literal["auto", "agentic", "deep_search", "chain_of_rag"] = "agentic",
        mode: Literal["accurate", "fast"] = "accurate",
        filter: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        conversation_id: str | None = None,
    ) -> Iterator[RunEvent]:
        """The run's events as they stream (``text``, ``tool_start``, ``sources``… ``final``). A stream
        that drops mid-run is resumed where it stopped (``GET /v1/runs/{id}/events`` with the last
        event's id): no event is lost or repeated, and the run is not run again.
        ``conversation_id``: continue that conversation (``question``: only the new turn)."""
        body = _chat_body(
            question, namespaces, agent, mode, filter, stream=True, conversation=conversation_id
        )
        headers = {
            **self._user,
            "Idempotency-Key": idempotency_key or _run_key(),
            "Accept": "text/event-stream",
        }
        for attempt in range(self._max_retries + 1):
            with self._http.stream("POST", "/v1/chat", json=body, headers=headers) as response:
                if response.status_code >= 400:
                    response.read()
                    if self._should_retry(response, attempt, retriable=True):
                        self._sleep(attempt, response)
                        continue
                    raise api_error(response.status_code, _json(response))
                run_id, last = response.headers.get("ragline-run-id", ""), 0
                try:
                    for seq, event in _sse(response.iter_lines()):
                        last = seq or last
                        yield event
                    return
                except httpx.TransportError:
                    if not run_id:
                        raise
            yield from self.run_events(run_id, after=last)
            return

    def ask(
        self,
        question: str | Sequence[Message],
        *,
        namespaces: Sequence[str] | Literal["auto"] = (),
        agent: Literal["auto", "agentic", "deep_search", "chain_of_rag"] = "agentic",
        mode: Literal["accurate", "fast"] = "accurate",
        filter: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        conversation_id: str | None = None,
    ) -> ChatResponse:
        """A whole chat run as one body (``stream: false``): answer, sources, warnings, usage, plan and
        ``conversation_id`` (pass it to the next turn)."""
        body = _chat_body(
            question, namespaces, agent, mode, filter, stream=False, conversation=conversation_id
        )
        return self._call(ChatResponse, "POST", "/v1/chat", body, run=idempotency_key or _run_key())

    def start_run(
        self,
        question: str | Sequence[Message],
        *,
        namespaces: Sequence[str] | Literal["auto"] = (),
        agent: Literal["auto", "agentic", "deep_search", "chain_of_rag"] = "agentic",
        mode: Literal["accurate", "fast"] = "accurate",
        filter: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        conversation_id: str | None = None,
    ) -> RunAccepted:
        """A chat run in the background (``background: true``): queued at once, it goes on with no
        client. Read it with :meth:`get_run`, follow it with :meth:`run_events`, stop it with
        :meth:`cancel_run`."""
        body = _chat_body(
            question, namespaces, agent, mode, filter, stream=False, conversation=conversation_id
        )
        body["background"] = True
        return self._call(RunAccepted, "POST", "/v1/chat", body, run=idempotency_key or _run_key())

    # -- runs and conversations ----------------------------------------------------------------
    def get_run(self, run_id: str) -> RunView:
        return self._call(RunView, "GET", f"/v1/runs/{_seg(run_id)}")

    def run_events(self, run_id: str, *, after: int = 0) -> Iterator[RunEvent]:
        """The run's events after event ``after``, then its live tail until it ends; a dropped
        connection is resumed after the last event received."""
        for attempt in range(self._max_retries + 1):
            headers = {**self._user, "Last-Event-ID": str(after), "Accept": "text/event-stream"}
            try:
                with self._http.stream("GET", f"/v1/runs/{_seg(run_id)}/events", headers=headers) as response:
                    if response.status_code >= 400:
                        response.read()
                        if self._should_retry(response, attempt, retriable=True):
                            self._sleep(attempt, response)
                            continue
                        raise api_error(response.status_code, _json(response))
                    for seq, event in _sse(response.iter_lines()):
                        after = seq or after
                        yield event
                    return
            except httpx.TransportError:
                if attempt >= self._max_retries:
                    raise
                self._sleep(attempt, None)

    def cancel_run(self, run_id: str) -> RunView:
        """Stop the run: it ends ``cancelled``, charged for what it spent (an ended run is unchanged)."""
        return self._call(RunView, "POST", f"/v1/runs/{_seg(run_id)}/cancel", {})

    def list_conversations(self) -> ConversationList:
        return self._call(ConversationList, "GET", "/v1/conversations")

    def get_conversation(self, conversation_id: str) -> ConversationView:
        return self._call(ConversationView, "GET", f"/v1/conversations/{_seg(conversation_id)}")

    def delete_conversation(self, conversation_id: str) -> None:
        self._call(None, "DELETE", f"/v1/conversations/{_seg(conversation_id)}")


def _chat_body(
    question: str | Sequence[Message],
    namespaces: Sequence[str] | Literal["auto"],
    agent: str,
    mode: str,
    filter: Mapping[str, Any] | None,
    *,
    stream: bool,
    conversation: str | None = None,
) -> dict[str, Any]:
    messages = (
        [{"role": "user", "content": question}] if isinstance(question, str) else [dict(m) for m in question]
    )
    spaces: Any = namespaces if namespaces == "auto" else list(namespaces)
    body = {"messages": messages, "namespaces": spaces, "agent": agent, "mode": mode, "stream": stream}
    if filter is not None:
        body["filter"] = dict(filter)
    if conversation is not None:
        body["conversationId"] = conversation
    return body
