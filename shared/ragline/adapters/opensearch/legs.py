"""The hits of a search leg (kNN or BM25) as the domain store reads them, and the chunks they carry.

Pure response readers: the searches (:mod:`.searching`, fused here or on the node) and the document
reads (:mod:`.document_reads`) turn answers into hits and chunks with them, unit-testable without a
store.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ragline.domain.models import Chunk, ChunkMetadata, ScoreBreakdown, SearchHit, chunk_id

Leg = Literal["semantic", "keyword"]


@dataclass(frozen=True, slots=True)
class LegHit:
    """One hit of a leg: which chunk of which generation, its leg's score, and its source if fetched."""

    chunk_id: str
    document_id: str
    generation: int
    score: float
    source: dict[str, Any] | None


def leg_hits(resp: dict[str, Any], leg: Leg) -> list[LegHit]:
    """A leg's answer, best first: a full hit's source, or an ids-only hit's doc values."""
    out = []
    for h in resp["hits"]["hits"]:
        src = h.get("_source")
        if src:
            doc, seq, gen = src["document_id"], src["sequence_number"], src.get("generation", 0)
        else:  # an ids-only leg: the keyword doc values
            fields = h["fields"]
            doc, seq = fields["document_id"][0], fields["sequence_number"][0]
            gen = fields.get("generation", [0])[0]
        raw = float(h["_score"])
        # lucene cosinesimil scores are (1 + cos) / 2; report the cosine like the embedded store.
        score = 2 * raw - 1 if leg == "semantic" else raw
        out.append(LegHit(chunk_id(doc, seq), doc, int(gen), score, src))
    return out


def single_leg(hits: list[LegHit], leg: Leg) -> list[SearchHit]:
    """A semantic or keyword search's answer: each hit ranked within its one leg."""
    out = []
    for rank, h in enumerate(hits, start=1):
        assert h.source is not None  # single legs fetch their sources
        breakdown = (
            ScoreBreakdown(semantic_rank=rank, semantic_score=h.score)
            if leg == "semantic"
            else ScoreBreakdown(keyword_rank=rank, keyword_score=h.score)
        )
        out.append(SearchHit(chunk=stored_chunk(h.source), score=h.score, breakdown=breakdown))
    return out


def stored_chunk(src: dict[str, Any]) -> Chunk:
    """The chunk a stored ``_source`` holds (without its vector)."""
    return Chunk(
        document_id=src["document_id"],
        sequence_number=src["sequence_number"],
        text=src["text"],
        metadata=ChunkMetadata.model_validate(src.get("metadata") or {}),
    )
