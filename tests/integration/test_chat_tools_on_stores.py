"""The chat tools on each store: ``expand`` reads the same window everywhere and checks the chunk, and
every search mode returns the chunk's sentence window (``metadata.wider_text``) as ``context``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.agents.tools import ToolContext, run_tool
from ragline.domain.models import Chunk, ChunkMetadata, TenantScope
from ragline.ports import VectorStoreProvider
from ragline.services.retrieval import RetrievalService
from tests.support.fakes import BowEmbedder
from tests.support.tool_results import tool_results
from tests.support.vectors import bow_vector

pytestmark = pytest.mark.integration
DOCS = TenantScope(tenant_id="acme", namespace_id="docs")
SENTENCES = [f"Step {i} of the pump manual: prime, close and check valve {i}." for i in range(14)]


def manual() -> list[Chunk]:
    """One sentence per chunk, each with one sentence of window on either side (as the chunker makes)."""
    return [
        Chunk(
            document_id="pump.md",
            sequence_number=i,
            text=text,
            metadata=ChunkMetadata(filename="pump.md", wider_text=" ".join(SENTENCES[max(i - 1, 0) : i + 2])),
            embedding=bow_vector(text),
        )
        for i, text in enumerate(SENTENCES)
    ]


def tools(stores: VectorStoreProvider, tmp_path: Path) -> ToolContext:
    stores.scoped(DOCS).upsert(manual())
    service = RetrievalService(
        registry=SqliteTenantRegistry(tmp_path / "t.sqlite"), stores=stores, embedder=BowEmbedder()
    )
    return ToolContext(retriever=service.bind([DOCS]))


def call(ctx: ToolContext, name: str, **args: Any) -> Any:
    result = run_tool(ctx, name, json.dumps(args))
    return result.error, tool_results(result.content)


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_every_search_mode_shows_the_stored_sentence_window(
    both_stores: tuple[str, VectorStoreProvider], tmp_path: Path, mode: str
) -> None:
    # Given the manual on the store, each chunk stored with its sentence window
    ctx = tools(both_stores[1], tmp_path)
    ctx.semantic_as_hybrid = mode == "hybrid"

    # When the model searches in the mode
    error, found = call(
        ctx, "search", query="check valve 7", mode="keyword" if mode == "keyword" else "semantic"
    )

    # Then every hit carries its window as context, read back from the store
    assert error is None and found
    for hit in found:
        n = hit["sequenceNumber"]
        assert hit["context"] == " ".join(SENTENCES[max(n - 1, 0) : n + 2]), both_stores[0]


def test_expand_reads_the_same_window_and_checks_the_chunk_on_every_store(
    both_stores: tuple[str, VectorStoreProvider], tmp_path: Path
) -> None:
    # Given a run that found the 14-chunk manual
    ctx = tools(both_stores[1], tmp_path)
    assert call(ctx, "search", query="pump manual", mode="keyword")[0] is None

    # When the model expands chunks in the middle, at each edge, and one the manual does not have
    windows = {n: call(ctx, "expand", documentId="pump.md", sequenceNumber=n) for n in (7, 1, 12)}
    missing, reply = call(ctx, "expand", documentId="pump.md", sequenceNumber=14)

    # Then each reads up to five chunks either side, in order, without the chunk itself, with context
    numbers = {n: [c["sequenceNumber"] for c in chunks] for n, (_, chunks) in windows.items()}
    assert numbers == {
        7: [2, 3, 4, 5, 6, 8, 9, 10, 11, 12],
        1: [0, 2, 3, 4, 5, 6],
        12: [7, 8, 9, 10, 11, 13],
    }
    assert all(c["context"] for _, chunks in windows.values() for c in chunks)
    # and the missing chunk is a tool error that adds nothing
    assert missing == "unknown_chunk" and "sequenceNumber 14" in reply["error"]
    assert "pump.md#14" not in ctx.evidence
