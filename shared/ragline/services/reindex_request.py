"""What a reindex request asks for, checked before anything is recorded: the embedding model and the
chunking of the generation to build — each what the request names, else what the namespace uses now.

A request this deployment cannot honour (a model it cannot embed with, an overlap not below the chunk
size, a parent smaller than its chunks) is refused as a bad request; nothing about the namespace
changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from ragline import errors
from ragline.documents.strategies import ChunkPlan
from ragline.domain.api import ReindexRequest
from ragline.domain.generations import Chunking
from ragline.domain.models import TenantScope
from ragline.domain.tenancy import Namespace
from ragline.services.generations import Generation, ModelCatalog, Space


@dataclass(frozen=True)
class ReindexTarget:
    """The generation a request asks to build: its model (and that model's space), its chunking."""

    model: str
    space: Space
    chunking: Chunking

    def same_as(self, ns: Namespace, catalog: ModelCatalog) -> bool:
        """Whether ``ns`` is built this way already (a rebuild would change nothing but parsing)."""
        current = ns.settings
        return (
            self.model == (current.embedding_model or catalog.default) and self.chunking == current.chunking
        )


def target_of(
    request: ReindexRequest, ns: Namespace, catalog: ModelCatalog, deployment: ChunkPlan
) -> ReindexTarget:
    """``request`` over ``ns``'s current model and chunking, checked against the deployment's
    chunking (``deployment``: what a generation setting none cuts by)."""
    current = ns.settings
    model = request.embedding_model or current.embedding_model or catalog.default
    space = catalog.space(model)
    if space is None:
        raise errors.InvalidRequest(
            f"this deployment cannot embed with {model!r}", available=catalog.models()
        )
    chunking = Chunking(
        chunk_tokens=_given(request.chunk_tokens, current.chunking.chunk_tokens),
        chunk_overlap_tokens=_given(request.chunk_overlap_tokens, current.chunking.chunk_overlap_tokens),
        strategy=_given(request.chunking, current.chunking.strategy),
        parent_tokens=_given(request.parent_chunk_tokens, current.chunking.parent_tokens),
    )
    plan = Generation(public_scope(ns), 0, space, chunking).chunk_plan(deployment)
    if plan.overlap_tokens >= plan.chunk_tokens:
        raise errors.InvalidRequest(
            "chunkOverlapTokens must be below chunkTokens", chunk_tokens=plan.chunk_tokens
        )
    if chunking.parent_tokens and chunking.parent_tokens < plan.chunk_tokens:
        raise errors.InvalidRequest(
            "parentChunkTokens must be at least chunkTokens",
            parent_chunk_tokens=chunking.parent_tokens,
            chunk_tokens=plan.chunk_tokens,
        )
    return ReindexTarget(model, space, chunking)


def public_scope(namespace: Namespace) -> TenantScope:
    """The namespace as callers name it (a generation's storage scope is derived from it)."""
    return TenantScope(tenant_id=namespace.tenant_id, namespace_id=namespace.namespace_id)


_T = TypeVar("_T")


def _given(value: _T | None, current: _T) -> _T:
    """A request's value, or the current one where it names none."""
    return current if value is None else value
