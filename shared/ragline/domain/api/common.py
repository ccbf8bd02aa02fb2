"""What every route's bodies share: the request base, the ``filter`` every search takes, and the
views of usage, chunks, scores and warnings.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)
from pydantic.alias_generators import to_camel

from ragline import errors
from ragline.domain.api_base import ApiModel
from ragline.domain.documents import shown_source
from ragline.domain.filter_schema import filter_json_schema
from ragline.domain.filters import parse_filter
from ragline.domain.models import Chunk, RunUsage, SearchHit
from ragline.domain.retrieval import Evidence, Notice, RetrievedHit


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
    """The tenant's own name for the document (:func:`~ragline.domain.documents.shown_source`): an S3
    upload's path in the namespace, never the deployment's bucket."""
    page: int | None = None
    heading_path: list[str] = Field(default_factory=list)
    wider_text: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """The document's metadata (its attributes; never its readers)."""
    score: float | None = None
    scores: Scores | None = None

    @field_validator("source")
    @classmethod
    def _shown(cls, source: str, info: ValidationInfo) -> str:
        """However the view is made — from a hit, or from a replay's result recorded before this
        rule — the stored source is shown as the tenant's own name."""
        return shown_source(source, str(info.data.get("filename", "")))

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
