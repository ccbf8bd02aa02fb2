"""Settings: everything configurable, read from the environment (:mod:`ragline.environment`).

Everything configurable is a field here, read once by :func:`load_settings` and passed down by the
composition root. Nothing but :mod:`ragline.environment` touches ``os.environ``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from ragline.environment import DEFAULT_HOME, env_values

if TYPE_CHECKING:
    from ragline.domain.limits import Limits


class Settings(BaseModel):
    """Runtime settings. ``Settings(**values)`` is pure (defaults + values, for tests and tools);
    :meth:`from_env` layers ``RAGLINE_*`` variables (and :data:`ragline.environment.ENV_ALIASES`)
    under explicit values.

    A plain pydantic model rather than pydantic-settings: that library costs ~100-180 ms of import on
    every Lambda cold start, for a job this small.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: Literal["embedded", "aws"] = "embedded"
    home: Path = Path(DEFAULT_HOME)
    """Folder holding all embedded state (store, ledger, objects, caches)."""

    store: Literal["auto", "sqlite", "opensearch"] = "auto"
    """Vector store; ``auto`` = sqlite for the embedded backend, opensearch for aws."""
    opensearch_url: str = ""
    opensearch_auth: Literal["none", "basic", "sigv4"] = "none"
    opensearch_username: str = ""
    opensearch_password: SecretStr = SecretStr("")
    opensearch_service: Literal["es", "aoss"] = "es"
    """es: a managed domain (or any OpenSearch node). aoss: a Serverless vector-search collection;
    its fences live in ``documents_table`` (see ragline.adapters.opensearch.serverless)."""
    opensearch_visibility_timeout: float = Field(default=120.0, gt=0)
    """aoss: seconds a read or a publish waits for writes to become searchable before failing
    (retryable); a collection makes writes searchable only after its own refresh."""
    opensearch_index_prefix: str = "ragline-chunks"
    opensearch_refresh: Literal["on_read", "true", "wait_for", "false"] = "on_read"
    opensearch_replicas: int = Field(default=0, ge=0)
    """Replicas of each index Ragline creates: 0 on one node (a replica could not be placed), 1 from
    two nodes (the template sets it from ``OpenSearchInstanceCount``). Read when an index is created."""
    opensearch_shards: int = Field(default=1, ge=1, le=1024)
    """Primary shards of each pooled chunk index Ragline creates (the template sets the domain's node
    count: one primary per data node). Tenants are routed: a tenant's reads and writes touch one shard
    (or ``opensearch_routing_partition_size`` of them), however many the index has. Read when an index
    is created; an index keeps the count it was made with."""
    opensearch_routing_partition_size: int = Field(default=1, ge=1)
    """Shards a tenant's chunks spread over within a pooled index (1: one; more: below
    ``opensearch_shards``; each of the tenant's searches then touches that many)."""
    opensearch_shard_max_chunks: int = Field(default=0, ge=0)
    """A pooled index's primary shard holding this many chunks makes a new generation of twice the
    primaries the pool (new tenants go there), and a tenant writing to that shard is moved there
    (ragline.adapters.opensearch.growth). 0: 1M chunks, chosen by search latency (docs/benchmarks.md,
    "OpenSearch at scale"), fewer where 1M of the model's chunks would pass 40 GiB."""
    opensearch_silo_chunks: int = Field(default=0, ge=0)
    """A pooled tenant holding this many chunks is moved to an index of its own (the silo tier)
    by a growth round after it writes. 0: a twentieth of ``opensearch_shard_max_chunks`` (50,000
    chunks by default)."""
    opensearch_silo_tenants: list[str] = Field(default_factory=list)
    """Tenants placed in an index of their own whatever their size (moved by their next growth
    round); a JSON list in the environment."""

    @field_validator("opensearch_silo_tenants", mode="before")
    @classmethod
    def _json_list(cls, value: object) -> object:
        """The environment gives a string: a JSON list of tenant ids (anything else is refused)."""
        if isinstance(value, str):
            try:
                return json.loads(value)
            except ValueError as exc:
                raise ValueError('a JSON list of tenant ids, e.g. ["acme"]') from exc
        return value

    opensearch_growth_interval: float = Field(default=300.0, ge=0)
    """Seconds between a process's growth checks of one tenant, made after it writes (0: after every
    write); the pool-wide check (a new generation, retired copies deleted) at most as often."""
    opensearch_placement_ttl: float = Field(default=30.0, gt=0)
    """Seconds a process caches where a tenant's chunks live (readers check it on the way: a stale
    entry costs one more read, never a wrong one); a moved tenant's old copy is kept longer."""
    """on_read: writes do not refresh; the next read from the same process refreshes first
    (read-your-writes) and a published version is searchable from every process. true refreshes on
    every write request (several times slower ingestion); wait_for waits for the scheduled refresh;
    false refreshes only before a publish's sweep (bulk loads that refresh once at the end)."""
    opensearch_engine: Literal["lucene", "faiss"] = "lucene"
    """The vector engine of new chunk indexes: ``faiss`` on a domain (AWS deploys it: its native library
    builds a pool segment's graph once it has ``FAISS_GRAPH_THRESHOLD`` chunks, a silo's on every
    segment, with 16-bit vectors in the graph: under half the node's CPU per pooled chunk), ``lucene``
    where the node has no faiss library (the local node, assembled from Maven artifacts). Read when an
    index is created; an index keeps its engine (docs/decisions.md, "Faiss on a domain")."""
    opensearch_hybrid: Literal["msearch", "concurrent", "query"] = "msearch"
    """How OpenSearch runs a hybrid search: both legs in one ``_msearch``, fused by Ragline (default:
    better nDCG@10 and latency, docs/benchmarks.md, issue 28), or ``query``: the node's own ``hybrid``
    query through a search pipeline (needs the neural-search plugin)."""
    identity_loopback_http: bool = False
    """Let a tenant identity provider's ``jwksUri`` be plain ``http://127.0.0.1`` / ``http://[::1]``
    (tests, a local server's own IdP). Read by the services only: the deployed authorizer never
    reads it and fetches key sets over HTTPS alone."""
    webhook_loopback_http: bool = False
    """Let a webhook's URL be plain ``http://`` to a loopback host (tests, a local receiver of
    ``ragline serve``); never set on AWS, where only public ``https://`` URLs are accepted."""
    source_loopback_http: bool = False
    """Let a data source's URLs (a crawl's seeds) reach a loopback host (tests, a site served on this
    machine); never set on AWS, where a source reaches public addresses only."""
    event_bus_name: str = ""
    """aws: the EventBridge bus document and usage events are put on (empty: no events). The
    embedded backend keeps an outbox under ``home`` and delivers webhooks in process."""
    documents_bucket: str = ""
    documents_table: str = ""
    tenants_table: str = ""
    usage_table: str = ""
    aws_region: str = "us-east-1"

    chat_provider: Literal["", "openai", "bedrock", "offline"] = ""
    """Which chat model drives every agent, router and hosting search (``RAGLINE_CHAT_PROVIDER``).
    Empty: an OpenAI-compatible endpoint when one is configured (a key, a base URL or a key secret),
    else the offline extractive model; ``bedrock``: Converse with :attr:`bedrock_chat_model` through
    the function's IAM role (no key)."""
    bedrock_chat_model: str = "amazon.nova-pro-v1:0"
    """A Bedrock model id or a cross-Region inference-profile id (``us.``/``eu.``/``apac.``/``global.``
    prefix) (``RAGLINE_BEDROCK_CHAT_MODEL``)."""
    bedrock_cache_points: Literal["auto", "on", "off"] = "auto"
    """Prompt-cache points after the static prefix (system prompt, tool specs): ``auto`` where the model
    family supports them (Claude 3.5 Haiku and later, Nova), ``on``/``off`` to force."""
    openai_api_key: SecretStr = SecretStr("")
    openai_base_url: str = ""
    chat_model: str = ""
    """The model to ask (``RAGLINE_CHAT_MODEL``). Empty: ``gpt-4o-mini`` on OpenAI; behind
    ``OPENAI_BASE_URL``, the first model the server lists (``GET /models``), never a made-up label."""
    embedding_provider: Literal["local", "openai", "bedrock"] = "local"
    """The embedder is fixed per namespace (vectors must match), so it never follows the chat key.
    ``local``: the offline MiniLM (the ``offline`` extra); ``bedrock``: Titan Text Embeddings (AWS)."""
    openai_embedding_model: str = "text-embedding-3-small"
    bedrock_embedding_model: str = "amazon.titan-embed-text-v2:0"
    embedding_dimension: int = 1024
    """Vector size asked of Bedrock Titan V2 (256, 512 or 1024)."""
    llm_api_key_secret: str = ""
    """Secrets Manager ARN or name holding the LLM endpoint's API key (AWS); read once per container."""
    llm_timeout_s: float | None = Field(default=None, gt=0)
    """Longest silence while reading a response (``RAGLINE_LLM_TIMEOUT_S``); unset: 60 s for OpenAI's
    own API, 300 s for any other endpoint (a local server on a CPU may say nothing for minutes while
    it reads a long prompt). See :attr:`llm_read_timeout_s`."""
    llm_max_retries: int = 3
    max_output_tokens: int = 5000
    turn_output_tokens: int = 2000
    """Output tokens one model turn may write (``RAGLINE_TURN_OUTPUT_TOKENS``)."""
    tool_choice: Literal["required_first", "auto"] = "required_first"
    """``required_first``: an ``accurate`` run's first turn must call a tool (weak models answer from
    memory otherwise); ``auto``: the model decides every turn (``RAGLINE_TOOL_CHOICE``)."""
    max_tool_calls_per_turn: int = Field(default=8, ge=1)
    """Tool calls of one model turn that run; the rest get a tool error (a model may ask for 150)."""
    max_tool_calls_per_run: int = Field(default=24, ge=1)
    """Tool calls of one chat run that run; then tools are withdrawn and the model must answer."""
    chunks_per_search: int = Field(default=10, ge=1, le=50)
    """Chunks one search shows the model (``RAGLINE_CHUNKS_PER_SEARCH``; a namespace may override it):
    fewer for a small model's short context, more for a large one's."""
    tool_results: Literal["compact", "json"] = "compact"
    """How search results are shown to the model (``RAGLINE_TOOL_RESULTS``): ``compact`` lines
    ``[id] filename — text``, or ``json``, an array of objects (see docs/decisions.md)."""

    reranker: Literal["auto", "none", "llm", "cross-encoder", "bedrock"] = "auto"
    """``auto``: the LLM listwise reranker when a model endpoint is configured, else none;
    ``bedrock``: the Bedrock Rerank API with ``bedrock_rerank_model``."""
    bedrock_rerank_model: str = ""
    """Empty: the Region's default (``amazon.rerank-v1:0`` where Bedrock offers it, else
    ``cohere.rerank-v3-5:0``; ragline.adapters.bedrock.regions)."""
    cross_encoder_model: str = ""
    cross_encoder_tokenizer: str = ""

    grounding: Literal["auto", "none", "verifier", "overlap", "judge", "bedrock"] = "auto"
    """How the final answer's cited sentences are checked against their chunks (``RAGLINE_GROUNDING``):
    ``verifier``, the offline lexical verifier (a small linear model fitted on SciFact train, pure
    Python; the embedded and AWS default); ``overlap``, its hand-tuned predecessor; ``judge``, the
    configured chat model (one extra call per answer, metered with the run); ``bedrock``, a Bedrock
    guardrail's contextual grounding check; ``none``: off. ``auto``: ``bedrock`` when
    :attr:`grounding_guardrail_id` is set, else ``verifier``."""
    grounding_guardrail_id: str = ""
    """A Bedrock guardrail (id or ARN) with a contextual grounding policy
    (``RAGLINE_GROUNDING_GUARDRAIL_ID``)."""
    grounding_guardrail_version: str = "DRAFT"
    grounding_max_sentences: int = Field(default=12, ge=1, le=100)
    """Cited sentences checked per answer (the rest are counted as unchecked)."""
    grounding_max_chunk_chars: int = Field(default=2000, ge=100, le=100_000)
    """Characters of each cited chunk shown to the scorer (whole sentences up to this)."""

    chunking: Literal["fixed", "hierarchical", "semantic"] = "fixed"
    """How documents are cut unless a namespace says otherwise (``RAGLINE_CHUNKING``; README,
    "Chunking strategies"): ``fixed``, ``hierarchical`` or ``semantic``."""
    chunk_tokens: int = Field(default=200, ge=1, le=8192)
    chunk_overlap_tokens: int = Field(default=32, ge=0, le=4096)
    chunk_parent_tokens: int = Field(default=0, ge=0, le=16384)
    """A ``hierarchical`` parent's tokens (``RAGLINE_CHUNK_PARENT_TOKENS``; 0: four chunks')."""
    max_document_bytes: int = 50 * 1024 * 1024
    embed_batch_size: int = 8
    embedding_cache_mib: int = Field(default=256, ge=1)
    """Bound of the on-disk embedding cache (its SQLite file, MiB; least recently used vectors go
    first). Lambda's ``/tmp`` is 512 MB by default and also holds every document's scratch files."""
    """Measured fastest and lightest for the int8 MiniLM on 2 cores (see docs/benchmarks.md)."""
    rrf_k: int = 60
    hybrid_fusion: Literal["rrf", "convex", "adaptive"] = "adaptive"
    """How hybrid legs are fused (``RAGLINE_HYBRID_FUSION``): ``adaptive`` (convex, α ± 0.1 by the
    query's form, each leg's top half kept; issue 43, docs/benchmarks.md), ``convex`` or ``rrf``."""
    max_document_seconds: float = 120.0
    ocr: Literal["auto", "offline", "textract", "off"] = "auto"
    """How images and scanned PDF pages are read (``RAGLINE_OCR``). ``offline``: PP-OCRv4 in-process
    (the ``ocr`` extra); ``textract``: Amazon Textract's ``DetectDocumentText``, one page at a time, in
    ``aws_region`` (the pages are still rendered here: the ``ocr`` extra's Pillow and pypdfium2);
    ``off``: not at all (an image upload fails as unsupported, a scanned PDF as empty); ``auto``:
    offline when the ``ocr`` extra is installed, else off."""
    """Parse + chunk budget per document (the ingestion function's timeout is 300 s)."""
    hybrid_alpha: float = 0.4
    """Semantic weight of ``convex`` fusion, chosen on SciFact train (docs/benchmarks.md); ``adaptive``
    uses it minus 0.1 for a query naming an identifier and plus 0.1 for any other."""

    reindex_queue_url: str = ""
    """Where a reindex's steps go on AWS (the ingestion queue); empty: a thread of this process."""
    runs_queue_url: str = ""
    """The queue of background chat runs (AWS: the chat function drains it); empty: a thread of this
    process runs them."""
    evaluations_bucket: str = ""
    """aws: the bucket of answer evaluation jobs and their reports (``<tenant>/<job>/…``)."""
    evaluation_judge: Literal["auto", "model", "offline"] = "auto"
    """Who grades an evaluation's answers against their references: ``model``, the chat model (metered);
    ``offline``, the reference-overlap judge (no model); ``auto``: the model when one is configured."""
    evaluation_slice_s: float = Field(default=45.0, gt=0)
    """How long one worker invocation scores an evaluation's answers before it queues the rest (the
    chat function's timeout is 120 s; an answer in progress finishes)."""
    source_secrets_prefix: str = ""
    """aws: the Secrets Manager name prefix of data sources' credentials (``<stack>/sources``)."""
    sync_schedule_group: str = ""
    """aws: the EventBridge Scheduler group that holds each data source's schedule."""
    sync_scheduler_role_arn: str = ""
    """aws: the role EventBridge Scheduler assumes to send a sync's first step to the queue."""
    ingest_queue_arn: str = ""
    """aws: the ingestion queue's ARN (a schedule's target)."""
    reindex_step_documents: int = Field(default=20, ge=1, le=500)
    """Documents one reindex step rebuilds (one SQS message's work)."""
    reindex_retire_seconds: float = Field(default=900.0, ge=0)
    """How long a reindex keeps the old generation after its switch (runs bound to it end first)."""

    limit_requests_per_second: float = Field(default=0.0, ge=0)
    """A tenant's request rate where its record sets none (``RAGLINE_LIMIT_REQUESTS_PER_SECOND``);
    0: not limited. The template sets the deployed default; see "Limits and fair sharing"."""
    limit_burst: int = Field(default=0, ge=0)
    """Requests at once after a quiet spell (0: twice the rate)."""
    limit_concurrent_runs: int = Field(default=0, ge=0)
    """A tenant's chat, search and hosting-search runs in flight at once (0: not limited)."""

    @property
    def default_limits(self) -> Limits:
        """A tenant's limits where its record sets none (fair sharing)."""
        from ragline.domain.limits import Limits

        return Limits(
            requests_per_second=self.limit_requests_per_second or None,
            burst=self.limit_burst or None,
            max_concurrent_runs=self.limit_concurrent_runs or None,
        )

    @property
    def llm_read_timeout_s(self) -> float:
        """``llm_timeout_s``, or its default for the endpoint: 60 s for OpenAI, 300 s for any other."""
        if self.llm_timeout_s is not None:
            return self.llm_timeout_s
        return 300.0 if self.openai_base_url else 60.0

    @property
    def chat_backend(self) -> Literal["openai", "bedrock", "offline"]:
        """The chat model in use: :attr:`chat_provider`, or when it is empty, ``openai`` if an
        OpenAI-compatible endpoint is configured, else ``offline``."""
        if self.chat_provider:
            return self.chat_provider
        endpoint = self.openai_api_key.get_secret_value() or self.openai_base_url or self.llm_api_key_secret
        return "openai" if endpoint else "offline"

    @property
    def llm_configured(self) -> bool:
        """True when a model (Bedrock or an OpenAI-compatible endpoint) replaces the offline one."""
        return self.chat_backend != "offline"

    @property
    def resolved_grounding(self) -> Literal["none", "verifier", "overlap", "judge", "bedrock"]:
        if self.grounding != "auto":
            return self.grounding
        return "bedrock" if self.grounding_guardrail_id else "verifier"

    @property
    def resolved_store(self) -> Literal["sqlite", "opensearch"]:
        if self.store != "auto":
            return self.store
        return "opensearch" if self.backend == "aws" else "sqlite"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        return cls.model_validate({**env_values(cls.model_fields, environ), **overrides})


@lru_cache(maxsize=1)
def load_settings() -> Settings:
    """Read the environment once per process."""
    return Settings.from_env()
