"""One error tree. Every error Ragline raises on purpose is a :class:`RaglineError` with a stable code.

HTTP statuses are assigned at the edge (:mod:`ragline.http`), from ``code`` alone; nothing ever
matches on message text.
"""

from __future__ import annotations

from typing import Any, ClassVar


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class RaglineError(Exception):
    """Base of all Ragline errors: a stable machine ``code``, a human message, optional details."""

    code: ClassVar[str] = "internal_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """The one JSON error shape: ``{"error": {"code", "message", "details"}}``, detail names in
        camelCase like every field of the API."""
        details = {_camel(k): v for k, v in self.details.items()}
        return {"error": {"code": self.code, "message": self.message, "details": details}}


class InvalidRequest(RaglineError):
    """The caller sent something malformed (bad field, bad mode, empty query)."""

    code = "invalid_request"


class Unauthorized(RaglineError):
    """No or unknown credentials."""

    code = "unauthorized"


class Forbidden(RaglineError):
    """Credentials are valid but lack the scope or namespace access."""

    code = "forbidden"


class UserContextForbidden(Forbidden):
    """A request acting for an end user reached a route that manages the tenant: end users read."""

    code = "user_context_forbidden"


class NotFound(RaglineError):
    """A tenant, namespace, document or path that does not exist (for this caller)."""

    code = "not_found"


class RunNotFound(NotFound):
    """No such run for this caller (another tenant's, user's or key's run is the same 404)."""

    code = "run_not_found"


class ConversationNotFound(NotFound):
    """No such conversation for this caller (another user's is the same 404)."""

    code = "conversation_not_found"


class EvaluationNotFound(NotFound):
    """No such evaluation job for this caller (another tenant's, user's or key's is the same 404)."""

    code = "evaluation_not_found"


class NamespaceNotFound(NotFound):
    """The namespace does not exist in this tenant's store."""

    code = "namespace_not_found"


class MethodNotAllowed(RaglineError):
    """The path exists but does not take this HTTP method (the ``Allow`` header lists those it does)."""

    code = "method_not_allowed"


class UnsupportedMediaType(RaglineError):
    """The request body is declared as something other than JSON, the only body the API reads."""

    code = "unsupported_media_type"


class Conflict(RaglineError):
    """The request conflicts with stored state (e.g. an embedding model mismatch)."""

    code = "conflict"


class EvaluationNotComplete(Conflict):
    """An evaluation job's report was asked for before the job completed."""

    code = "evaluation_not_complete"


class RunInProgress(Conflict):
    """A run with this ``Idempotency-Key`` is still being worked on; retry once it has finished."""

    code = "run_in_progress"


class IdempotencyKeyReused(RaglineError):
    """This ``Idempotency-Key`` already names a run of another request (method, route or body)."""

    code = "idempotency_key_reused"


class EmbeddingMismatch(Conflict):
    """Vectors of another model or dimension would corrupt the namespace; refused."""

    code = "embedding_mismatch"


class MetadataTypeClash(Conflict):
    """A metadata value (or a filter's) of another type than the namespace fixed for its key."""

    code = "metadata_type_clash"


class Superseded(Conflict):
    """A newer event claimed the document while this worker held an older version; its work is void."""

    code = "superseded"


class DocumentBusy(Conflict):
    """Another worker holds a live claim on this very event (a duplicate copy of its message): this
    copy backs off without doing the work, and its redelivery finds the work done, or — once the
    claim's lease has run out because that worker died — takes it over."""

    code = "document_busy"


class StepBusy(Conflict):
    """Another worker runs this reindex step now (a copy of its message): retried after its lease."""

    code = "step_busy"


class SyncInProgress(Conflict):
    """A data source is being synced: the change that needs it idle was not made; retry after it."""

    code = "sync_in_progress"


class DocumentTooLarge(RaglineError):
    """The document exceeds the configured size limit."""

    code = "document_too_large"


class DocumentDeadlineExceeded(DocumentTooLarge):
    """Parsing and chunking one document ran past its time budget (a pathological or hostile file).

    Too large to process rather than too large to store: the record ends ``failed`` with this reason
    instead of holding the worker until the function itself times out.
    """

    code = "document_deadline_exceeded"


class EmbeddingTimeExceeded(DocumentTooLarge):
    """Embedding the document would take longer than one ingestion run can give it, at the rate the
    embedder was measured at: the version ends ``failed`` instead of outliving its worker."""

    code = "embedding_time_exceeded"


class WorkerOutOfTime(RaglineError):
    """Too little of the worker's run is left to start or finish a document that a fresh run could
    index: nothing is the document's fault, the served version stays, and the message is retried."""

    code = "worker_out_of_time"


class UnsupportedDocument(RaglineError):
    """No parser for this file type."""

    code = "unsupported_document"


class ReservedName(UnsupportedDocument):
    """An object named ``<name>.metadata.json`` is the metadata sidecar of ``<name>``, never a document:
    one with no document beside it is recorded on ``<name>`` as failed with this reason."""

    code = "reserved_name"


class UnreadableDocument(RaglineError):
    """The parser could not read the file (corrupt, encrypted, not what its extension says)."""

    code = "unreadable_document"


class EmptyDocument(RaglineError):
    """The file parsed but holds no text to index."""

    code = "empty_document"


class QuotaExceeded(RaglineError):
    """The tenant has used its quota for the period."""

    code = "quota_exceeded"


class Throttled(RaglineError):
    """A dependency asked us to slow down; safe to retry later."""

    code = "throttled"


class ModelThrottled(Throttled):
    """The chat model's service is rate limiting Ragline, after bounded retries with jitter; the caller
    may retry the run later (with the same ``Idempotency-Key``: it is charged once)."""

    code = "model_throttled"


class RateLimited(Throttled):
    """The tenant's or the key's request rate is at its limit (fair sharing): nothing was done; retry
    after ``retry_after`` seconds (also the response's ``Retry-After`` header)."""

    code = "rate_limited"

    def __init__(self, message: str, *, retry_after: int | None = None, **details: Any) -> None:
        if retry_after is None:  # rebuilt from the error shape (the client): its camelCase detail
            retry_after = int(details.pop("retryAfter", 1))
        super().__init__(message, retry_after=retry_after, **details)
        self.retry_after = retry_after


class TooManyRuns(RateLimited):
    """The tenant or the key already has its most concurrent runs (chat, search, hosting search) in
    flight: nothing was done; retry when one has ended."""

    code = "too_many_runs"


class DependencyUnavailable(RaglineError):
    """A dependency (store, model endpoint) is down or timed out; retryable."""

    code = "dependency_unavailable"


class EventNotPublished(DependencyUnavailable):
    """A change is recorded but its event could not be published; retryable: the retried work finds
    the change settled and announces it again, with the same event id."""

    code = "event_not_published"


class DependencyFailed(RaglineError):
    """A dependency rejected a request Ragline built (a bug or a misconfiguration, not retryable)."""

    code = "dependency_failed"


class CursorExpired(DependencyFailed):
    """A data source no longer honours the sync's cursor (a delta token that expired): the sync starts
    over with a full listing."""

    code = "cursor_expired"


class ConfigurationError(RaglineError):
    """Settings are inconsistent or a required setting is missing."""

    code = "configuration_error"


class ModelAccessDenied(ConfigurationError):
    """The deployment may not call its chat model: model access not enabled in the Bedrock console, a
    model id the Region does not offer, or a role without the permission. The message names the model
    and how to enable it."""

    code = "model_access_denied"


class ContextTooLong(InvalidRequest):
    """The conversation and its evidence do not fit the model's context window, even after pruning."""

    code = "context_too_long"


class RerankFailed(DependencyFailed):
    """The reranker could not rank (model error, malformed answer); callers fall back to fused order.

    ``input_tokens``/``output_tokens`` are what the failed attempt still cost, so it is metered.
    """

    code = "rerank_failed"

    def __init__(
        self, message: str, *, input_tokens: int = 0, output_tokens: int = 0, **details: Any
    ) -> None:
        super().__init__(message, **details)
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens


class GroundingFailed(DependencyFailed):
    """The grounding scorer could not check an answer (model or service error, malformed verdicts);
    the run still answers, with ``grounding.status: "unavailable"`` and a warning.

    ``usage`` is what the failed attempt still cost (model tokens), so it is metered with the run.
    """

    code = "grounding_failed"

    def __init__(self, message: str, *, usage: Any = None, **details: Any) -> None:
        super().__init__(message, **details)
        self.usage = usage


RETRYABLE: tuple[type[RaglineError], ...] = (Throttled, DependencyUnavailable)
"""Errors a caller may retry with backoff (SQS redelivery, client retries)."""
