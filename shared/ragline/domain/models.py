"""Domain types shared by every layer.

Tenant and namespace never appear on a :class:`Chunk`: a store is *bound* to a :class:`TenantScope`
and stamps/filters them itself, so a request or a model can never choose them.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$")


def check_identifier(value: str, what: str) -> str:
    """Tenant/namespace ids: short, URL- and key-safe (they become S3 prefixes and index filters)."""
    if not _ID.match(value):
        raise ValueError(f"{what} must match {_ID.pattern!r}, got {value!r}")
    return value


class TenantScope(BaseModel):
    """Who is asking and in which namespace; bound into a store at construction."""

    model_config = ConfigDict(frozen=True)

    tenant_id: str
    namespace_id: str

    @field_validator("tenant_id")
    @classmethod
    def _tenant(cls, v: str) -> str:
        return check_identifier(v, "tenant_id")

    @field_validator("namespace_id")
    @classmethod
    def _namespace(cls, v: str) -> str:
        return check_identifier(v, "namespace_id")


class ChunkMetadata(BaseModel):
    """What a reader needs to cite and open a chunk."""

    model_config = ConfigDict(frozen=True)

    filename: str = ""
    source: str = ""
    """Where the document came from: ``s3://bucket/key``, a file path, or an external id."""
    page: int | None = None
    heading_path: tuple[str, ...] = ()
    wider_text: str = ""
    """The sentence window around the chunk, for the model's context, not for matching."""
    extra: dict[str, str] = Field(default_factory=dict)


class Chunk(BaseModel):
    """One retrievable piece of a document; ``id`` is ``{document_id}#{sequence_number}``."""

    model_config = ConfigDict(frozen=True)

    document_id: str
    sequence_number: int = Field(ge=0)
    text: str
    metadata: ChunkMetadata = ChunkMetadata()
    embedding: tuple[float, ...] | None = None

    @property
    def id(self) -> str:
        return chunk_id(self.document_id, self.sequence_number)


def chunk_id(document_id: str, sequence_number: int) -> str:
    return f"{document_id}#{sequence_number}"


class MetadataFilter(BaseModel):
    """Equality filters on chunk fields a caller may narrow by (never tenant or namespace)."""

    model_config = ConfigDict(frozen=True)

    document_ids: tuple[str, ...] = ()
    filenames: tuple[str, ...] = ()


class _QueryBase(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str = Field(min_length=1, max_length=4000)
    k: int = Field(default=10, ge=1, le=1000)
    filters: MetadataFilter = MetadataFilter()


class SemanticQuery(_QueryBase):
    """kNN over embeddings; the service fills ``vector`` with the namespace's embedder."""

    mode: Literal["semantic"] = "semantic"
    vector: tuple[float, ...]


class KeywordQuery(_QueryBase):
    """BM25 over chunk text."""

    mode: Literal["keyword"] = "keyword"


class HybridQuery(_QueryBase):
    """Both legs, each fetching ``candidates`` hits, fused by RRF (default) or a convex combination."""

    mode: Literal["hybrid"] = "hybrid"
    vector: tuple[float, ...]
    fusion: Literal["rrf", "convex"] = "rrf"
    rrf_k: int = Field(default=60, ge=1)
    alpha: float = Field(default=0.5, ge=0.0, le=1.0)
    """Semantic weight for ``convex`` fusion."""
    candidates: int = Field(default=100, ge=1, le=1000)


SearchQuery = Annotated[SemanticQuery | KeywordQuery | HybridQuery, Field(discriminator="mode")]
SearchMode = Literal["semantic", "keyword", "hybrid"]


class ScoreBreakdown(BaseModel):
    """Why a hit ranks where it does; ranks are 1-based, ``None`` when that leg did not return it."""

    semantic_rank: int | None = None
    semantic_score: float | None = None
    keyword_rank: int | None = None
    keyword_score: float | None = None
    fused_score: float | None = None
    rerank_score: float | None = None


class SearchHit(BaseModel):
    chunk: Chunk
    score: float
    breakdown: ScoreBreakdown


class StoreCapabilities(BaseModel):
    """What a store can do; agents adapt (keyword→semantic downgrade, hide ``expand``)."""

    model_config = ConfigDict(frozen=True)

    keyword: bool = True
    semantic: bool = True
    hybrid: bool = True
    neighbors: bool = True


class RunUsage(BaseModel):
    """Everything a run consumed; accumulated in one object, committed once."""

    retrievals: int = 0
    reranks: int = 0
    llm_input_tokens: int = 0
    llm_output_tokens: int = 0
    embedded_tokens: int = 0
    pages: int = 0

    def add(self, other: RunUsage) -> None:
        for name in type(self).model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))
