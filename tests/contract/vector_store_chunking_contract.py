"""The VectorStore contract for chunks of every chunking strategy: part of :class:`VectorStoreContract`
(which every backend subclasses).

Each strategy shapes chunks differently — ``fixed`` with sentence windows, ``hierarchical`` with a
whole parent (kilobytes) in every chunk's ``wider_text``, ``semantic`` with chunks of uneven size —
and a store must keep each as written, serve it by search and in order, and let a rebuild written
with another strategy replace it whole.
"""

from __future__ import annotations

import pytest

from ragline.documents.parsers import ParsedDocument, Section
from ragline.documents.strategies import ChunkPlan, chunk_by
from ragline.domain.generations import ChunkingStrategy
from ragline.domain.models import MAX_SEQUENCE_NUMBER, Chunk, KeywordQuery, TenantScope
from ragline.ports import VectorStoreProvider
from tests.support.fakes import BowEmbedder
from tests.support.vectors import bow_vector

STRATEGIES: tuple[ChunkingStrategy, ...] = ("fixed", "hierarchical", "semantic")

_TOPICS = {
    "Installation": "bracket wall anchor level drill screw mount",
    "Filters": "filter mesh rinse dry dust replace clip",
    "Warranty": "warranty claim receipt dealer repair refund months",
}


def manual() -> ParsedDocument:
    """Three chapters of prose (each a few topics' worth of sentences) and a price table."""
    sections = []
    for chapter, words in _TOPICS.items():
        w = words.split()
        sentences = [
            " ".join(w[(i + j) % len(w)] for j in range(6)).capitalize() + f" {chapter}{i}."
            for i in range(24)
        ]
        sections.append(Section(text=" ".join(sentences), heading_path=("Manual", chapter), page=1))
    rows = "\n".join(f"| H2-{i} | {400 + i} EUR |" for i in range(30))
    sections.append(
        Section(text=rows, header="Spare parts\n| Part | Price |", heading_path=("Manual", "Parts"))
    )
    return ParsedDocument(sections=sections, pages=1, content_hash="1" * 64)


def chunked(strategy: ChunkingStrategy, document_id: str = "manual") -> list[Chunk]:
    words = BowEmbedder()
    plan = ChunkPlan(strategy=strategy, chunk_tokens=30, overlap_tokens=6, parent_tokens=120)
    chunks = chunk_by(plan, manual(), document_id=document_id, tokenizer=words, embedder=words).chunks
    return [c.model_copy(update={"embedding": bow_vector(c.text)}) for c in chunks]


def _kept(c: Chunk) -> tuple[object, ...]:
    m = c.metadata
    return c.sequence_number, c.text, m.wider_text, m.heading_path, m.page, m.filename


class ChunkingContract:
    @pytest.mark.parametrize("strategy", STRATEGIES)
    def test_chunks_of_each_strategy_are_kept_as_written_and_served_in_order(
        self, provider: VectorStoreProvider, strategy: ChunkingStrategy
    ) -> None:
        # Given a manual chunked by the strategy, written and published
        store = provider.scoped(TenantScope(tenant_id="acme", namespace_id=f"chunks-{strategy}"))
        chunks = chunked(strategy)
        store.upsert(chunks, generation=1)
        assert store.publish("manual", generation=1)

        # Then every chunk is served in order, text, context, heading path and page as written
        served = store.neighbors("manual", 0, before=0, after=MAX_SEQUENCE_NUMBER)
        assert [_kept(c) for c in served] == [_kept(c) for c in chunks]
        assert store.count("manual") == len(chunks)

        # and a search for a phrase of one chunk finds it, with its context
        target = chunks[len(chunks) // 2]
        phrase = " ".join(target.text.split()[-4:])
        hits = store.search(KeywordQuery(text=phrase, k=5))
        assert target.id in [h.chunk.id for h in hits]
        hit = next(h.chunk for h in hits if h.chunk.id == target.id)
        assert hit.metadata.wider_text == target.metadata.wider_text
        assert all(line in hit.metadata.wider_text for line in hit.text.split("\n"))

    @pytest.mark.parametrize(
        ("before", "after"), list(zip(STRATEGIES, STRATEGIES[1:] + STRATEGIES[:1], strict=True))
    )
    def test_a_rebuild_with_another_strategy_replaces_every_chunk(
        self, provider: VectorStoreProvider, before: ChunkingStrategy, after: ChunkingStrategy
    ) -> None:
        # Given the manual served as chunked by one strategy
        store = provider.scoped(TenantScope(tenant_id="acme", namespace_id=f"switch-{before}-{after}"))
        store.upsert(chunked(before), generation=1)
        assert store.publish("manual", generation=1)

        # When the version chunked by another is written and published
        rebuilt = chunked(after)
        store.upsert(rebuilt, generation=2)
        assert store.publish("manual", generation=2)

        # Then exactly its chunks are served: none of the old ones is left, however many there were
        served = store.neighbors("manual", 0, before=0, after=MAX_SEQUENCE_NUMBER)
        assert [(c.text, c.metadata.wider_text) for c in served] == [
            (c.text, c.metadata.wider_text) for c in rebuilt
        ]
        assert store.count("manual") == len(rebuilt)
