"""Ingest one document: parse → chunk → embed in batches → replace the document's chunks.

Everything that can fail on bad input (size, type, parse, empty) fails *before* the first write, so a
bad file never leaves half a document behind. A new version is written over the old ids first and
only then is the old tail deleted, so a reader never sees the document with no chunks.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

from ragline import errors
from ragline.documents.chunker import chunk_document
from ragline.documents.parsers import parse_document
from ragline.domain.models import Chunk, RunUsage, TenantScope
from ragline.ports import Embedder, TenantRegistry, Tokenizer, VectorStoreProvider
from ragline.services.namespaces import claim_embedding_space, require_namespace

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-/]+")


def document_id_for(path: str) -> str:
    """A readable, stable document id from a relative path (``#`` is reserved for chunk ids)."""
    cleaned = _UNSAFE.sub("_", path.strip("/")).strip("_")
    if not cleaned:
        raise errors.InvalidRequest("a document needs a non-empty name", path=path)
    if len(cleaned) > 200:
        cleaned = cleaned[:180] + "-" + hashlib.sha256(path.encode()).hexdigest()[:16]
    return cleaned


@dataclass(frozen=True)
class IngestSettings:
    chunk_tokens: int = 200
    chunk_overlap_tokens: int = 32
    max_document_bytes: int = 50 * 1024 * 1024


@dataclass(frozen=True)
class IngestResult:
    document_id: str
    chunks: int
    pages: int
    content_hash: str
    skipped: bool
    usage: RunUsage


class IngestService:
    def __init__(
        self,
        *,
        registry: TenantRegistry,
        stores: VectorStoreProvider,
        embedder: Embedder,
        tokenizer: Tokenizer,
        settings: IngestSettings,
    ) -> None:
        self._registry = registry
        self._stores = stores
        self._embedder = embedder
        self._tokenizer = tokenizer
        self._settings = settings

    def ingest(
        self,
        scope: TenantScope,
        *,
        filename: str,
        data: bytes,
        document_id: str | None = None,
        source: str = "",
        progress: Callable[[int], None] | None = None,
    ) -> IngestResult:
        """Index ``data`` as one document of ``scope``; unchanged content is skipped cheaply."""
        namespace = require_namespace(self._registry, scope.tenant_id, scope.namespace_id)
        doc_id = document_id or document_id_for(filename)
        parsed = parse_document(filename, data, max_bytes=self._settings.max_document_bytes)
        store = self._stores.scoped(scope)
        if self._unchanged(
            store.neighbors(doc_id, 0, before=0, after=0), parsed.content_hash, store.count(doc_id)
        ):
            return IngestResult(
                doc_id, store.count(doc_id), parsed.pages, parsed.content_hash, True, RunUsage()
            )
        chunks = chunk_document(
            parsed,
            document_id=doc_id,
            tokenizer=self._tokenizer,
            chunk_tokens=self._settings.chunk_tokens,
            overlap_tokens=self._settings.chunk_overlap_tokens,
            filename=filename.rsplit("/", 1)[-1],
            source=source or filename,
        )
        if not chunks:
            raise errors.EmptyDocument(f"{filename} holds no indexable text", filename=filename)
        claim_embedding_space(self._registry, namespace, self._embedder)
        texts = [c.text for c in chunks]
        vectors = self._embedder.embed_documents(texts)
        stamped = [
            c.model_copy(
                update={
                    "embedding": tuple(float(x) for x in vectors[i]),
                    "metadata": c.metadata.model_copy(
                        update={
                            "extra": {
                                **c.metadata.extra,
                                "content_hash": parsed.content_hash,
                                "chunk_count": str(len(chunks)),
                            }
                        }
                    ),
                }
            )
            for i, c in enumerate(chunks)
        ]
        for start in range(0, len(stamped), 500):
            store.upsert(stamped[start : start + 500])
            if progress:
                progress(min(start + 500, len(stamped)))
        store.delete_document(doc_id, keep_below=len(stamped))
        usage = RunUsage(embedded_tokens=sum(self._tokenizer.count_many(texts)), pages=parsed.pages)
        return IngestResult(doc_id, len(stamped), parsed.pages, parsed.content_hash, False, usage)

    @staticmethod
    def _unchanged(first: list[Chunk], content_hash: str, count: int) -> bool:
        if not first:
            return False
        extra = first[0].metadata.extra
        return extra.get("content_hash") == content_hash and extra.get("chunk_count") == str(count)
