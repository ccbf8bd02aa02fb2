"""Hits of the OpenSearch Serverless mode: which copy of a chunk is served, and its fields."""

from __future__ import annotations

from typing import Any, Literal

from ragline.domain.models import Chunk, ChunkMetadata, chunk_id

Leg = list[dict[str, Any]]


def field(hit: dict[str, Any], name: str) -> Any:
    return hit["fields"][name][0]


def cid(hit: dict[str, Any]) -> str:
    src = hit["_source"]
    return chunk_id(src["document_id"], src["sequence_number"])


def newest(fences: dict[str, int], hits: Leg) -> Leg:
    """The hits at their document's fence (all of them when ``fences`` is empty: already filtered),
    each chunk once, its highest-stamped copy, in the leg's order (the best-ranked copy's place)."""
    best: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    for h in hits:
        src = h["_source"]
        if fences and src.get("generation", 0) != fences[src["document_id"]]:
            continue
        key = cid(h)
        if key not in best:
            order.append(key)
            best[key] = h
        elif src.get("stamp", 0) > best[key]["_source"].get("stamp", 0):
            best[key] = {**h, "_score": best[key].get("_score")}
    return [best[c] for c in order]


def ranked(hits: Leg, leg: Literal["semantic", "keyword"]) -> list[tuple[str, float]]:
    # lucene and faiss cosinesimil scores are (1 + cos) / 2; report the cosine like the embedded store.
    return [(cid(h), 2 * float(h["_score"]) - 1 if leg == "semantic" else float(h["_score"])) for h in hits]


def chunk_of(src: dict[str, Any]) -> Chunk:
    return Chunk(
        document_id=src["document_id"],
        sequence_number=src["sequence_number"],
        text=src["text"],
        metadata=ChunkMetadata.model_validate(src.get("metadata") or {}),
    )
