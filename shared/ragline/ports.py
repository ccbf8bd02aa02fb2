"""Ports: the small Protocols the core depends on. Their docstrings are the contracts.

Every port has an embedded implementation (no servers) and a production one, and one contract-test
suite in ``tests/contract`` that both pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: importing the ports must stay cheap (cold starts)
    import numpy as np
    from numpy.typing import NDArray

    from ragline.documents.page_text import TextLine
    from ragline.domain.attributes import AttributeType
    from ragline.domain.billing import CompletedRun
    from ragline.domain.chat import ChatMessage, ChatOptions, ModelEvent, ToolSpec
    from ragline.domain.conversations import Conversation
    from ragline.domain.documents import Claim, DocumentRecord
    from ragline.domain.evaluations import JudgeVerdict
    from ragline.domain.events import Event
    from ragline.domain.filters import ReadView
    from ragline.domain.generations import ReindexStep
    from ragline.domain.grounding import Checked, CitedClaim
    from ragline.domain.identity import IdentityProvider
    from ragline.domain.keys import KeyGrant
    from ragline.domain.limits import Bucket, Rate
    from ragline.domain.models import (
        Chunk,
        IngestUsage,
        RunUsage,
        SearchHit,
        SearchQuery,
        StoreCapabilities,
        TenantScope,
    )
    from ragline.domain.retrieval import Reranked
    from ragline.domain.runs import LoggedEvent, RunHead, RunStatus
    from ragline.domain.sources import ChangePage, ItemAccess, KnownItem, SourceItem, SourceRecord, SyncStep
    from ragline.domain.tenancy import ApiKeyRecord, Namespace, Tenant
    from ragline.domain.webhooks import Subscription
    from ragline.errors import RaglineError


@runtime_checkable
class VectorStore(Protocol):
    """Chunks of one tenant's namespace; the scope is bound at construction, never per call.

    Contract (versions: every ingest or delete of a document works at its own, higher *generation*;
    a document's *fence* is the generation last published, 0 before any):
    - Readers see exactly the published generation of each document: a chunk is served — by
      ``search``, ``neighbors`` and ``count(doc)`` — iff its generation equals its document's fence.
      Never a chunk of an unpublished version, never two versions of one document at once.
    - ``upsert(chunks, generation=g)`` inserts or replaces chunks by id
      (``{document_id}#{sequence_number}``) *within generation g*, each carrying an embedding of the
      store's dimension. A version above the fence is written beside the served one and stays unseen
      until its publish; a write at the fence (0 for a document never published) is served at once; a
      write below the fence is refused with :class:`~ragline.errors.Superseded`. Returns how many
      chunks were written.
    - ``publish(doc, generation=g)`` raises the fence to ``g`` — atomically refused, returning False,
      when the fence is already above ``g`` — which makes the chunks written at ``g`` (none: a delete)
      the served version in one step, then deletes the document's chunks below ``g`` (an older
      version, or the orphans of a worker that died before its publish). Publishing the fence's own
      generation again changes nothing served (it only sweeps). The fence outlives the chunks, so a
      slow worker holding an older version can neither resurrect a deleted document nor be served
      beside a newer version (it loses at ``upsert``, or at ``publish`` and then ``discard``s).
    - ``publish_many({doc: g, ...})`` is ``publish`` for several documents at once, each document's
      outcome its own: ``True`` published (its fence is at ``g``), ``False`` refused (its fence is
      above ``g``), or the :class:`~ragline.errors.RaglineError` that failed *that document's* publish
      (a node answering its fence write 429 or 5xx, its version not yet searchable): its fence did not
      rise, it serves what it served, and publishing ``g`` again later may succeed. One document's
      failure never fails another's publish, so the caller settles each document from what is
      served. It raises only for a failure of the whole call after which no fence rose; a store that
      cannot tell whether a fence rose (a request whose answer was lost) reads it back and reports the
      document from what it holds. Only when it cannot read it either (the store unreachable) is an
      outcome unknown: that document is reported failed — the whole call raises when no outcome is
      known — and publishing the same generation again (idempotent) settles it. One
      refresh and one fence write for the lot, so an ingest batch pays for visibility once, not once
      per document. Each document's new version still appears whole, at its fence's raise; documents
      appear together or one by one, unordered. A sweep of older chunks that fails after the fence
      rose does not fail the publish (they are unseen below the fence; the next publish sweeps them).
      ``publish`` raises the error ``publish_many`` would report for the document.
    - ``discard(doc, generation=g)`` deletes the document's chunks at exactly ``g``.
    - ``vectors(doc)`` maps each stored chunk text of the document — of any generation, unpublished
      ones included — to its embedding (for reuse), as float32 arrays.
    - ``delete_document(doc, older_than=g)`` deletes the document's chunks whose generation is below
      ``g`` (all of them when ``older_than`` is None); it does not move the fence.
    - ``search`` honours the query's mode; every hit carries a :class:`ScoreBreakdown` for the legs
      that produced it; no hit ever belongs to another tenant or namespace.
    - ``neighbors`` returns the document's chunks with sequence numbers in
      ``[seq - before, seq + after]``, ordered by sequence number.
    - Writes are visible to the next ``search`` from the same process (read-your-writes).
    - A store bound to a :class:`~ragline.domain.filters.ReadView` (``provider.scoped(scope, view)``)
      serves only the chunks the view admits (:meth:`ReadView.admits` on the chunk's ``attributes``
      and ``readers``), and a query's ``filters.where`` narrows further: ``search``, ``neighbors``
      and ``count(doc)`` never return, count or skip a place for any other chunk. The filter runs
      inside the search, never after it: a search returns ``min(k, chunks admitted and matched)``
      hits (k = 1 among 10,000 chunks finds the one). Writes are not affected by the view.
    """

    scope: TenantScope

    def capabilities(self) -> StoreCapabilities: ...

    def upsert(self, chunks: Sequence[Chunk], *, generation: int = 0) -> int: ...

    def publish(self, document_id: str, *, generation: int) -> bool: ...

    def publish_many(self, generations: Mapping[str, int]) -> dict[str, bool | RaglineError]: ...

    def discard(self, document_id: str, *, generation: int) -> int: ...

    def vectors(self, document_id: str) -> dict[str, NDArray[np.float32]]: ...

    def delete_document(self, document_id: str, *, older_than: int | None = None) -> int:
        """Delete the document's chunks (only those below generation ``older_than`` if given)."""
        ...

    def search(self, query: SearchQuery) -> list[SearchHit]: ...

    def neighbors(
        self, document_id: str, sequence_number: int, *, before: int = 5, after: int = 5
    ) -> list[Chunk]: ...

    def count(self, document_id: str | None = None) -> int:
        """The chunks one document serves; without a document, every chunk stored in the scope
        (unpublished versions included: a storage figure, not what readers see)."""
        ...


class VectorStoreProvider(Protocol):
    """Builds scope-bound stores over one physical store (a SQLite file, an OpenSearch index)."""

    def scoped(self, scope: TenantScope, view: ReadView | None = None) -> VectorStore:
        """The scope's store, serving only what ``view`` admits (None: every chunk)."""
        ...

    def purge_tenant(self, tenant_id: str) -> int:
        """Delete everything the tenant holds in the store, in every namespace it ever had — chunks
        *and* fences; returns how many chunks went. Idempotent (a tenant's deletion)."""
        ...

    def close(self) -> None: ...


class StepQueue(Protocol):
    """Runs a reindex's or a source sync's steps later, one at a time per rebuild or sync (each step
    queues its successor): the ingestion queue on AWS, a background thread in a local server, the
    CLI's own loop."""

    def submit(self, step: ReindexStep | SyncStep, *, delay_seconds: float = 0.0) -> None:
        """Queue ``step`` to run after ``delay_seconds`` (at least; SQS caps a delay at 900 s)."""
        ...


class Embedder(Protocol):
    """Turns text into unit-length float32 vectors of a fixed ``dimension``.

    ``model_id`` names the model *and* its settings (truncation, pooling), so a namespace can refuse
    vectors from a different embedding space.
    """

    model_id: str
    dimension: int

    def embed_query(self, text: str) -> NDArray[np.float32]: ...

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Shape ``(len(texts), dimension)``; batches internally."""
        ...

    def count_tokens(self, text: str) -> int: ...


class TextRecognizer(Protocol):
    """Reads the printed text off one page image (OCR): the offline recogniser, or Amazon Textract.

    ``recognize`` takes one encoded image (PNG or JPEG bytes, already checked against the parse limits
    by the caller) and returns the lines it found, each with its box in that image's pixels, in any
    order (:func:`ragline.documents.page_text.page_text` lays them out); an image without text gives
    ``[]``. It raises only Ragline errors: :class:`~ragline.errors.UnreadableDocument` for an image it
    cannot decode, :class:`~ragline.errors.DocumentTooLarge` for one over the engine's own limits, and
    a transient failure as :class:`~ragline.errors.Throttled` or
    :class:`~ragline.errors.DependencyUnavailable` (the caller's queue retries it). Safe to call from
    several threads. ``name`` names the engine (logs, benchmarks).

    ``reads_files``: ``False`` — ``recognize`` is sent a PNG the parser decoded and bounded (images
    through Pillow, PDF pages rendered by PDFium); ``True`` — it is sent the page as a file holds it (a
    PNG, JPEG or TIFF image as uploaded, or a one-page PDF cut by pypdf) and decodes and bounds it
    itself, so the parser needs neither Pillow nor PDFium.
    """

    name: str
    reads_files: bool

    def recognize(self, image: bytes) -> list[TextLine]: ...


class Tokenizer(Protocol):
    """Counts text in model tokens (the chunker's unit of size); one call per document."""

    def count_many(self, texts: Sequence[str]) -> list[int]: ...


class Reranker(Protocol):
    """Reorders hits by relevance to the query.

    Contract: returns at most ``top_n`` of the given hits (no duplicates, nothing new), best first,
    each with ``breakdown.rerank_score`` set and never increasing down the list, the rest of each hit
    unchanged; plus what the call cost (``reranks``, LLM tokens). A reranker that cannot rank raises
    ``RerankFailed`` (carrying the tokens it spent) or a dependency error; the caller falls back.
    """

    name: str

    def rerank(self, query: str, hits: Sequence[SearchHit], top_n: int) -> Reranked: ...


class ChatModel(Protocol):
    """A tool-calling chat model that streams.

    Contract: ``stream`` yields zero or more :class:`TextDelta`, then at most one
    :class:`ToolCallsReady` (arguments fully assembled), then one :class:`TokenUsage`, then one
    :class:`TurnEnd`. Vendor errors surface as Ragline errors.
    """

    name: str

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]: ...


class GroundingScorer(Protocol):
    """Checks each cited sentence of an answer against the chunks it cites.

    Contract: ``check(claims)`` returns :class:`~ragline.domain.grounding.Checked` with exactly one
    verdict per claim, in order: ``supported`` (the passages entail the sentence), ``contradicted``
    (they say otherwise) or ``not_enough_info``, a support score in [0, 1], and the passages' sentences
    (``chunk_id`` + index into ``Passage.sentences``) that decided, where the scorer can tell. It
    checks only what it is given (the caller has already applied the limits) and spends no tokens on an
    empty list. Whatever it spent (model tokens) is in ``Checked.usage``. Any failure raises
    :class:`~ragline.errors.GroundingFailed` (carrying what it spent); the caller degrades to
    "grounding unavailable" and never fails the answer. No I/O at construction.
    """

    name: str

    def check(self, claims: Sequence[CitedClaim]) -> Checked: ...


class AnswerJudge(Protocol):
    """Grades an answer against a reference answer (answer evaluation's correctness and completeness).

    Contract: ``judge(question, reference, answer)`` returns a
    :class:`~ragline.domain.evaluations.JudgeVerdict` with correctness and completeness each in
    [0, 1] — or ``None`` when it cannot tell (a reply it cannot read) — a short reason, and what it spent
    (model tokens; nothing for an offline judge). An answer with no text is incorrect and incomplete
    (0, 0) and spends nothing. Citation markers in the answer are not graded. Model failures raise
    Ragline errors. No I/O at construction.
    """

    name: str

    def judge(self, question: str, reference: str, answer: str) -> JudgeVerdict: ...


class UsageLedger(Protocol):
    """Counts each run's usage exactly once, per tenant and period (``YYYY-MM``, UTC), and makes a run
    id (a client's ``Idempotency-Key``) name one request whose work is done once.

    Contract:
    - ``reserve(tenant, run, limit, fingerprint)`` is one atomic step before any work. A new run id:
      refused with ``QuotaExceeded`` (details: limit, used, period; nothing written) when the live
      counter already holds ``limit`` charged runs (``None``: unlimited), else a marker ``in_progress``
      with the fingerprint is written and ``None`` returned — do the work, then ``commit``. A known
      run id (decided by :func:`~ragline.domain.billing.check_replay`, before the quota): another
      fingerprint raises ``IdempotencyKeyReused``; a completed run returns its ``CompletedRun`` (first
      charge and recorded result; nothing is charged, no work may be done); a run still in progress
      raises ``RunInProgress``, unless its marker is older than ``STALE_AFTER`` — then it is taken over
      (``None``). Of concurrent reservations of one run id exactly one gets ``None``. Reserving
      charges nothing: runs reserved together may all pass one remaining slot (overshoot is bounded
      by concurrency). Whatever a run id's length, its marker can be stored (adapters bound the key).
    - ``commit(tenant, run, usage, limit, result, fingerprint)`` charges the run once: the first commit of a
      ``run_id`` adds ``usage`` and one run to the period counter and completes the marker with
      ``result`` (at most ``MAX_RESULT_BYTES``) in one atomic step; every later commit of the same
      ``run_id`` (sequential or concurrent, from any process) is a no-op that returns the first
      charge. A commit is never lost for being over quota (the work was done): it is recorded anyway.
      A commit without a reservation is allowed (it charges as a new run).
    - ``complete_uncharged(tenant, run, result, fingerprint)`` ends a run that did no work (it spent
      nothing: refused before its first model call or search) without charging it: in one atomic step
      the marker is completed with ``result`` and a zero charge, and the counter is untouched (no run
      counted, no quota slot used). It is an ending like ``commit``: of the two, the first for a
      ``run_id`` wins, and every later ``commit`` or ``complete_uncharged`` of it (sequential or
      concurrent) is a no-op returning the first charge. Reserving it again replays ``result``
      (zero usage); when it recorded no result the very same request (same fingerprint) takes the
      run id over instead (``None``: nothing was done, so doing it now is not doing it twice).
    - ``period_usage`` / ``period_runs`` read the counter.
    - ``record_ingest(tenant, entry, usage)`` adds one document version's indexing usage to the
      period's ingestion sums (``period_ingestion``), exactly once per ``entry_id``: the first record
      of an entry adds it and returns True, in one atomic step with a marker of the entry; every later
      record of it (sequential or concurrent, from any process, with any numbers) adds nothing and
      returns False. It is not a run: ``period_runs``, ``period_usage`` and the run quota are untouched,
      and it is never refused. Whatever an entry id's length, its marker can be stored.
    """

    def reserve(
        self, tenant_id: str, run_id: str, limit: int | None = None, fingerprint: str = ""
    ) -> CompletedRun | None: ...

    def commit(
        self,
        tenant_id: str,
        run_id: str,
        usage: RunUsage,
        limit: int | None = None,
        result: str | None = None,
        fingerprint: str = "",
    ) -> RunUsage: ...

    def complete_uncharged(
        self, tenant_id: str, run_id: str, result: str | None = None, fingerprint: str = ""
    ) -> RunUsage: ...

    def period_usage(self, tenant_id: str, period: str) -> RunUsage: ...

    def period_runs(self, tenant_id: str, period: str) -> int: ...

    def record_ingest(self, tenant_id: str, entry_id: str, usage: IngestUsage) -> bool: ...

    def period_ingestion(self, tenant_id: str, period: str) -> IngestUsage: ...

    def purge_tenant(self, tenant_id: str) -> int:
        """Drop what quotes or names the tenant's content — its runs' recorded results and its
        ingestion entries (keyed by document) — keeping every charge and period counter (the
        operator's billing record); returns how many items changed. Idempotent."""
        ...


class RateLimiter(Protocol):
    """Token buckets and run slots shared by every process of a deployment (fair sharing, issue 30).

    Contract (``now`` is the limiter's own clock, microseconds):
    - ``take(bucket, rate)`` takes one token from ``bucket`` in one atomic step and returns 0, or
      takes nothing and returns the microseconds until one is due (> 0). Its answers are those of
      :func:`~ragline.domain.limits.admit` applied to the requests in *some* serial order, whatever
      the interleaving of processes: of concurrent takes from a bucket holding ``n`` tokens, exactly
      ``n`` are admitted. A bucket not used for long may be forgotten (it is then full).
    - ``lease(bucket, slots, seconds)`` holds one of ``slots`` run slots of ``bucket`` and returns a
      lease id, or returns None (nothing held) when ``slots`` live leases hold them all. A lease
      lives until ``release`` or for ``seconds`` (so a crashed holder frees its slot); of concurrent
      leases never more than ``slots`` are live at once.
    - ``release(bucket, lease_id)`` frees that lease's slot; idempotent, and a no-op on a slot that
      expired and was taken by another lease.
    - ``count_refusal(tenant, period)`` adds one to the tenant's refused requests of ``period``
      (``YYYY-MM``); ``refusals`` reads it (0 when none).
    - ``purge_tenant(tenant)`` forgets every bucket, lease and count of the tenant; idempotent.
    - ``clock()`` is the limiter's time in microseconds, the time its buckets are kept in.
    """

    clock: Callable[[], int]

    def take(self, bucket: Bucket, rate: Rate) -> int: ...

    def lease(self, bucket: Bucket, slots: int, seconds: float) -> str | None: ...

    def release(self, bucket: Bucket, lease_id: str) -> None: ...

    def count_refusal(self, tenant_id: str, period: str) -> None: ...

    def refusals(self, tenant_id: str, period: str) -> int: ...

    def purge_tenant(self, tenant_id: str) -> int: ...


class TenantRegistry(Protocol):
    """Tenants, their namespaces and their API keys.

    Contract: ids are scoped by tenant everywhere — no method ever returns or changes another
    tenant's namespace or key. API keys are stored and looked up only by their SHA-256 hash.
    """

    def create_tenant(self, tenant: Tenant) -> Tenant:
        """Raises ``Conflict`` when it exists."""
        ...

    def get_tenant(self, tenant_id: str) -> Tenant:
        """Raises ``NotFound``."""
        ...

    def update_tenant(self, tenant: Tenant) -> Tenant:
        """Replace a stored tenant (its status, quota, name); raises ``NotFound`` when it does not exist."""
        ...

    def create_namespace(self, namespace: Namespace) -> Namespace:
        """Raises ``Conflict`` when it exists."""
        ...

    def get_namespace(self, tenant_id: str, namespace_id: str) -> Namespace:
        """Raises ``NamespaceNotFound``."""
        ...

    def list_namespaces(self, tenant_id: str) -> list[Namespace]: ...

    def update_namespace(self, namespace: Namespace) -> Namespace:
        """Raises ``NamespaceNotFound``. The stored ``settings.metadata_schema`` is kept whatever
        ``namespace`` carries (a read-modify-write of the settings never drops a key that a
        concurrent :meth:`extend_metadata_schema` added); the returned namespace carries it."""
        ...

    def extend_metadata_schema(
        self, tenant_id: str, namespace_id: str, types: Mapping[str, AttributeType]
    ) -> dict[str, AttributeType]:
        """Add ``types`` to the namespace's metadata schema and return the whole schema, atomically:
        every key is added, or none. A key already typed otherwise raises
        :class:`~ragline.errors.MetadataTypeClash` (two writers racing to type one key differently:
        exactly one wins), a schema past :data:`~ragline.domain.attributes.MAX_SCHEMA_KEYS` keys
        ``InvalidRequest``, a missing namespace ``NamespaceNotFound``. Keys already of their type are
        no-ops (idempotent)."""
        ...

    def swap_namespace(self, namespace: Namespace, *, revision: int) -> Namespace | None:
        """Replace the stored namespace iff its ``revision`` is still ``revision`` (a record stored
        without one counts as 0), storing it at ``revision + 1``; ``None`` when another write came
        first (nothing changed). ``NamespaceNotFound`` when it does not exist. The one conditional
        write a reindex's start, progress and switch go through."""
        ...

    def clear_default_namespace(self, tenant_id: str, namespace_id: str) -> None:
        """Set the namespace's ``default`` to false and change nothing else of it, in one write (not
        a read-modify-write: a concurrent change of its settings is kept). A missing namespace: no-op."""
        ...

    def delete_namespace(self, tenant_id: str, namespace_id: str) -> None:
        """Raises ``NamespaceNotFound``."""
        ...

    def purge_tenant(self, tenant_id: str) -> None:
        """Delete every namespace and API key (record and reference) of the tenant; the tenant's own
        record stays (as the ``deleted`` tombstone). Idempotent."""
        ...

    def put_api_key(self, key: ApiKeyRecord) -> ApiKeyRecord:
        """Store a new key record (``Conflict`` if the hash or the key id exists)."""
        ...

    def find_api_key(self, key_hash: str) -> ApiKeyRecord | None:
        """The key with this hash, revoked ones too (the caller checks ``active``)."""
        ...

    def list_api_keys(self, tenant_id: str) -> list[ApiKeyRecord]: ...

    def revoke_api_key(self, tenant_id: str, key_id: str) -> ApiKeyRecord:
        """Mark revoked; ``NotFound`` unless the key belongs to ``tenant_id``. Idempotent."""
        ...

    def touch_api_key(self, key_hash: str) -> None:
        """Best-effort ``last_used_at`` update (an adapter may throttle it)."""
        ...

    def put_identity_provider(self, tenant_id: str, provider: IdentityProvider) -> None:
        """Set the tenant's one identity provider (replacing its previous one). An issuer belongs to
        at most one tenant: another tenant's issuer is a ``Conflict`` and nothing changes."""
        ...

    def get_identity_provider(self, tenant_id: str) -> IdentityProvider | None: ...

    def delete_identity_provider(self, tenant_id: str) -> bool:
        """Remove it (and its issuer's index entry); False when the tenant had none. ``purge_tenant``
        removes it too."""
        ...

    def find_identity_provider(self, issuer: str) -> tuple[str, IdentityProvider] | None:
        """The tenant whose provider has exactly this issuer, and that provider."""
        ...


class ApiKeyLookup(Protocol):
    """The authorizer's questions about a key, answered from the tenant registry's own store
    without its models (the authorizer's cold start imports no pydantic).

    Contract: it reads what the backend's :class:`TenantRegistry` wrote. ``find_grant`` returns the
    grant of the key stored under ``key_hash`` — a revoked one too, marked ``revoked`` — and None for
    no such key or for a ``key_hash`` that is not a SHA-256 hex digest (without a read);
    ``tenant_status`` is the tenant's status, None when it does not exist; ``touch_api_key`` is
    :meth:`TenantRegistry.touch_api_key`; ``find_identity_provider`` is
    :meth:`TenantRegistry.find_identity_provider`.
    """

    def find_grant(self, key_hash: str) -> KeyGrant | None: ...

    def tenant_status(self, tenant_id: str) -> str | None: ...

    def touch_api_key(self, key_hash: str) -> None: ...

    def find_identity_provider(self, issuer: str) -> tuple[str, IdentityProvider] | None: ...


class ObjectStore(Protocol):
    """Documents as bytes under keys ``<tenant>/<namespace>/<path>``.

    Contract: a key is stored as exactly itself or refused with ``InvalidRequest`` — never rewritten
    into another key (so one tenant's key can never alias another's object).
    """

    def get(self, key: str, *, version_id: str = "", limit: int | None = None) -> bytes:
        """The exact bytes stored; ``NotFound`` when there is no object under ``key``.

        ``version_id``: that version of the object (``NotFound`` when it is gone); a store that keeps
        no versions serves its one object. ``limit``: an object longer than ``limit`` bytes is
        refused with ``DocumentTooLarge`` (naming the key) from its stored length, before its body is
        read, and no more than ``limit`` + 1 bytes are ever read (a body longer than its declared
        length is refused the same way)."""
        ...

    def put(self, key: str, data: bytes) -> None:
        """Store or replace the object."""
        ...

    def delete(self, key: str) -> None:
        """Remove the object; deleting a missing key is a no-op."""
        ...

    def purge(self, prefix: str) -> int:
        """Remove every object under the *folder* ``prefix`` — with every stored version, where the
        store keeps versions — returning how many went; an empty prefix is refused. Idempotent."""
        ...

    def list(self, prefix: str) -> list[str]:
        """Every key under the *folder* ``prefix`` (``t/ns`` and ``t/ns/`` alike, never ``t/ns2/…``),
        sorted; ``""`` lists everything."""
        ...


class DocumentRegistry(Protocol):
    """Document records and their ordering; every transition is a conditional write.

    Contract (the rule is :func:`ragline.domain.documents.claim_decision`):

    - ``claim`` takes an S3 event's ``sequencer`` (normalised on the way in, see
      :func:`~ragline.domain.documents.normalise_sequencer`) or ``None`` for a *local* write (API
      text, the CLI). One ordering covers both: a local write is granted always (it is made now,
      after everything stored); an S3 event is compared with the greatest S3 sequencer stored, never
      with a local write, and is granted when no record exists or when it is greater. The same S3
      sequencer is ``stale`` when a local write claimed after it, ``duplicate`` once ``ready`` or
      ``deleted``, ``busy`` while ``processing``/``deleting`` under a live lease (a concurrent copy
      of the event: it must not start the work), and granted otherwise (``queued``, ``failed``, or
      a lease that ran out: its worker died). An older sequencer is ``stale``.
    - A granted claim stores the S3 sequencer (a local write keeps the stored one) and its origin,
      sets status ``processing`` (``deleting`` when ``deleting=True``), increments ``generation``
      and ``attempts`` (attempts restart at 1 for any other event), clears the error, records
      source/version/etag/size and, when ``lease_seconds`` > 0, ``lease_until`` = the registry's
      clock + that long (0: no lease). Refused claims return the stored record unchanged.
    - ``sidecar`` (with ``sequencer=None``): the claim of an event of the document's metadata
      sidecar, with that sidecar key's sequencer. It is ordered like a local write against S3 events
      of the document, and like an S3 event against the sidecar's own events
      (``sidecar_sequencer``): a copy of a sidecar event already applied is ``duplicate``, an older
      one ``stale``, a copy under a live lease ``busy``; on a ``deleted`` document it is ``stale``.
    - A granted claim on a ``deleted`` document records the change its deletion was announced
      under in ``deleted_change`` (kept while claims after it are unsettled), so a claim that finds
      S3 still serving nothing settles as that deletion, not as a second one.
      Each granted claim gets its own generation, also under concurrent claims, and of concurrent
      copies of one event under a lease exactly one is granted.
    - ``complete`` and ``fail`` write only while the stored generation is still the record's; they
      return False when a newer claim took over (and then change nothing).
    - ``get`` returns None when absent; ``list`` returns a namespace's records ordered by id.
      Records stored by earlier versions read through
      :func:`~ragline.domain.documents.upgrade_stored` and order as above.
    """

    def claim(
        self,
        tenant_id: str,
        namespace_id: str,
        document_id: str,
        sequencer: str | None,
        *,
        deleting: bool = False,
        source: str = "",
        version_id: str = "",
        etag: str = "",
        size: int = 0,
        lease_seconds: float = 0.0,
        sidecar: str | None = None,
    ) -> Claim: ...

    def complete(self, record: DocumentRecord) -> bool:
        """Store ``record``'s final state (ready/deleted, counts, hash) if its generation still holds."""
        ...

    def fail(self, record: DocumentRecord, code: str, message: str) -> bool: ...

    def get(self, tenant_id: str, namespace_id: str, document_id: str) -> DocumentRecord | None: ...

    def list(self, tenant_id: str, namespace_id: str) -> list[DocumentRecord]: ...

    def purge_tenant(self, tenant_id: str) -> int:
        """Delete every record of the tenant, in every namespace it ever had; returns how many.
        Idempotent (a tenant's deletion)."""
        ...


class EventPublisher(Protocol):
    """Where document and usage events go (an EventBridge bus; the embedded outbox).

    ``publish`` returns once every event is accepted (durably: the bus or the outbox holds it), else
    raises a Ragline error (retryable ones as ``DependencyUnavailable``/``Throttled``) — the caller's
    work is then retried, and re-announces the same change with the same event id. Publishing an id
    again is allowed and harmless: consumers dedupe on it."""

    def publish(self, events: Sequence[Event]) -> None: ...


class OnceMarks(Protocol):
    """Conditional "first writer wins" marks: a quota threshold crossed in a period, a webhook
    delivered. ``mark`` writes ``key`` unless it exists and says whether this call wrote it — exactly
    one of any number of concurrent callers gets True. Marks may expire after ``ttl_seconds``."""

    def mark(self, key: str, *, ttl_seconds: int) -> bool: ...

    def has(self, key: str) -> bool: ...

    def forget(self, key: str) -> None:
        """Remove ``key`` (a mark whose follow-up failed, so the next caller tries again)."""
        ...


class WebhookStore(Protocol):
    """A tenant's webhook subscriptions. Every read and delete is scoped by tenant: another tenant's
    subscription id is ``NotFound``."""

    def put(self, subscription: Subscription) -> Subscription:
        """An unconditional write (seeding, tests); a tenant's creations go through :meth:`add`."""
        ...

    def add(self, subscription: Subscription, *, limit: int) -> bool:
        """Saves a new subscription unless its tenant holds ``limit`` already (``False``), atomically:
        of any number of concurrent adds, no more than ``limit`` subscriptions are ever held."""
        ...

    def replace(self, subscription: Subscription) -> Subscription:
        """Writes over the tenant's subscription of that id; ``NotFound`` when it is gone (a
        rotation whose read raced a delete must not bring the webhook back)."""
        ...

    def get(self, tenant_id: str, subscription_id: str) -> Subscription:
        """``NotFound`` when the tenant has no such subscription."""
        ...

    def list(self, tenant_id: str) -> list[Subscription]:
        """Oldest first."""
        ...

    def delete(self, tenant_id: str, subscription_id: str) -> Subscription:
        """The deleted subscription; ``NotFound`` when it does not exist."""
        ...


class WebhookTransport(Protocol):
    """POSTs one signed delivery, bounded in time and in what it reads back."""

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        """The receiver's HTTP status; ``DependencyUnavailable`` when unreachable or too slow."""
        ...


class KnownItems(Protocol):
    """What a sync's namespace holds of a source's items (read-only, for the connector)."""

    run: int
    """The running sync's number."""

    def get(self, item_id: str) -> KnownItem | None: ...

    def seen(self, item_id: str) -> bool:
        """Whether the running sync's listing already named ``item_id`` (a crawler's visited set)."""
        ...


class Source(Protocol):
    """A place documents live, read as items that change (see :mod:`ragline.domain.sources`).

    Contract (``tests/contract/source_contract.py``):

    - ``changes(None, …)`` starts a full listing; every later call passes the previous page's
      ``cursor``. Calls return pages until one is ``done``; across them every readable item the
      source holds is named by an ``upsert`` (or a ``keep`` when it could not be read this time),
      each item once, and nothing else is named but ``delete``s, ``skip``s and ``failed`` items.
      The ``done`` page's ``full`` decides whether the sync deletes what the listing did not name: a
      full listing that could not see everything (a page, a sitemap or a ``robots.txt`` it could not
      read) ends with ``full`` False, and nothing is deleted for it.
    - A listing resumed from any page's cursor names what the rest of the listing would have named
      (a cursor is the whole state: a sync cut off after a page continues from it). Calling with the
      same cursor twice is allowed (a page applied twice changes nothing).
    - The ``done`` page's cursor starts the next sync: it names what changed since (``upsert`` for
      new, changed or re-permissioned items, ``delete`` for deleted or out-of-scope ones), or a full
      listing again (``""``). A cursor the source no longer honours raises
      :class:`~ragline.errors.CursorExpired`: the sync starts over with a full listing.
    - A call returns by ``until`` (``time.monotonic()``) plus one request's timeout; the source's
      ``429``/``Retry-After`` and ``5xx`` are retried within that, and past it the page says
      ``retry_after`` and ends early (its cursor resumes where it stopped).
    - ``fetch`` returns an item's bytes at (at least) the listed version; an item gone since raises
      :class:`~ragline.errors.NotFound`, one unreadable item :class:`~ragline.errors.DependencyFailed`
      (it fails alone).
    - ``permissions`` returns who may read the item now (only called for items listed with
      ``access`` ``None``).
    """

    def changes(self, cursor: str | None, known: KnownItems, *, until: float) -> ChangePage: ...

    def fetch(self, item: SourceItem) -> bytes: ...

    def permissions(self, item: SourceItem) -> ItemAccess: ...


class SourceSecrets(Protocol):
    """A data source's credentials (an API token, an app's client secret): written by the API, read
    by the sync only, never returned by any route nor logged.

    Contract (``tests/contract/test_source_secrets.py``): ``put`` stores ``values`` whole for the
    source (replacing what was there); ``get`` returns them, or raises
    :class:`~ragline.errors.NotFound` when none are stored; ``delete`` removes them (a no-op when
    none are), and ``purge_tenant`` every source's of the tenant.
    """

    def put(self, tenant_id: str, namespace_id: str, source_id: str, values: Mapping[str, str]) -> None: ...

    def get(self, tenant_id: str, namespace_id: str, source_id: str) -> dict[str, str]: ...

    def delete(self, tenant_id: str, namespace_id: str, source_id: str) -> None: ...

    def purge_tenant(self, tenant_id: str) -> int: ...


class SyncScheduler(Protocol):
    """When each data source syncs by itself: EventBridge Scheduler on AWS (a schedule per source
    whose target puts a sync's first step on the ingestion queue), a table the local server's loop
    reads in process.

    Contract (``tests/contract/test_sync_scheduler.py``): ``put`` makes the source sync every
    ``every_minutes`` (creating or replacing its schedule); ``delete`` removes it (a no-op when there
    is none); ``purge_tenant`` removes every schedule of the tenant.
    """

    def put(self, tenant_id: str, namespace_id: str, source_id: str, every_minutes: int) -> None: ...

    def delete(self, tenant_id: str, namespace_id: str, source_id: str) -> None: ...

    def purge_tenant(self, tenant_id: str) -> int: ...


class SourceRegistry(Protocol):
    """Data sources, their sync state and their items' inventory; every sync write is conditional.

    Contract (``tests/contract/source_registry_contract.py``):

    - ``create`` adds a source unless the namespace already has ``limit`` (False) or the id exists
      (:class:`~ragline.errors.Conflict`). ``get`` raises :class:`~ragline.errors.NotFound`; ``list``
      orders by id.
    - ``update_settings`` writes the source's name, settings, schedule and ``has_credentials`` when the
      stored ``revision`` is ``revision`` (then +1), else returns None; the sync state is untouched.
    - ``claim`` takes the source's lease for ``token`` when it is free (``lease_token`` ``""``), held
      by ``expect`` (a step handing over to its successor) or expired (``lease_until`` before
      ``now``): the record with ``lease_token``/``lease_until`` set, else None.
    - ``advance`` writes the record's sync state (cursor, run, phase, full, counts, error, times,
      lease) only while ``token`` still holds the lease; False otherwise (then nothing changed).
    - Items: ``known`` returns the stored items among ``item_ids``; ``put_items`` writes items
      whole; ``drop_items`` removes them; ``unseen`` returns up to ``limit`` items whose ``seen_run``
      is below ``run``, ordered by id; ``items`` all of a source's, ordered by id.
    - ``delete`` removes the source and its items; ``purge_tenant`` every source of the tenant.
    """

    def create(self, record: SourceRecord, *, limit: int) -> bool: ...

    def get(self, tenant_id: str, namespace_id: str, source_id: str) -> SourceRecord: ...

    def update_settings(self, record: SourceRecord, *, revision: int) -> SourceRecord | None: ...

    def claim(
        self,
        tenant_id: str,
        namespace_id: str,
        source_id: str,
        *,
        token: str,
        expect: str,
        lease_seconds: float,
        now: float,
    ) -> SourceRecord | None: ...

    def advance(self, record: SourceRecord, *, token: str) -> bool: ...

    def known(
        self, tenant_id: str, namespace_id: str, source_id: str, item_ids: Sequence[str]
    ) -> dict[str, KnownItem]: ...

    def put_items(
        self, tenant_id: str, namespace_id: str, source_id: str, items: Sequence[KnownItem]
    ) -> None: ...

    def drop_items(
        self, tenant_id: str, namespace_id: str, source_id: str, item_ids: Sequence[str]
    ) -> None: ...

    def unseen(
        self, tenant_id: str, namespace_id: str, source_id: str, *, run: int, limit: int
    ) -> list[KnownItem]: ...

    def items(self, tenant_id: str, namespace_id: str, source_id: str) -> list[KnownItem]: ...

    def delete(self, tenant_id: str, namespace_id: str, source_id: str) -> None: ...

    def purge_tenant(self, tenant_id: str) -> int: ...

    def list(self, tenant_id: str, namespace_id: str) -> list[SourceRecord]: ...


class RunLog(Protocol):
    """Each run's head and its events in order (see :mod:`ragline.domain.runs`). Every read and write
    is scoped by tenant: another tenant's run id is simply not there."""

    def start(self, head: RunHead) -> None:
        """Write ``head``, dropping any earlier log under its run id (a run that failed before doing
        any work may run again under its ``Idempotency-Key``: the ledger decides who may start)."""
        ...

    def head(self, tenant_id: str, run_id: str) -> RunHead | None: ...

    def append(self, tenant_id: str, run_id: str, events: Sequence[LoggedEvent]) -> None:
        """Record ``events`` (consecutive, after the last recorded) and move the head's ``last_seq``."""
        ...

    def events(self, tenant_id: str, run_id: str, after: int, limit: int) -> list[LoggedEvent]:
        """The recorded events with ``seq > after``, in order, at most about ``limit`` of them (whole
        stored batches: a read may return a few more)."""
        ...

    def set_status(
        self, tenant_id: str, run_id: str, status: RunStatus, *, expect: tuple[RunStatus, ...]
    ) -> bool:
        """Move the run to ``status`` if it is in one of ``expect`` (False otherwise, or no run): one of
        two workers handed the same queued run claims it."""
        ...

    def request_cancel(self, tenant_id: str, run_id: str) -> bool:
        """Ask a running or queued run to stop (False: no such run, or it has ended)."""
        ...

    def purge_tenant(self, tenant_id: str) -> int:
        """Delete every run of the tenant (heads and events); how many runs."""
        ...


class ConversationStore(Protocol):
    """Conversations the server keeps (see :mod:`ragline.domain.conversations`), scoped by tenant."""

    def get(self, tenant_id: str, conversation_id: str) -> Conversation | None: ...

    def save(self, conversation: Conversation, *, expect_version: int) -> bool:
        """Write ``conversation`` (its ``version`` one more than ``expect_version``) if the stored one
        still has ``expect_version`` (0: it must not exist yet); False when another write got there
        first (read again and retry)."""
        ...

    def list(self, tenant_id: str, owner: str | None, limit: int) -> list[Conversation]:
        """The tenant's conversations (``owner``'s only, unless None), most recently updated first."""
        ...

    def delete(self, tenant_id: str, conversation_id: str) -> bool:
        """False when there was none."""
        ...

    def purge_tenant(self, tenant_id: str) -> int: ...


@runtime_checkable
class RunQueue(Protocol):
    """Runs a background chat run without its client: a thread of this process locally, the runs
    queue (drained by the chat function) on AWS."""

    def submit(self, tenant_id: str, run_id: str, message: str) -> None:
        """Queue the run; ``message`` is what the worker needs to run it (see
        :mod:`ragline.services.background`)."""
        ...
