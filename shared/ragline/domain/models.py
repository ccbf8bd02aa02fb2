"""Domain types shared by every layer.

Tenant and namespace never appear on a :class:`Chunk`: a store is *bound* to a :class:`TenantScope`
and stamps/filters them itself, so a request or a model can never choose them.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragline import errors
from ragline.domain.filters import Filter

MAX_IDENTIFIER_LENGTH = 128
"""Longest tenant or namespace id: two of them and a document id fit OpenSearch's 512-byte ``_id``
(see :data:`ragline.domain.documents.MAX_DOCUMENT_ID_BYTES`)."""
_ID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.\-]{{0,{MAX_IDENTIFIER_LENGTH - 1}}}")


def check_identifier(value: str, what: str) -> str:
    """Tenant/namespace ids: short, URL- and key-safe (they become S3 prefixes and index filters).

    The whole value must match (``fullmatch``): ``re.match`` with ``$`` let ``"docs\n"`` through,
    since ``$`` also matches before a trailing newline.
    """
    if not _ID.fullmatch(value):
        raise ValueError(
            f"{what} must be 1-{MAX_IDENTIFIER_LENGTH} characters of A-Z a-z 0-9 _ . - and start with a"
            f" letter or digit, got {value[: MAX_IDENTIFIER_LENGTH + 8]!r}"
        )
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
    """Where the document came from: ``s3://bucket/key``, a file path, ``api:<filename>``, or an
    external id; what readers are shown of it is :func:`~ragline.domain.documents.shown_source`'s."""
    page: int | None = None
    heading_path: tuple[str, ...] = ()
    wider_text: str = ""
    """The sentence window around the chunk, for the model's context, not for matching."""
    extra: dict[str, str] = Field(default_factory=dict)
    attributes: dict[str, str | int | float | bool | list[str]] = Field(default_factory=dict)
    """The document's metadata (:mod:`ragline.domain.attributes`): what filters test, shown on hits."""
    readers: tuple[str, ...] = ()
    """The document's reader terms (:mod:`ragline.domain.access`); ``()``: every user of the namespace.
    Never shown to a reader."""


MAX_SEQUENCE_NUMBER = 2**31 - 1
"""The largest chunk sequence number: OpenSearch maps it as ``integer`` (SQLite would take up to 2^63)."""


class Chunk(BaseModel):
    """One retrievable piece of a document; ``id`` is ``{document_id}#{sequence_number}``."""

    model_config = ConfigDict(frozen=True)

    document_id: str
    sequence_number: int = Field(ge=0, le=MAX_SEQUENCE_NUMBER)
    text: str
    metadata: ChunkMetadata = ChunkMetadata()
    embedding: tuple[float, ...] | None = None

    @property
    def id(self) -> str:
        return chunk_id(self.document_id, self.sequence_number)


def chunk_id(document_id: str, sequence_number: int) -> str:
    return f"{document_id}#{sequence_number}"


def neighbor_window(sequence_number: int, before: int, after: int) -> tuple[int, int] | None:
    """``(before, after)`` of a ``neighbors`` read, clamped so the sequence range stays within
    ``0..MAX_SEQUENCE_NUMBER``; None when ``sequence_number`` is outside it (no chunk can be there).

    Every store bounds its input with this, so no caller (a model's ``expand``, a script reading a
    whole document with ``after=10**9``) can make SQLite overflow (``OverflowError`` past 2^63) or
    OpenSearch refuse its ``integer`` range. A negative window is the caller's bug: InvalidRequest.
    """
    if before < 0 or after < 0:
        raise errors.InvalidRequest("a neighbour window cannot be negative", before=before, after=after)
    if not 0 <= sequence_number <= MAX_SEQUENCE_NUMBER:
        return None
    return min(before, sequence_number), min(after, MAX_SEQUENCE_NUMBER - sequence_number)


class MetadataFilter(BaseModel):
    """What one query narrows by, inside the store's bound view (never tenant or namespace, never
    wider than the view): equality on document ids and filenames, and a metadata filter ``where``
    (:mod:`ragline.domain.filters`, e.g. a tool's own narrowing)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    document_ids: tuple[str, ...] = ()
    filenames: tuple[str, ...] = ()
    where: Filter | None = None


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


FusionName = Literal["rrf", "convex", "adaptive"]
"""How a hybrid search fuses its two legs (see :mod:`ragline.domain.fusion`)."""


class HybridQuery(_QueryBase):
    """Both legs, each fetching ``candidates`` hits, fused by a convex combination of top-anchored
    scores (``alpha`` weighs the semantic leg), by the same combination adapted to the query
    (``adaptive``, the default: α ± 0.1 by the query's form, each leg's top ``k // 2`` kept; see
    :mod:`ragline.domain.fusion`) or by RRF."""

    mode: Literal["hybrid"] = "hybrid"
    vector: tuple[float, ...]
    fusion: FusionName = "adaptive"
    rrf_k: int = Field(default=60, ge=1)
    alpha: float = Field(default=0.4, ge=0.0, le=1.0)
    """Semantic weight for ``convex`` fusion; ``adaptive`` moves it 0.1 toward the keyword leg for a
    query naming an identifier and 0.1 toward the semantic leg otherwise."""
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
    llm_cached_input_tokens: int = 0
    """Of ``llm_input_tokens``, those the model read from its prompt cache (billed at a discount)."""

    def add(self, other: RunUsage) -> None:
        for name in type(self).model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))


class IngestUsage(BaseModel):
    """What indexing consumed: one settled document version is ``documents=1`` with its chunk and page
    counts and the tokens it actually embedded (vectors reused from the previous version cost none).

    Summed per period, apart from the runs: ingestion is not a run and does not count against the
    run quota.
    """

    documents: int = 0
    chunks: int = 0
    pages: int = 0
    embedded_tokens: int = 0
