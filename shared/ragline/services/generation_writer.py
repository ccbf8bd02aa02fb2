"""Write one document version into one generation of its namespace (a reindex's rebuild, and an
ingest's copy into the generation being built).

A version is written at its record's claim generation and published there, like an ingest (the
store's per-document fence orders the rebuild and a concurrent ingest: the newer version wins, an
older write is refused with :class:`~ragline.errors.Superseded` and thrown away). Its usage is
recorded under an entry id of its own (``reindex#…``), once per generation and version.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ragline import __version__, errors
from ragline.documents.limits import DEFAULT_MAX_CHUNK_BYTES, Deadline
from ragline.documents.parsers import ParsedDocument, parse_document
from ragline.documents.strategies import Chunked, ChunkPlan, chunk_by
from ragline.domain.document_metadata import DocumentMetadata
from ragline.domain.documents import DocumentRecord
from ragline.domain.generations import PARENT_SHARE, ChunkingStrategy
from ragline.domain.models import MAX_SEQUENCE_NUMBER, Chunk, IngestUsage
from ragline.domain.tenancy import Namespace
from ragline.ports import TenantRegistry, TextRecognizer, UsageLedger
from ragline.services.embedding_run import EmbeddingRun
from ragline.services.generations import Generation, ModelCatalog, building, serving

WRITE_BATCH = 500


@dataclass(frozen=True)
class WriterSettings:
    """How a version is parsed and chunked (the deployment's chunking: a namespace may override it);
    :class:`~ragline.services.ingest.IngestSettings` adds the worker's timing to these."""

    chunk_tokens: int = 200
    chunk_overlap_tokens: int = 32
    chunking_strategy: ChunkingStrategy = "fixed"
    chunk_parent_tokens: int = 0
    """A ``hierarchical`` parent's size (0: :data:`PARENT_SHARE` chunks)."""
    max_document_bytes: int = 50 * 1024 * 1024
    max_document_seconds: float = 120.0
    """One budget for parsing and chunking a document; over it, the version fails with the reason."""
    max_chunk_bytes: int = DEFAULT_MAX_CHUNK_BYTES
    """What one document's chunks may total (text, sentence windows, metadata); over it, the version
    fails as too large before anything is embedded or written."""
    recognizer: TextRecognizer | None = None
    """The OCR engine for images and scanned PDF pages (``RAGLINE_OCR``); ``None``: none are read."""

    @property
    def chunking(self) -> ChunkPlan:
        """The deployment's chunking (``RAGLINE_CHUNKING``, ``RAGLINE_CHUNK_TOKENS``, …)."""
        parent = self.chunk_parent_tokens or PARENT_SHARE * self.chunk_tokens
        return ChunkPlan(
            self.chunking_strategy,
            self.chunk_tokens,
            self.chunk_overlap_tokens,
            max(parent, self.chunk_tokens),
        )


class GenerationWriter:
    def __init__(
        self,
        *,
        registry: TenantRegistry,
        catalog: ModelCatalog,
        settings: WriterSettings,
        ledger: UsageLedger | None = None,
    ) -> None:
        self._registry = registry
        self._catalog = catalog
        self._settings = settings
        self._ledger = ledger

    @property
    def settings(self) -> WriterSettings:
        return self._settings

    def write(
        self,
        target: Generation,
        record: DocumentRecord,
        filename: str,
        data: bytes,
        labels: DocumentMetadata | None = None,
    ) -> int:
        """Index ``data`` as ``record``'s version in ``target``, every chunk carrying ``labels`` (the
        record's metadata and readers when none are given); the chunks written (0 when a newer
        version of the document is already published there)."""
        deadline = Deadline(self._settings.max_document_seconds)
        parsed, chunked = parse_and_chunk(self._settings, target, record, filename, data, deadline)
        chunks = stamped(
            chunked.chunks, labels or DocumentMetadata(dict(record.attributes), tuple(record.readers))
        )
        store = target.store()
        embedder = target.space.embedder
        run = EmbeddingRun(embedder, store.vectors(record.document_id), batch_size=WRITE_BATCH)
        try:
            for batch in run.batches(chunks):
                store.upsert(batch, generation=record.generation)
        except errors.Superseded:
            return 0  # a newer version is served there already
        tokens = sum(target.space.tokenizer.count_many(run.embedded)) + chunked.embedded_tokens
        if not store.publish(record.document_id, generation=record.generation):
            store.discard(record.document_id, generation=record.generation)
            return 0
        if self._ledger is not None:
            self._ledger.record_ingest(
                record.tenant_id,
                f"reindex#{record.namespace_id}#{target.number}#{record.document_id}#{record.generation}",
                IngestUsage(documents=1, chunks=len(chunks), pages=parsed.pages, embedded_tokens=tokens),
            )
        return len(chunks)

    def remove(self, target: Generation, record: DocumentRecord) -> None:
        """Serve nothing of the document in ``target`` from ``record``'s generation on — also when a
        version was written there at that generation (an ingest's copy whose own publish then failed)."""
        store = target.store()
        store.discard(record.document_id, generation=record.generation)
        store.publish(record.document_id, generation=record.generation)

    def mirror(
        self,
        namespace: Namespace,
        written: int,
        record: DocumentRecord,
        filename: str,
        data: bytes | None,
        labels: DocumentMetadata | None = None,
    ) -> None:
        """After an ingest wrote (``data``) or removed (``None``) a version in generation ``written``:
        the same into every other generation the namespace now serves or builds — read *after* the
        ingest's claim, so an ingest racing a reindex's start or switch is never lost."""
        current = self._registry.get_namespace(namespace.tenant_id, namespace.namespace_id)
        targets = [serving(self._catalog, current), building(self._catalog, current)]
        for target in targets:
            if target is None or target.number == written:
                continue
            if data is None:
                self.remove(target, record)
            else:
                self.write(target, record, filename, data, labels)

    def relabel(
        self, namespace: Namespace, written: int, record: DocumentRecord, labels: DocumentMetadata
    ) -> None:
        """After a relabel wrote ``record``'s version in generation ``written``: the same chunks with
        the new labels in every other generation (their stored vectors: nothing is embedded)."""
        current = self._registry.get_namespace(namespace.tenant_id, namespace.namespace_id)
        for target in (serving(self._catalog, current), building(self._catalog, current)):
            if target is None or target.number == written:
                continue
            store = target.store()
            served = store.neighbors(record.document_id, 0, before=0, after=MAX_SEQUENCE_NUMBER)
            run = EmbeddingRun(
                target.space.embedder, store.vectors(record.document_id), batch_size=WRITE_BATCH
            )
            try:
                for batch in run.batches(stamped(served, labels)):
                    store.upsert(batch, generation=record.generation)
            except errors.Superseded:
                continue
            store.publish(record.document_id, generation=record.generation)


def stamped(chunks: list[Chunk], labels: DocumentMetadata) -> list[Chunk]:
    """Every chunk carrying its document's metadata and readers (what the store filters on)."""
    return [
        c.model_copy(
            update={
                "metadata": c.metadata.model_copy(
                    update={"attributes": labels.attributes, "readers": labels.readers}
                )
            }
        )
        for c in chunks
    ]


def content_hash_of(data: bytes) -> str:
    """A version's content hash before it is parsed: what the parse records (sha256 hex of the
    bytes), so a re-ingest can tell unchanged bytes without parsing them."""
    return hashlib.sha256(data).hexdigest()


def recipe_of(settings: WriterSettings, target: Generation, filename: str, source: str) -> str:
    """How ``target`` makes a version's chunks from its bytes: everything :func:`parse_and_chunk`
    reads besides them — the name and source the chunks carry, the model, the chunking, the size bound
    and OCR — and the parsers' release (an upgrade may read a file differently). Two versions with the
    same bytes and the same recipe have the same chunks, so the second needs no parse and no embedding."""
    plan = target.chunk_plan(settings.chunking)
    recognizer = type(settings.recognizer).__name__ if settings.recognizer is not None else ""
    parts = (
        __version__, target.space.embedder.model_id, plan.strategy, plan.chunk_tokens,
        plan.overlap_tokens, plan.parent_tokens, settings.max_chunk_bytes, recognizer, filename, source,
    )  # fmt: skip
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:32]


def parse_and_chunk(
    settings: WriterSettings,
    target: Generation,
    record: DocumentRecord,
    filename: str,
    data: bytes,
    deadline: Deadline,
) -> tuple[ParsedDocument, Chunked]:
    """``data`` parsed and chunked for ``target`` (its model's tokenizer and embedder, its chunking),
    within ``deadline`` and the settings' size bounds: what ingestion and a rebuild both write."""
    parsed = parse_document(
        filename,
        data,
        max_bytes=settings.max_document_bytes,
        deadline=deadline,
        recognizer=settings.recognizer,
    )
    chunked = chunk_by(
        target.chunk_plan(settings.chunking),
        parsed,
        document_id=record.document_id,
        tokenizer=target.space.tokenizer,
        embedder=target.space.embedder,
        filename=filename,
        source=record.source or filename,
        deadline=deadline,
        max_bytes=settings.max_chunk_bytes,
    )
    return parsed, chunked
