"""The public API's bodies: every request and response model of every route and SSE event.

One casing rule: every JSON field Ragline defines is camelCase (``runId``, ``exitReason``,
``llmInputTokens``), in requests, responses, SSE events and error details alike. Python code uses
snake_case names; the alias generator maps them. Requests accept only the camelCase names and refuse
unknown fields, so a typo is a 400, not a silently ignored option.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ragline import errors
from ragline.domain.access import MAX_GROUPS
from ragline.domain.api_base import ApiModel as ApiModel  # noqa: PLC0414 (re-exported: bodies import it here)
from ragline.domain.attributes import AttributeType
from ragline.domain.document_metadata import MetadataInput, access_of
from ragline.domain.documents import DocumentRecord, DocumentStatus, check_document_id
from ragline.domain.filter_schema import filter_json_schema
from ragline.domain.filters import parse_filter
from ragline.domain.generations import ChunkingStrategy, Rebuild
from ragline.domain.limits import Limits
from ragline.domain.models import Chunk, FusionName, IngestUsage, RunUsage, SearchHit, SearchMode
from ragline.domain.plans import QueryPlan
from ragline.domain.retrieval import Evidence, Notice, RetrievedHit
from ragline.domain.tenancy import ApiKeyRecord, Namespace, Scope


class ApiRequest(BaseModel):
    """A request body: camelCase names only, unknown fields refused (built on first use, like
    :class:`ApiModel`)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=False,
        validate_by_alias=True,
        extra="forbid",
        defer_build=True,
    )


# -- shared views ---------------------------------------------------------------------------------


class Usage(ApiModel):
    retrievals: int = 0
    reranks: int = 0
    llm_input_tokens: int = 0
    llm_output_tokens: int = 0
    embedded_tokens: int = 0
    pages: int = 0
    llm_cached_input_tokens: int = 0
    """Of ``llmInputTokens``, those read from the model's prompt cache."""

    @classmethod
    def of(cls, usage: RunUsage) -> Usage:
        return cls.model_validate(usage.model_dump())


class Scores(ApiModel):
    semantic_rank: int | None = None
    semantic_score: float | None = None
    keyword_rank: int | None = None
    keyword_score: float | None = None
    fused_score: float | None = None
    rerank_score: float | None = None


class ChunkView(ApiModel):
    """A chunk as a client sees it: where it lives, its text, and why it ranked (when it did).

    ``id`` is the id the answer's ``<citation ids="…"/>`` markers use.
    """

    id: str
    namespace: str
    document_id: str
    sequence_number: int
    text: str
    filename: str = ""
    source: str = ""
    page: int | None = None
    heading_path: list[str] = Field(default_factory=list)
    wider_text: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """The document's metadata (its attributes; never its readers)."""
    score: float | None = None
    scores: Scores | None = None

    @classmethod
    def build(cls, id: str, namespace: str, chunk: Chunk, hit: SearchHit | None) -> ChunkView:
        m = chunk.metadata
        return cls(
            id=id,
            namespace=namespace,
            document_id=chunk.document_id,
            sequence_number=chunk.sequence_number,
            text=chunk.text,
            filename=m.filename,
            source=m.source,
            page=m.page,
            heading_path=list(m.heading_path),
            wider_text=m.wider_text,
            metadata=dict(m.attributes),
            score=hit.score if hit else None,
            scores=Scores.model_validate(hit.breakdown.model_dump()) if hit else None,
        )

    @classmethod
    def of_hit(cls, h: RetrievedHit) -> ChunkView:
        return cls.build(h.hit.chunk.id, h.scope.namespace_id, h.hit.chunk, h.hit)

    @classmethod
    def of_evidence(cls, e: Evidence) -> ChunkView:
        return cls.build(e.alias, e.scope.namespace_id, e.chunk, e.hit)


class WarningView(ApiModel):
    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def of(cls, notice: Notice) -> WarningView:
        return cls(code=notice.code, message=notice.message)


# -- chat ---------------------------------------------------------------------------------------

ChatMode = Literal["accurate", "fast"]
ChatAgent = Literal["auto", "agentic", "deep_search", "chain_of_rag"]
LEGACY_MODES = ("normal", "agentic", "deepResearch")


class RequestMessage(ApiRequest):
    """One turn of the conversation as the client sends it (tool turns are the server's own)."""

    role: Literal["system", "user", "assistant"]
    content: str = Field(default="", max_length=100_000)


FILTER_DESCRIPTION = (
    "A metadata filter (see the README's Filters): one operator object, e.g."
    ' {"andAll": [{"equals": {"key": "product", "value": "kettle"}},'
    ' {"greaterThanOrEquals": {"key": "year", "value": 2024}}]}. Operators: equals, notEquals,'
    " greaterThan, greaterThanOrEquals, lessThan, lessThanOrEquals, in, notIn, startsWith,"
    " listContains, exists, andAll, orAll, not; at most 8 levels and 64 conditions. Applied inside"
    " the store, out of band: no model can change it."
)


def _bounded_filter(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """Parsed once here so a malformed or oversized filter is a 400 naming the problem."""
    if value is not None:
        try:
            parse_filter(value)
        except errors.InvalidRequest as exc:
            raise ValueError(exc.message) from None
    return value


RequestFilter = Annotated[
    dict[str, Any] | None,
    Field(default=None, description=FILTER_DESCRIPTION),
    AfterValidator(_bounded_filter),
    WithJsonSchema({"anyOf": [filter_json_schema(), {"type": "null"}], "description": FILTER_DESCRIPTION}),
]
"""A request's ``filter``: the JSON shape of :mod:`ragline.domain.filters`, checked on arrival."""


class ChatRequest(ApiRequest):
    """``POST /v1/chat``. The tenant is never part of it: it comes from the authorizer."""

    messages: list[RequestMessage] = Field(min_length=1, max_length=200)
    namespaces: Annotated[list[str], Field(max_length=20)] | Literal["auto"] = Field(default_factory=list)
    """The namespaces to search; empty or ``"auto"``: the collection router picks among those the key
    may read."""
    mode: Literal["accurate", "fast", "normal", "agentic", "deepResearch"] = "accurate"
    agent: ChatAgent = "agentic"
    """Which agent answers; ``auto``: the RAG router picks by the agents' descriptions."""
    stream: bool = True
    filter: RequestFilter = None
    """Every search of the run (every agent's tools, ``expand``) reads only chunks it admits."""
    conversation_id: str | None = Field(
        default=None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$"
    )
    """Continue this conversation: ``messages`` are only the new turn's (the earlier turns are kept
    server side). None: the run starts a new conversation (its id is in the final event)."""
    background: bool = False
    """Answer ``202`` with the run id at once; the run goes on without a client (read its events at
    ``/v1/runs/{runId}/events``)."""

    @property
    def routes_namespaces(self) -> bool:
        return self.namespaces == "auto" or not self.namespaces

    @property
    def named_namespaces(self) -> list[str]:
        return [] if self.namespaces == "auto" else list(self.namespaces)

    @property
    def resolved_mode(self) -> ChatMode:
        """Legacy modes run as ``accurate`` (and the response says they are deprecated)."""
        return "fast" if self.mode == "fast" else "accurate"

    @property
    def legacy_mode(self) -> bool:
        return self.mode in LEGACY_MODES


# -- search ---------------------------------------------------------------------------------------


class SearchRequest(ApiRequest):
    """``POST /v1/namespaces/{ns}/search``."""

    query: str = Field(min_length=1, max_length=4000)
    mode: SearchMode = "hybrid"
    k: int = Field(default=10, ge=1, le=100)
    rerank: bool = False
    """Rerank the fused candidates (semantic and hybrid modes; keyword order is kept)."""
    fusion: FusionName | None = None
    """Hybrid fusion for this query (default: the deployment's setting)."""
    filter: RequestFilter = None


class RerankView(ApiModel):
    reranker: str
    fell_back: bool


class SearchResponse(ApiModel):
    mode: SearchMode
    hits: list[ChunkView]
    warnings: list[WarningView]
    usage: Usage
    run_id: str
    rerank: RerankView | None = None
    replayed: bool = Field(default=False, exclude_if=lambda v: not v)
    """``true`` only on a replay of a completed ``Idempotency-Key``: the recorded result, not re-run."""


# -- hosting search -------------------------------------------------------------------------------

HostingQueryType = SearchMode
"""``hybrid`` is the last user message as written (round 1); generated queries are keyword or semantic."""
HostingExit = Literal["can_answer", "token_budget", "max_evals", "no_new_queries", "error"]


class HostingSearchRequest(ApiRequest):
    """``POST /v1/hosting-search``: the best chunks for a conversation, found by a self-evaluating
    multi-query loop; no generated answer."""

    messages: list[RequestMessage] = Field(default_factory=list, max_length=200)
    query: str | None = Field(default=None, min_length=1, max_length=4000)
    """Shorthand for ``messages: [{"role": "user", "content": query}]``."""
    namespaces: list[str] = Field(default_factory=list, max_length=20)
    """Empty: the tenant's default namespace."""
    max_evals: int = Field(default=3, ge=1, le=5)
    token_budget: int = Field(default=4096, ge=1, le=1_000_000)
    """Model tokens (in and out) the query generation and evaluation may spend."""
    top_k: int = Field(default=15, ge=1, le=100)
    mode: ChatMode = "accurate"
    """``accurate`` reranks the pooled chunks; ``fast`` keeps their fused order."""
    filter: RequestFilter = None

    @model_validator(mode="after")
    def _one_conversation(self) -> HostingSearchRequest:
        if (self.query is None) == (not self.messages):
            raise ValueError("send either messages or query, not both and not neither")
        return self

    @property
    def conversation(self) -> list[RequestMessage]:
        if self.query is not None:
            return [RequestMessage(role="user", content=self.query)]
        return list(self.messages)


class HostingQueryView(ApiModel):
    round: int
    type: HostingQueryType
    query: str
    hits: int


class HostingRoundView(ApiModel):
    round: int
    new_chunks: int
    can_answer: bool | None
    """``null`` when the round ended before its evaluation (budget, error)."""
    tokens: int


class HostingSearchResponse(ApiModel):
    total_queries: int
    queries: list[HostingQueryView]
    rounds: list[HostingRoundView]
    chunks: list[ChunkView]
    exit_reason: HostingExit
    model: str
    usage: Usage
    run_id: str
    warnings: list[WarningView]
    rerank: RerankView | None = None
    plan: QueryPlan | None = None
    """How the loop searched: its rounds and every (query, namespace) search (see
    :mod:`ragline.domain.plans`); null on a replay that had to leave it out."""
    replayed: bool = Field(default=False, exclude_if=lambda v: not v)


# -- namespaces, keys, usage ---------------------------------------------------------------------


class NewNamespace(ApiRequest):
    namespace_id: str = Field(min_length=1, max_length=128)
    description: str = Field(default="", max_length=2000)
    default: bool = False


CHUNKING_DOC = (
    "How documents are cut: fixed (token-sized chunks with a sentence window), hierarchical (small"
    " chunks searched, their parent passage read), semantic (chunks closed where adjacent sentences'"
    " meaning moves on); empty: the deployment's. A change starts a reindex."
)
PARENT_DOC = "The hierarchical strategy's parent size in tokens, at least the chunk size (0: four chunks')."


class NamespacePatch(ApiRequest):
    description: str | None = Field(default=None, max_length=2000)
    default: bool | None = None
    system_prompt: str | None = Field(default=None, max_length=20000)
    chunks_per_search: int | None = Field(
        default=None, ge=0, le=50, description="Chunks one chat search shows the model; 0: the deployment's."
    )
    metadata_schema: dict[str, AttributeType] | None = Field(
        default=None,
        description="Metadata keys to declare, with their types; adds keys (a key already typed"
        " otherwise is a 409 metadata_type_clash). Declare dates: a date is never inferred.",
    )
    embedding_model: str | None = Field(default=None, min_length=1, max_length=200)
    """A different model (or chunking below) starts a reindex: the namespace serves as it is until
    the rebuild is complete."""
    chunk_tokens: int | None = Field(default=None, ge=0, le=8192)
    chunk_overlap_tokens: int | None = Field(default=None, ge=0, le=4096)
    chunking: ChunkingStrategy | Literal[""] | None = Field(default=None, description=CHUNKING_DOC)
    parent_chunk_tokens: int | None = Field(default=None, ge=0, le=16384, description=PARENT_DOC)

    def reindex_request(self) -> ReindexRequest | None:
        """The rebuild this patch asks for (``None``: it changes neither model nor chunking)."""
        fields = (
            "embedding_model",
            "chunk_tokens",
            "chunk_overlap_tokens",
            "chunking",
            "parent_chunk_tokens",
        )
        if all(getattr(self, name) is None for name in fields):
            return None
        return ReindexRequest.model_validate(self.model_dump(include=set(fields), by_alias=True))


class ReindexRequest(ApiRequest):
    """Rebuild the namespace with another embedding model and/or chunking (unnamed: kept as they are;
    0: the deployment's chunking)."""

    embedding_model: str | None = Field(default=None, min_length=1, max_length=200)
    chunk_tokens: int | None = Field(default=None, ge=0, le=8192)
    chunk_overlap_tokens: int | None = Field(default=None, ge=0, le=4096)
    chunking: ChunkingStrategy | Literal[""] | None = Field(default=None, description=CHUNKING_DOC)
    parent_chunk_tokens: int | None = Field(default=None, ge=0, le=16384, description=PARENT_DOC)


class RebuildView(ApiModel):
    """A generation being built by a reindex (or the last that failed: the served one kept serving)."""

    generation: int
    state: str
    embedding_model: str
    chunk_tokens: int
    chunk_overlap_tokens: int
    chunking: str = ""
    parent_chunk_tokens: int = 0
    documents_done: int
    documents_total: int
    started_at: str
    error: str = ""

    @classmethod
    def of(cls, rebuild: Rebuild) -> RebuildView:
        return cls(
            generation=rebuild.generation,
            state=rebuild.state,
            embedding_model=rebuild.embedding_model,
            chunk_tokens=rebuild.chunking.chunk_tokens,
            chunk_overlap_tokens=rebuild.chunking.chunk_overlap_tokens,
            chunking=rebuild.chunking.strategy,
            parent_chunk_tokens=rebuild.chunking.parent_tokens,
            documents_done=rebuild.documents_done,
            documents_total=rebuild.documents_total,
            started_at=rebuild.started_at.isoformat(),
            error=rebuild.error,
        )


class NamespaceView(ApiModel):
    namespace_id: str
    description: str
    default: bool
    embedding_model: str
    system_prompt: str
    chunks_per_search: int
    created_at: str
    metadata_schema: dict[str, str] = Field(default_factory=dict)
    """Each document metadata key's type: declared, or fixed by the first document carrying it."""
    generation: int = 1
    """The served generation (a reindex's switch moves it)."""
    chunk_tokens: int = 0
    """The served generation's chunk size (0: the deployment's)."""
    chunk_overlap_tokens: int = 0
    chunking: str = ""
    """The served generation's chunking strategy (empty: the deployment's ``RAGLINE_CHUNKING``)."""
    parent_chunk_tokens: int = 0
    """Its ``hierarchical`` parent size (0: four chunks')."""
    rebuild: RebuildView | None = None

    @classmethod
    def of(cls, ns: Namespace) -> NamespaceView:
        return cls(
            namespace_id=ns.namespace_id,
            description=ns.description,
            default=ns.default,
            embedding_model=ns.settings.embedding_model,
            system_prompt=ns.settings.system_prompt,
            chunks_per_search=ns.settings.chunks_per_search,
            created_at=ns.created_at.isoformat(),
            metadata_schema=dict(ns.settings.metadata_schema),
            generation=ns.settings.generation,
            chunk_tokens=ns.settings.chunking.chunk_tokens,
            chunk_overlap_tokens=ns.settings.chunking.chunk_overlap_tokens,
            chunking=ns.settings.chunking.strategy,
            parent_chunk_tokens=ns.settings.chunking.parent_tokens,
            rebuild=RebuildView.of(ns.settings.rebuild) if ns.settings.rebuild else None,
        )


class NamespaceList(ApiModel):
    namespaces: list[NamespaceView]


class NamespaceDeleted(ApiModel):
    namespace_id: str
    deleted: bool = True


class NewKey(ApiRequest):
    name: str = Field(default="", max_length=200)
    scopes: list[Scope] = Field(min_length=1)
    namespaces: list[str] = Field(default_factory=list)
    assert_user: bool = False
    """Requests with the key may name the end user they act for (``Ragline-User-Id``,
    ``Ragline-User-Groups``); without it, sending those headers is a 403."""
    require_user: bool = False
    """Every request with the key must name one (implies ``assertUser``): a 403 otherwise."""
    limits: Limits | None = None
    """The key's own request rate and concurrent runs, enforced as well as its tenant's."""


class KeyView(ApiModel):
    """Never the key or its hash."""

    key_id: str
    name: str
    scopes: list[str]
    namespaces: list[str]
    assert_user: bool = False
    require_user: bool = False
    limits: Limits | None = None
    created_at: str
    last_used_at: str | None
    revoked: bool

    @classmethod
    def of(cls, k: ApiKeyRecord) -> KeyView:
        return cls(
            key_id=k.key_id,
            name=k.name,
            scopes=list(k.scopes),
            namespaces=list(k.namespaces),
            assert_user=k.may_assert_user,
            require_user=k.requires_user,
            limits=k.limits,
            created_at=k.created_at.isoformat(),
            last_used_at=k.last_used_at.isoformat() if k.last_used_at else None,
            revoked=not k.active,
        )


class NewKeyView(KeyView):
    api_key: str
    """Shown once; only its hash is stored."""


class KeyList(ApiModel):
    keys: list[KeyView]


TokenScope = Literal["chat", "search"]
TOKEN_SCOPES: tuple[TokenScope, ...] = ("chat", "search")


class IdentityProviderBody(ApiRequest):
    """The tenant's identity provider: whose tokens (JWTs) act as the tenant's end users."""

    issuer: str = Field(max_length=512)
    """Exactly the tokens' ``iss``; unique across tenants (it tells whose tokens they are)."""
    audiences: list[str] = Field(min_length=1, max_length=10)
    """Accepted ``aud`` values (one must match)."""
    jwks: list[dict[str, Any]] = Field(default_factory=list, max_length=20)
    """Inline public keys (JWKs)."""
    jwks_uri: str = Field(default="", max_length=2048)
    """The provider's key set, fetched over HTTPS and cached by the authorizer."""
    user_claim: str = "sub"
    groups_claim: str = "groups"
    """E.g. ``cognito:groups``; a list of strings or one string."""
    algorithms: list[str] = Field(default_factory=lambda: ["RS256"], min_length=1)
    """Allowed signature algorithms: RS256/384/512, PS256/384/512, ES256/384, EdDSA (never HS* or none)."""
    scopes: list[TokenScope] = Field(default_factory=lambda: list(TOKEN_SCOPES), min_length=1)
    namespaces: list[str] = Field(default_factory=list)
    """Allow-list of the tokens' requests; empty: every namespace."""
    max_lifetime: int = 86_400
    """Longest accepted token lifetime (``exp`` - ``iat``), seconds (60-604800)."""
    leeway: int = 60
    """Clock skew tolerated on ``exp``/``nbf``/``iat``, seconds (0-300)."""


class IdentityProviderView(ApiModel):
    issuer: str
    audiences: list[str]
    jwks: list[dict[str, Any]]
    jwks_uri: str
    user_claim: str
    groups_claim: str
    algorithms: list[str]
    scopes: list[str]
    namespaces: list[str]
    max_lifetime: int
    leeway: int


class IdentityProviderDeleted(ApiModel):
    deleted: bool


class IngestionUsage(ApiModel):
    """Indexing in the period: settled document versions, their chunks and pages, and the tokens
    embedded for them (chunks whose vectors were reused cost none)."""

    documents: int = 0
    chunks: int = 0
    pages: int = 0
    embedded_tokens: int = 0

    @classmethod
    def of(cls, usage: IngestUsage) -> IngestionUsage:
        return cls.model_validate(usage.model_dump())


class UsageReport(ApiModel):
    period: str
    runs: int
    usage: Usage
    """What the period's runs (chat, search) used."""
    ingestion: IngestionUsage = Field(default_factory=IngestionUsage)
    """What indexing used; not runs, and not counted against the run quota."""
    limits: Limits = Field(default_factory=Limits)
    """The tenant's limits in force (its own, else the deployment's; a field absent: not limited)."""
    throttled: int = 0
    """Requests refused in the period for a rate or concurrent-run limit (429 ``rate_limited`` or
    ``too_many_runs``)."""


# -- documents ------------------------------------------------------------------------------------


class DocumentAccess(ApiRequest):
    """Who may read a document: users and groups (none named: every user of the namespace)."""

    users: list[str] = Field(default_factory=list, max_length=MAX_GROUPS)
    groups: list[str] = Field(default_factory=list, max_length=MAX_GROUPS)


METADATA_DESCRIPTION = (
    "Document metadata, {key: value}: strings, numbers, booleans, lists of strings, and dates (ISO-8601,"
    " for keys the namespace declares as dates). Each key's type is fixed per namespace by the first"
    " document carrying it (or a declaration); at most 50 keys, 16 KiB."
)


class AddText(ApiRequest):
    filename: str = Field(min_length=1, max_length=300, description="Name with extension, e.g. notes.md")
    text: str = Field(min_length=1)
    document_id: str | None = Field(
        default=None,
        description="Defaults to the id derived from the filename; A-Z a-z 0-9 _ . - / ~, at most 240.",
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description=METADATA_DESCRIPTION)
    access: DocumentAccess = Field(
        default_factory=DocumentAccess, description="Who may read it; default: everyone."
    )

    def metadata_input(self) -> MetadataInput:
        return MetadataInput(self.metadata, self.access.users, self.access.groups)

    @field_validator("document_id")
    @classmethod
    def _document_id(cls, value: str | None) -> str | None:
        return None if value is None else check_document_id(value)


class DocumentLabels(ApiRequest):
    """``PATCH /v1/namespaces/{ns}/documents/{id}``: a document's metadata and/or access, each replaced
    whole when present and kept when absent. The content is not re-read or re-embedded."""

    metadata: dict[str, Any] | None = Field(default=None, description=METADATA_DESCRIPTION)
    access: DocumentAccess | None = None

    def metadata_input(self, current: DocumentRecord) -> MetadataInput:
        users, groups = access_of(current.readers)
        if self.access is not None:
            users, groups = self.access.users, self.access.groups
        attributes = current.attributes if self.metadata is None else self.metadata
        return MetadataInput(attributes, users, groups)


class DocumentError(ApiModel):
    code: str
    message: str


class AccessView(ApiModel):
    users: list[str]
    groups: list[str]
    everyone: bool
    """No user or group named: every user of the namespace may read it."""


class DocumentView(ApiModel):
    """What a tenant sees of a record (no tenant id, no internal generation)."""

    document_id: str
    status: DocumentStatus
    source: str
    metadata: dict[str, Any]
    """The served version's metadata."""
    access: AccessView | None
    """Who may read the served version (``null`` where the caller acts for an end user)."""
    chunk_count: int
    pages: int
    content_hash: str
    version_id: str
    error: DocumentError | None
    attempts: int
    updated_at: str
    serving: Literal["this_version", "previous_version", "nothing"]
    """What readers are served for the document now: this record's version (``ready``); the version
    before it, whole (a new one is being indexed, or failed for a reason outside the file — chunk and
    page counts and hash are still that version's); or nothing (never indexed, deleted, or refused)."""

    @classmethod
    def of(cls, r: DocumentRecord) -> DocumentView:
        serving: Literal["this_version", "previous_version", "nothing"] = "nothing"
        if r.serves:
            serving = "this_version" if r.status == "ready" else "previous_version"
        users, groups = access_of(r.readers)
        return cls(
            document_id=r.document_id,
            status=r.status,
            source=r.source,
            metadata=dict(r.attributes),
            access=AccessView(users=users, groups=groups, everyone=not r.readers),
            chunk_count=r.chunk_count,
            pages=r.pages,
            content_hash=r.content_hash,
            version_id=r.version_id,
            error=DocumentError(code=r.error_code, message=r.error_message) if r.error_code else None,
            attempts=r.attempts,
            updated_at=r.updated_at.isoformat(),
            serving=serving,
        )


class DocumentList(ApiModel):
    documents: list[DocumentView]


class DocumentDeletion(ApiModel):
    """``deleting``: the S3 object was removed and its event will remove the chunks (202);
    ``deleted``: an API document's chunks are gone (200)."""

    document_id: str
    status: Literal["deleting", "deleted"]
    document: DocumentView | None = None


class DocumentUpdate(ApiModel):
    """A change of a document's metadata or access. ``updated`` (200): an API or CLI document, its
    new labels served now; ``updating`` (202): an S3 document, whose metadata lives in its sidecar
    ``<key>.metadata.json`` — the sidecar was written, and its event re-labels the document."""

    document_id: str
    status: Literal["updating", "updated"]
    document: DocumentView


# -- errors ---------------------------------------------------------------------------------------


class ErrorDetail(ApiModel):
    code: str
    """Stable, snake_case (``namespace_not_found``, ``invalid_request``, ``quota_exceeded``...)."""
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class ErrorBody(ApiModel):
    """The one error shape every route answers with, whatever the status."""

    error: ErrorDetail
