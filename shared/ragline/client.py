"""``RaglineClient``: the API from Python, typed with the same models the server uses.

    from ragline.client import RaglineClient

    with RaglineClient("https://api.example.com", api_key="rl_...") as rl:
        hits = rl.search("docs", "frame warranty").hits
        for event in rl.chat("How long is the frame warranty?", namespaces=["docs"]):
            if event.type == "text":
                print(event.text, end="")

Errors arrive as the server's own typed errors (:mod:`ragline.errors`: ``NamespaceNotFound``,
``Forbidden``, ``QuotaExceeded``…), each with the HTTP ``status`` set, parsed from the one error shape.
Requests are retried with exponential backoff (honouring ``Retry-After``) on connection failures, 429
and 502/503/504 — but only when a retry cannot do the work twice: GET, PATCH and DELETE, and the
metered POSTs (chat, search, hosting search), which always carry an ``Idempotency-Key`` (yours, or one
made per call), so a retry replays the recorded run instead of running and charging it again. A
stream is retried before its first event; one that drops later is resumed from its last event's id.
Only ``httpx`` and ``pydantic`` are needed.

End users: a key created with ``assert_user=True`` acts for the user its client names
(``rl.for_user("u-42", ["hr"])``: the ``Ragline-User-Id`` / ``Ragline-User-Groups`` headers); a
tenant identity provider's token is passed as ``api_key`` (it is sent as the same bearer token).
Every run takes ``filter=`` (the JSON filter of the README's Filters), applied inside the store.
"""

from __future__ import annotations

import copy
import json
import random
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, TypeVar, overload
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter

from ragline import errors
from ragline.agents.events import ChatResponse, RunAccepted, RunEvent, RunView
from ragline.domain.api import (
    DocumentDeletion,
    DocumentList,
    DocumentUpdate,
    DocumentView,
    HostingSearchResponse,
    IdentityProviderBody,
    IdentityProviderDeleted,
    IdentityProviderView,
    KeyList,
    KeyView,
    NamespaceDeleted,
    NamespaceList,
    NamespaceView,
    NewKeyView,
    SearchResponse,
    UsageReport,
)
from ragline.domain.conversation_api import ConversationList, ConversationView
from ragline.domain.evaluations import EvaluationList, EvaluationReport, EvaluationRequest, EvaluationView
from ragline.domain.limits import Limits
from ragline.domain.models import FusionName
from ragline.domain.source_api import SourceList, SourceView
from ragline.domain.webhook_api import NewWebhookView, WebhookList, WebhookView

M = TypeVar("M", bound=BaseModel)
Message = Mapping[str, str]
RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_RETRY_WAIT_S = 60.0
"""The longest ``Retry-After`` the client waits: a 429 asking for longer is raised at once (a retry
sooner would be refused again; the caller decides whether to come back)."""
_EVENTS: TypeAdapter[RunEvent] = TypeAdapter(RunEvent)


def _error_classes() -> dict[str, type[errors.RaglineError]]:
    found: dict[str, type[errors.RaglineError]] = {}
    pending: list[type[errors.RaglineError]] = [errors.RaglineError]
    while pending:
        cls = pending.pop()
        found.setdefault(cls.code, cls)
        pending.extend(cls.__subclasses__())
    return found


def api_error(status: int, body: Any) -> errors.RaglineError:
    """The typed error of a response in the one error shape (or a generic one for any other body)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        exc = errors.RaglineError(f"HTTP {status} without the error shape")
    else:
        cls = _error_classes().get(str(error.get("code")), errors.RaglineError)
        raw = error.get("details")
        details: dict[str, Any] = raw if isinstance(raw, dict) else {}
        exc = cls(str(error.get("message", "")), **details)
        if cls is errors.RaglineError:
            exc.code = str(error.get("code"))  # type: ignore[misc]  # an unknown code is kept as sent
    exc.status = status  # type: ignore[attr-defined]
    return exc


class RaglineClient:
    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
        )
        self._max_retries = max_retries
        self._backoff_s = backoff_s
        self._user: dict[str, str] = {}

    def for_user(self, user_id: str, groups: Sequence[str] = ()) -> RaglineClient:
        """This client acting for an end user (its key needs ``assertUser``). It shares this client's
        connections: close either one, and both are closed."""
        other = copy.copy(self)
        other._user = {"Ragline-User-Id": user_id}
        if groups:
            other._user["Ragline-User-Groups"] = ",".join(groups)
        return other

    def __enter__(self) -> RaglineClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

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

    # -- answer evaluation jobs --------------------------------------------------------------
    def create_evaluation(self, job: EvaluationRequest | Mapping[str, Any]) -> EvaluationView:
        """Queue a job: its questions through chat under one or two configurations, every answer
        scored (README "Evaluating answers"); poll :meth:`get_evaluation` until ``completed``."""
        body = job.model_dump(mode="json", by_alias=True) if isinstance(job, EvaluationRequest) else job
        return self._call(EvaluationView, "POST", "/v1/evaluations", body)

    def list_evaluations(self) -> EvaluationList:
        return self._call(EvaluationList, "GET", "/v1/evaluations")

    def get_evaluation(self, evaluation_id: str) -> EvaluationView:
        return self._call(EvaluationView, "GET", f"/v1/evaluations/{_seg(evaluation_id)}")

    def evaluation_report(self, evaluation_id: str) -> EvaluationReport:
        """A completed job's report (``evaluation_not_complete`` before then)."""
        path = f"/v1/evaluations/{_seg(evaluation_id)}/report"
        return self._call(EvaluationReport, "GET", path, params={"format": "json"})

    def evaluation_report_html(self, evaluation_id: str) -> str:
        """The report as the one self-contained HTML page."""
        response = self._http.get(f"/v1/evaluations/{_seg(evaluation_id)}/report", headers=self._user)
        if response.status_code >= 400:
            raise api_error(response.status_code, _json(response))
        return response.text

    # -- documents -----------------------------------------------------------------------------
    def list_documents(self, namespace: str) -> DocumentList:
        return self._call(DocumentList, "GET", f"/v1/namespaces/{_seg(namespace)}/documents")

    def get_document(self, namespace: str, document_id: str) -> DocumentView:
        path = f"/v1/namespaces/{_seg(namespace)}/documents/{_seg(document_id)}"
        return self._call(DocumentView, "GET", path)

    def add_text(
        self,
        namespace: str,
        filename: str,
        text: str,
        *,
        document_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        users: Sequence[str] | None = None,
        groups: Sequence[str] | None = None,
    ) -> DocumentView:
        """``metadata``: ``{key: value}`` (string, number, boolean, list of strings, ISO date);
        ``users``/``groups``: who may read it (none: everyone)."""
        body: dict[str, Any] = {"filename": filename, "text": text}
        if document_id is not None:
            body["documentId"] = document_id
        if metadata:
            body["metadata"] = dict(metadata)
        if users or groups:
            body["access"] = {"users": list(users or ()), "groups": list(groups or ())}
        return self._call(DocumentView, "POST", f"/v1/namespaces/{_seg(namespace)}/documents", body)

    def update_document(
        self,
        namespace: str,
        document_id: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        users: Sequence[str] | None = None,
        groups: Sequence[str] | None = None,
    ) -> DocumentUpdate:
        """Replace a document's metadata (when given) and/or who may read it (when ``users`` or
        ``groups`` is given; both empty lists: everyone). Its content is not re-embedded."""
        body: dict[str, Any] = {}
        if metadata is not None:
            body["metadata"] = dict(metadata)
        if users is not None or groups is not None:
            body["access"] = {"users": list(users or ()), "groups": list(groups or ())}
        path = f"/v1/namespaces/{_seg(namespace)}/documents/{_seg(document_id)}"
        return self._call(DocumentUpdate, "PATCH", path, body)

    def delete_document(self, namespace: str, document_id: str) -> DocumentDeletion:
        path = f"/v1/namespaces/{_seg(namespace)}/documents/{_seg(document_id)}"
        return self._call(DocumentDeletion, "DELETE", path)

    # -- administration ------------------------------------------------------------------------
    def list_namespaces(self) -> NamespaceList:
        return self._call(NamespaceList, "GET", "/v1/namespaces")

    def get_namespace(self, namespace: str) -> NamespaceView:
        return self._call(NamespaceView, "GET", f"/v1/namespaces/{_seg(namespace)}")

    def create_namespace(
        self, namespace: str, *, description: str = "", default: bool = False
    ) -> NamespaceView:
        body = {"namespaceId": namespace, "description": description, "default": default}
        return self._call(NamespaceView, "POST", "/v1/namespaces", body)

    def update_namespace(
        self,
        namespace: str,
        *,
        description: str | None = None,
        default: bool | None = None,
        system_prompt: str | None = None,
        chunks_per_search: int | None = None,
        metadata_schema: Mapping[str, str] | None = None,
    ) -> NamespaceView:
        """``metadata_schema`` declares metadata keys' types (adds keys; dates must be declared)."""
        patch = {
            "description": description,
            "default": default,
            "systemPrompt": system_prompt,
            "chunksPerSearch": chunks_per_search,
            "metadataSchema": dict(metadata_schema) if metadata_schema else None,
        }
        body = {k: v for k, v in patch.items() if v is not None}
        return self._call(NamespaceView, "PATCH", f"/v1/namespaces/{_seg(namespace)}", body)

    def reindex_namespace(
        self,
        namespace: str,
        *,
        embedding_model: str | None = None,
        chunk_tokens: int | None = None,
        chunk_overlap_tokens: int | None = None,
        chunking: str | None = None,
        parent_chunk_tokens: int | None = None,
    ) -> NamespaceView:
        """Start rebuilding ``namespace`` with another embedding model or chunking; it keeps serving
        meanwhile, and ``get_namespace(...).rebuild`` shows the progress."""
        request = {
            "embeddingModel": embedding_model,
            "chunkTokens": chunk_tokens,
            "chunkOverlapTokens": chunk_overlap_tokens,
            "chunking": chunking,
            "parentChunkTokens": parent_chunk_tokens,
        }
        body = {k: v for k, v in request.items() if v is not None}
        return self._call(NamespaceView, "POST", f"/v1/namespaces/{_seg(namespace)}/reindex", body)

    def delete_namespace(self, namespace: str) -> NamespaceDeleted:
        return self._call(NamespaceDeleted, "DELETE", f"/v1/namespaces/{_seg(namespace)}")

    def list_keys(self) -> KeyList:
        return self._call(KeyList, "GET", "/v1/keys")

    def create_key(
        self,
        scopes: Sequence[str],
        *,
        name: str = "",
        namespaces: Sequence[str] = (),
        assert_user: bool = False,
        require_user: bool = False,
        limits: Limits | None = None,
    ) -> NewKeyView:
        """``assert_user``: the key may act for an end user (:meth:`for_user`); ``require_user``: it must.
        ``limits``: the key's own request rate and concurrent runs, within its tenant's."""
        body: dict[str, Any] = {
            "scopes": list(scopes),
            "name": name,
            "namespaces": list(namespaces),
            "assertUser": assert_user,
            "requireUser": require_user,
        }
        if limits is not None:
            body["limits"] = limits.model_dump(exclude_none=True)
        return self._call(NewKeyView, "POST", "/v1/keys", body)

    def get_identity_provider(self) -> IdentityProviderView:
        return self._call(IdentityProviderView, "GET", "/v1/tenant/identity-provider")

    def set_identity_provider(
        self, provider: IdentityProviderBody | Mapping[str, Any]
    ) -> IdentityProviderView:
        """Whose tokens act as this tenant's end users (camelCase fields, as the API's body)."""
        body = provider.model_dump(by_alias=True) if isinstance(provider, BaseModel) else dict(provider)
        return self._call(IdentityProviderView, "PUT", "/v1/tenant/identity-provider", body)

    def delete_identity_provider(self) -> IdentityProviderDeleted:
        return self._call(IdentityProviderDeleted, "DELETE", "/v1/tenant/identity-provider")

    def revoke_key(self, key_id: str) -> KeyView:
        return self._call(KeyView, "DELETE", f"/v1/keys/{_seg(key_id)}")

    def create_webhook(
        self, url: str, *, event_types: Sequence[str] = (), description: str = ""
    ) -> NewWebhookView:
        """Subscribe ``url`` to ``event_types`` (none: every event); the signing secret is in this
        answer only (keep it: it verifies each delivery's ``Ragline-Signature``)."""
        body = {"url": url, "eventTypes": list(event_types), "description": description}
        return self._call(NewWebhookView, "POST", "/v1/webhooks", body)

    def list_webhooks(self) -> WebhookList:
        return self._call(WebhookList, "GET", "/v1/webhooks")

    def get_webhook(self, webhook_id: str) -> WebhookView:
        return self._call(WebhookView, "GET", f"/v1/webhooks/{_seg(webhook_id)}")

    def delete_webhook(self, webhook_id: str) -> WebhookView:
        return self._call(WebhookView, "DELETE", f"/v1/webhooks/{_seg(webhook_id)}")

    def rotate_webhook_secret(self, webhook_id: str) -> NewWebhookView:
        """A new signing secret, returned this once; the old one stops signing at once."""
        return self._call(NewWebhookView, "POST", f"/v1/webhooks/{_seg(webhook_id)}/rotate-secret", {})

    def create_source(
        self,
        namespace: str,
        kind: str,
        settings: Mapping[str, Any],
        *,
        name: str = "",
        credentials: Mapping[str, str] | None = None,
        every_minutes: int = 0,
    ) -> SourceView:
        """Add a data source to ``namespace`` (``kind``: ``web``, ``confluence`` or ``graph``, with that
        kind's ``settings``); its first sync is queued at once. ``credentials`` are stored in the
        deployment's secret store and never returned."""
        body: dict[str, Any] = {
            "kind": kind,
            "name": name,
            kind: dict(settings),
            "everyMinutes": every_minutes,
        }
        if credentials is not None:
            body["credentials"] = dict(credentials)
        return self._call(SourceView, "POST", f"/v1/namespaces/{_seg(namespace)}/sources", body)

    def list_sources(self, namespace: str) -> SourceList:
        return self._call(SourceList, "GET", f"/v1/namespaces/{_seg(namespace)}/sources")

    def get_source(self, namespace: str, source_id: str) -> SourceView:
        return self._call(SourceView, "GET", f"/v1/namespaces/{_seg(namespace)}/sources/{_seg(source_id)}")

    def update_source(
        self,
        namespace: str,
        source_id: str,
        *,
        name: str | None = None,
        settings: Mapping[str, Any] | None = None,
        credentials: Mapping[str, str] | None = None,
        every_minutes: int | None = None,
    ) -> SourceView:
        """Change what is given; ``settings`` replace the kind's settings whole."""
        current = self.get_source(namespace, source_id) if settings is not None else None
        body: dict[str, Any] = {}
        if name is not None:
            body["name"] = name
        if every_minutes is not None:
            body["everyMinutes"] = every_minutes
        if credentials is not None:
            body["credentials"] = dict(credentials)
        if current is not None and settings is not None:
            body[current.kind] = dict(settings)
        path = f"/v1/namespaces/{_seg(namespace)}/sources/{_seg(source_id)}"
        return self._call(SourceView, "PATCH", path, body)

    def sync_source(self, namespace: str, source_id: str, *, full: bool = False) -> SourceView:
        """Queue a sync now (one already running is the one asked for); poll ``get_source``."""
        path = f"/v1/namespaces/{_seg(namespace)}/sources/{_seg(source_id)}/sync"
        return self._call(SourceView, "POST", path, {"full": full})

    def delete_source(self, namespace: str, source_id: str) -> SourceView:
        """Remove the source: its credentials and schedule now, its documents in steps, then it."""
        return self._call(SourceView, "DELETE", f"/v1/namespaces/{_seg(namespace)}/sources/{_seg(source_id)}")

    def usage(self, period: str | None = None) -> UsageReport:
        params = {"period": period} if period else None
        return self._call(UsageReport, "GET", "/v1/usage", params=params)

    # -- transport -----------------------------------------------------------------------------
    @overload
    def _call(
        self,
        model: type[M],
        method: str,
        path: str,
        body: Any = ...,
        *,
        run: str | None = ...,
        params: Mapping[str, str] | None = ...,
    ) -> M: ...

    @overload
    def _call(
        self,
        model: None,
        method: str,
        path: str,
        body: Any = ...,
        *,
        run: str | None = ...,
        params: Mapping[str, str] | None = ...,
    ) -> None: ...

    def _call(
        self,
        model: type[M] | None,
        method: str,
        path: str,
        body: Any = None,
        *,
        run: str | None = None,
        params: Mapping[str, str] | None = None,
    ) -> M | None:
        headers = {**self._user, "Idempotency-Key": run} if run else dict(self._user)
        # A retry must not do the work twice: reads and idempotent writes, and runs under their key.
        retriable = method in ("GET", "PUT", "PATCH", "DELETE") or run is not None
        for attempt in range(self._max_retries + 1):
            try:
                response = self._http.request(method, path, json=body, headers=headers, params=params)
            except httpx.TransportError:
                if not retriable or attempt >= self._max_retries:
                    raise
                self._sleep(attempt, None)
                continue
            if response.status_code < 400:
                return None if model is None else model.model_validate_json(response.content)
            if self._should_retry(response, attempt, retriable=retriable):
                self._sleep(attempt, response)
                continue
            raise api_error(response.status_code, _json(response))
        raise AssertionError("unreachable")  # pragma: no cover

    def _should_retry(self, response: httpx.Response, attempt: int, *, retriable: bool) -> bool:
        status = response.status_code
        if attempt >= self._max_retries or (_retry_after(response) or 0.0) > MAX_RETRY_WAIT_S:
            return False  # out of retries, or asked to wait longer than a retry would
        # 429 means the request was not processed: every request may retry it.
        return status == 429 or (retriable and status in RETRY_STATUSES)

    def _sleep(self, attempt: int, response: httpx.Response | None) -> None:
        delay = self._backoff_s * 2**attempt * (0.5 + random.random() / 2)
        after = _retry_after(response) if response is not None else None
        if after is not None:
            delay = max(delay, min(after, MAX_RETRY_WAIT_S))
        time.sleep(delay)


def _retry_after(response: httpx.Response) -> float | None:
    """The response's ``Retry-After`` in seconds (None: absent, or an HTTP date)."""
    try:
        return float(response.headers["retry-after"])
    except (KeyError, ValueError):
        return None


def _seg(value: str) -> str:
    """One path segment, percent-escaped (a document id may hold ``/``)."""
    return quote(value, safe="")


def _run_key() -> str:
    return f"client-{uuid.uuid4().hex}"


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


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


def _sse(lines: Iterator[str]) -> Iterator[tuple[int, RunEvent]]:
    """Server-Sent Events → (sequence number, typed run event): ``data`` lines joined, the ``id``
    kept (0 when absent: a replay's one event), comments ignored."""
    data: list[str] = []
    seq = 0
    for line in lines:
        if line == "":
            if data:
                yield seq, _EVENTS.validate_python(json.loads("\n".join(data)))
                data, seq = [], 0
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line.startswith("id:") and line[3:].strip().isdigit():
            seq = int(line[3:].strip())
    if data:
        yield seq, _EVENTS.validate_python(json.loads("\n".join(data)))
