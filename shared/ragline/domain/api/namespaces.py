"""Namespaces: their creation, settings patches, reindexes (a rebuild with another model or
chunking) and the views of a namespace and its rebuild.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragline.domain.api.common import ApiRequest
from ragline.domain.api_base import ApiModel
from ragline.domain.attributes import AttributeType
from ragline.domain.generations import ChunkingStrategy, Rebuild
from ragline.domain.tenancy import Namespace


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
