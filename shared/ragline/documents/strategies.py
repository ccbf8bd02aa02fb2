"""The chunking strategies a namespace chooses among (README, "Chunking strategies").

- ``fixed``: :func:`~ragline.documents.chunker.chunk_document` as it is — whole sentences greedily
  packed to the chunk size with an overlap; ``wider_text`` is a window of two sentences each side.
- ``hierarchical``: the same chunks, searched as they are, cut from parents of
  :attr:`ChunkPlan.parent_tokens`; ``wider_text`` is the whole parent (what an agent reads).
- ``semantic``: :func:`~ragline.documents.semantic.semantic_segments` first (chunks close where the
  meaning of adjacent sentences moves on, found with the namespace's own embedder), then each
  segment chunked on its own.

Every strategy keeps the chunker's promises: the heading path, the page, tables with their header,
the byte bound and the deadline.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from ragline.documents.chunker import chunk_document
from ragline.documents.limits import DEFAULT_DOCUMENT_SECONDS, DEFAULT_MAX_CHUNK_BYTES, Deadline
from ragline.documents.parsers import ParsedDocument
from ragline.documents.semantic import semantic_segments
from ragline.domain.generations import ChunkingStrategy
from ragline.domain.models import Chunk
from ragline.errors import InvalidRequest
from ragline.ports import Embedder, Tokenizer


@dataclass(frozen=True)
class ChunkPlan:
    """How one generation cuts documents, every value resolved (no "the deployment's")."""

    strategy: ChunkingStrategy = "fixed"
    chunk_tokens: int = 200
    overlap_tokens: int = 32
    parent_tokens: int = 800
    """The ``hierarchical`` parent's size (unused by the others)."""


@dataclass(frozen=True)
class Chunked:
    chunks: list[Chunk]
    embedded_tokens: int = 0
    """Tokens embedded to cut the document (``semantic``'s sentences), metered with its ingestion."""


def chunk_by(
    plan: ChunkPlan,
    doc: ParsedDocument,
    *,
    document_id: str,
    tokenizer: Tokenizer,
    embedder: Embedder | None = None,
    filename: str = "",
    source: str = "",
    deadline: Deadline | None = None,
    max_bytes: int = DEFAULT_MAX_CHUNK_BYTES,
) -> Chunked:
    """``doc``'s chunks by ``plan`` (``semantic`` needs the ``embedder`` of the generation's model)."""
    deadline = deadline or Deadline(DEFAULT_DOCUMENT_SECONDS)
    cut = partial(
        chunk_document,
        document_id=document_id,
        tokenizer=tokenizer,
        chunk_tokens=plan.chunk_tokens,
        overlap_tokens=plan.overlap_tokens,
        filename=filename,
        source=source,
        deadline=deadline,
        max_bytes=max_bytes,
    )
    if plan.strategy == "hierarchical":
        return Chunked(cut(doc, parent_tokens=plan.parent_tokens))
    if plan.strategy == "semantic":
        if embedder is None:
            raise InvalidRequest("semantic chunking needs the namespace's embedder")
        segmented = semantic_segments(
            doc,
            embedder=embedder,
            tokenizer=tokenizer,
            chunk_tokens=plan.chunk_tokens,
            deadline=deadline,
            name=filename or document_id,
        )
        return Chunked(cut(segmented.document, separate=True), segmented.embedded_tokens)
    return Chunked(cut(doc))
