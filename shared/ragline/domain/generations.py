"""Generations of a namespace's storage: what a reindex builds beside the served one.

A namespace serves one *generation* of chunks (its embedding model and chunking). A reindex builds the
next generation in a storage scope of its own, while the served one keeps answering; then one
conditional write of the namespace record switches the served generation, and the old one is dropped.

Storage scopes: generation 1 is the public namespace id itself (stores written before reindexing
existed read on unchanged); generation ``n > 1`` is ``<namespace>@<n>``. ``@`` is a character no public
namespace id may hold (:func:`ragline.domain.models.check_identifier`), so a storage scope can never be
named by a caller, nor collide with another namespace; it is built with ``model_construct`` so public
ids stay strictly validated everywhere else.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from ragline.domain.models import TenantScope

GENERATION_MARK = "@"
RebuildState = Literal["building", "ready", "failed"]
ChunkingStrategy = Literal["fixed", "hierarchical", "semantic"]
"""How documents are cut (README, "Chunking strategies"): ``fixed``, greedy token-sized chunks with a
sentence window; ``hierarchical``, small chunks searched and their parent passage read;
``semantic``, chunks closed where adjacent sentences' meaning moves on."""
StepKind = Literal["build", "retire"]
STEP_MARK = "ragline-reindex"


def storage_scope(scope: TenantScope, generation: int) -> TenantScope:
    """Where ``generation`` of the public ``scope`` keeps its chunks."""
    if generation <= 1:
        return scope
    return TenantScope.model_construct(
        tenant_id=scope.tenant_id, namespace_id=f"{scope.namespace_id}{GENERATION_MARK}{generation}"
    )


def public_scope(scope: TenantScope) -> TenantScope:
    """The public namespace of a storage scope (itself for generation 1)."""
    namespace, mark, _ = scope.namespace_id.partition(GENERATION_MARK)
    if not mark:
        return scope
    return TenantScope(tenant_id=scope.tenant_id, namespace_id=namespace)


class Chunking(BaseModel):
    """How a generation cuts documents (0 or empty: the deployment's setting)."""

    chunk_tokens: int = Field(default=0, ge=0, le=8192)
    chunk_overlap_tokens: int = Field(default=0, ge=0, le=4096)
    strategy: ChunkingStrategy | Literal[""] = ""
    parent_tokens: int = Field(default=0, ge=0, le=16384)
    """``hierarchical``'s parent size (0: :data:`PARENT_SHARE` times the chunk size)."""


PARENT_SHARE = 4
"""A ``hierarchical`` parent holds this many chunks' tokens unless the namespace says otherwise."""


class Rebuild(BaseModel):
    """A generation being built (or whose build failed: the served one is untouched)."""

    generation: int
    embedding_model: str
    embedding_dimension: int = 0
    chunking: Chunking = Chunking()
    state: RebuildState = "building"
    documents_total: int = 0
    documents_done: int = 0
    after: str = ""
    """The last document id rebuilt, in id order (where the next step continues)."""
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    progressed_at: datetime | None = None
    """When its last step recorded progress (a build without any for long has lost its steps)."""
    finished_at: datetime | None = None
    error: str = ""
    lease_until: datetime | None = None
    """Until when the worker running its current step may still be at work: a copy of that step
    delivered meanwhile backs off (one chain of steps, never two)."""


@dataclass(frozen=True)
class ReindexStep:
    """One unit of a rebuild's work, as queued (on AWS, a message of the ingestion queue)."""

    tenant_id: str
    namespace_id: str
    generation: int
    kind: StepKind = "build"
    model: str = ""
    """``retire``: the embedding model of the generation to drop (whose stores hold it)."""
    after: str | None = None
    """``build``: where the rebuild stood when the step was queued (its last document done): a copy
    of a step that already ran finds the rebuild past it and does nothing. ``None``: a step queued
    before steps carried it."""

    def body(self) -> str:
        return json.dumps({STEP_MARK: asdict(self)})

    @classmethod
    def parse(cls, body: str) -> ReindexStep | None:
        """The step in a queue message, ``None`` for any other message (an S3 notification)."""
        try:
            value: Any = json.loads(body)
        except ValueError:
            return None
        if not isinstance(value, dict) or not isinstance(value.get(STEP_MARK), dict):
            return None
        fields = value[STEP_MARK]
        return cls(
            tenant_id=str(fields["tenant_id"]),
            namespace_id=str(fields["namespace_id"]),
            generation=int(fields["generation"]),
            kind="retire" if fields.get("kind") == "retire" else "build",
            model=str(fields.get("model", "")),
            after=None if fields.get("after") is None else str(fields["after"]),
        )
