"""How a chunk is laid out as a row of the SQLite store's ``chunks`` tables, and read back.

Writes (:mod:`.store_writes`) and reads (:mod:`.store_reads`) both go through here, so the column
order of a written row and of a selected one is stated once: the scope token, the row a chunk is
written as, the columns a read selects and the chunk such a row reads back as.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

from ragline import errors
from ragline.adapters.embedded.store_filters import chunk_terms
from ragline.domain.models import Chunk, ChunkMetadata, TenantScope

ScopeKey = tuple[str, str]
"""``(tenant_id, namespace_id)``: the leading columns of every row and of every scope table."""

COLUMNS = "c.rowid, c.document_id, c.seq, c.text, c.metadata"
"""What a read selects of a served row (``chunks c``): :func:`chunk_from_row` reads it back."""
OF_DOCUMENT = "tenant_id=? AND namespace_id=? AND document_id=?"
"""The rows of one document of one scope, bound as ``(*scope_key, document_id)``."""


def scope_token(scope: TenantScope) -> str:
    """A single FTS token naming the scope (ids may hold ``-``/``.``, which FTS would split)."""
    digest = hashlib.sha256(f"{scope.tenant_id}\0{scope.namespace_id}".encode()).hexdigest()
    return f"s{digest[:24]}"


def chunk_row(scope: TenantScope, token: str, c: Chunk, dimension: int) -> tuple[object, ...]:
    """The columns a chunk is written with, up to (not including) its generation.

    Checked here, before any transaction starts: a chunk whose embedding does not fit the store is
    refused whole, so no write is ever half of a document's chunks.
    """
    if c.embedding is None or len(c.embedding) != dimension:
        raise errors.EmbeddingMismatch(
            "chunk embedding does not match the store's dimension",
            chunk_id=c.id,
            expected=dimension,
            got=None if c.embedding is None else len(c.embedding),
        )
    vec = np.asarray(c.embedding, dtype=np.float32)
    return (
        scope.tenant_id,
        scope.namespace_id,
        token,
        c.document_id,
        c.sequence_number,
        c.metadata.filename,
        c.text,
        c.metadata.model_dump_json(),
        vec.tobytes(),
        chunk_terms(c.metadata),
    )


def chunk_from_row(r: tuple[Any, ...]) -> Chunk:
    """A row selected as :data:`COLUMNS`, as the chunk it stores (its rowid, ``r[0]``, aside)."""
    return Chunk(
        document_id=str(r[1]),
        sequence_number=int(r[2]),
        text=str(r[3]),
        metadata=ChunkMetadata.model_validate(json.loads(str(r[4]))),
    )
