"""The agent's tools, ``search`` and ``expand``, and the out-of-band context they run in.

The model controls only the query text and mode (and which chunk to expand). Tenant, namespaces and
retrieval settings come from :class:`ToolContext`, which the model never sees.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from ragline.domain.chat import ToolSpec
from ragline.domain.models import Chunk, RunUsage, SearchHit, SearchMode, TenantScope
from ragline.ports import VectorStore


class SearchArgs(BaseModel):
    query: str = Field(min_length=1, max_length=1000, description="What to look for.")
    mode: Literal["semantic", "keyword"] = Field(default="semantic", description="keyword for exact terms.")
    label: str = Field(default="", max_length=120, description="A short status line for the user interface.")


class ExpandArgs(BaseModel):
    documentId: str = Field(min_length=1)
    sequence_number: int = Field(ge=0)


SearchFn = Callable[[TenantScope, str, SearchMode, int], tuple[list[SearchHit], RunUsage, list[str]]]
"""(scope, query, mode, k) → (hits, usage, warnings): one retrieval in one namespace."""
RerankFn = Callable[[str, list[SearchHit], int], tuple[list[SearchHit], RunUsage, str | None]]
"""(query, hits, keep) → (reranked hits, what the rerank cost, warning if it fell back to fused order)."""


@dataclass
class ToolContext:
    """Everything the tools need that the model must not control."""

    scopes: list[TenantScope]
    stores: dict[TenantScope, VectorStore]
    search: SearchFn
    candidates: int = 10
    """Hits fetched per search (``accurate``: 30, reranked down to ``keep``)."""
    keep: int = 10
    rerank: RerankFn | None = None
    semantic_as_hybrid: bool = True
    neighbours: int = 5
    usage: RunUsage = field(default_factory=RunUsage)
    retrieved: dict[str, tuple[Chunk, SearchHit | None]] = field(default_factory=dict)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    """(code, message) pairs raised while running tools; the loop streams them as warning events."""
    origins: dict[str, TenantScope] = field(default_factory=dict)
    """Which scope each retrieved document came from, so ``expand`` reads the right one."""

    def specs(self) -> list[ToolSpec]:
        """The tools offered this step; ``expand`` only when every store keeps chunks in order."""
        if all(s.capabilities().neighbors for s in self.stores.values()):
            return [search_spec(), expand_spec()]
        return [search_spec()]


@cache
def search_spec() -> ToolSpec:
    return ToolSpec(
        name="search", description="Search the documents.", parameters=SearchArgs.model_json_schema()
    )


@cache
def expand_spec() -> ToolSpec:
    return ToolSpec(
        name="expand",
        description="Read the 5 chunks before and after a result, in order.",
        parameters=ExpandArgs.model_json_schema(),
    )


@dataclass
class ToolResult:
    content: str
    hits: int
    label: str
    error: str | None = None


def compact(chunk: Chunk) -> dict[str, Any]:
    """What the model sees of a chunk: enough to cite and expand it, nothing internal."""
    return {
        "id": chunk.id,
        "documentId": chunk.document_id,
        "sequence_number": chunk.sequence_number,
        "filename": chunk.metadata.filename,
        "text": chunk.text,
    }


def rich(chunk: Chunk, hit: SearchHit | None) -> dict[str, Any]:
    """What the client sees: the chunk, its metadata and scores."""
    out: dict[str, Any] = {"id": chunk.id, "text": chunk.text, **chunk.metadata.model_dump(exclude={"extra"})}
    if hit is not None:
        out["score"] = hit.score
        out["scores"] = hit.breakdown.model_dump(exclude_none=True)
    return out


def run_tool(ctx: ToolContext, name: str, arguments: str) -> ToolResult:
    """Run one call; bad arguments come back to the model as a tool error it can correct."""
    try:
        if name == "search":
            return _search(ctx, SearchArgs.model_validate_json(arguments or "{}"))
        if name == "expand" and len(ctx.specs()) > 1:
            return _expand(ctx, ExpandArgs.model_validate_json(arguments or "{}"))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        return ToolResult(
            json.dumps({"error": f"invalid arguments: {problems}"}), 0, name, error="invalid_arguments"
        )
    return ToolResult(json.dumps({"error": f"unknown tool {name!r}"}), 0, name, error="unknown_tool")


def _search(ctx: ToolContext, args: SearchArgs) -> ToolResult:
    mode: SearchMode = "hybrid" if args.mode == "semantic" and ctx.semantic_as_hybrid else args.mode
    found: list[SearchHit] = []
    for scope in ctx.scopes:
        hits, usage, warnings = ctx.search(scope, args.query, mode, ctx.candidates)
        ctx.usage.add(usage)
        ctx.warnings.extend(("search_downgraded", w) for w in warnings)
        found.extend(hits)
        for h in hits:
            ctx.origins.setdefault(h.chunk.document_id, scope)
    found.sort(key=lambda h: -h.score)
    found = found[: ctx.candidates]
    # Keyword results are never reranked: an exact-term query is already ordered by what it asked for.
    if ctx.rerank is not None and mode != "keyword" and found:
        found, usage, warning = ctx.rerank(args.query, found, ctx.keep)
        ctx.usage.add(usage)
        if warning:
            ctx.warnings.append(("rerank_failed", warning))
    found = found[: ctx.keep]
    for h in found:
        ctx.retrieved.setdefault(h.chunk.id, (h.chunk, h))
    return ToolResult(json.dumps([compact(h.chunk) for h in found]), len(found), args.label or args.query)


def _expand(ctx: ToolContext, args: ExpandArgs) -> ToolResult:
    scope = ctx.origins.get(args.documentId)
    if scope is None:
        return ToolResult(
            json.dumps({"error": "expand only works on a documentId returned by search"}),
            0,
            "expand",
            error="unknown_document",
        )
    chunks = ctx.stores[scope].neighbors(
        args.documentId, args.sequence_number, before=ctx.neighbours, after=ctx.neighbours
    )
    ctx.usage.retrievals += 1
    for c in chunks:
        ctx.retrieved.setdefault(c.id, (c, None))
    return ToolResult(json.dumps([compact(c) for c in chunks]), len(chunks), f"Reading {args.documentId}")


def label_for(name: str, arguments: str) -> str:
    """The UI label of a call before it runs: the model's ``label``, else its query, else the tool."""
    try:
        data = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return name
    if isinstance(data, dict):
        for key in ("label", "query"):
            if isinstance(data.get(key), str) and data[key].strip():
                return str(data[key])[:120]
    return name
