"""How a generation's chunking is resolved: the namespace's own, else the deployment's
(``RAGLINE_CHUNKING``, ``RAGLINE_CHUNK_TOKENS``, ``…_OVERLAP_TOKENS``, ``…_PARENT_TOKENS``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.config import Settings
from ragline.documents import parse_document
from ragline.documents.strategies import ChunkPlan, chunk_by
from ragline.domain.generations import Chunking
from ragline.domain.models import TenantScope
from ragline.services.generation_writer import WriterSettings
from ragline.services.generations import Generation, Space
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder

SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")


def plan(chunking: Chunking, deployment: ChunkPlan) -> ChunkPlan:
    words = BowEmbedder()
    space = Space(words, words, None)  # type: ignore[arg-type]
    return Generation(SCOPE, 1, space, chunking).chunk_plan(deployment)


def test_the_deployment_defaults_are_fixed_200_32_and_parents_of_four_chunks() -> None:
    assert WriterSettings().chunking == ChunkPlan("fixed", 200, 32, 800)


def test_a_namespace_that_names_nothing_gets_the_deployments_plan() -> None:
    deployment = ChunkPlan("semantic", 120, 20, 600)
    assert plan(Chunking(), deployment) == deployment


def test_a_namespace_strategy_keeps_the_deployments_sizes() -> None:
    assert plan(Chunking(strategy="hierarchical"), ChunkPlan("fixed", 120, 20, 600)) == ChunkPlan(
        "hierarchical", 120, 20, 600
    )


def test_a_namespace_chunk_size_brings_its_own_parent_and_a_bounded_overlap() -> None:
    got = plan(Chunking(strategy="hierarchical", chunk_tokens=60), ChunkPlan("fixed", 200, 32, 800))
    assert got == ChunkPlan("hierarchical", 60, 15, 240)


def test_a_namespace_parent_size_is_kept_and_never_below_the_chunk() -> None:
    assert plan(Chunking(parent_tokens=1000), ChunkPlan()).parent_tokens == 1000
    assert plan(Chunking(chunk_tokens=300), ChunkPlan("fixed", 200, 32, 250)).parent_tokens == 1200


@pytest.mark.parametrize("strategy", ["fixed", "hierarchical", "semantic"])
def test_the_environment_sets_how_ingestion_chunks(tmp_path: Path, strategy: str) -> None:
    # Given a deployment configured by the environment, and a document of two topics
    env = {
        "RAGLINE_HOME": str(tmp_path),
        "RAGLINE_CHUNKING": strategy,
        "RAGLINE_CHUNK_TOKENS": "20",
        "RAGLINE_CHUNK_OVERLAP_TOKENS": "4",
        "RAGLINE_CHUNK_PARENT_TOKENS": "60",
    }
    words = BowEmbedder()
    c = Container(Settings.from_env(env), embedder=words, tokenizer=words)
    text = (
        " ".join(f"Pump valve hose seal n{i}." for i in range(12))
        + " "
        + " ".join(f"Invoice refund receipt tax n{i}." for i in range(12))
    )
    try:
        c.tenancy.create_tenant("acme")
        c.registry.create_namespace(new_namespace("acme", "docs"))
        # When it is ingested
        c.ingest.ingest(SCOPE, filename="two.txt", data=text.encode())
        stored = c.stores.scoped(SCOPE).neighbors("two.txt", 0, before=0, after=1000)
    finally:
        c.close()
    # Then its chunks are exactly what the configured plan makes
    parsed = parse_document("two.txt", text.encode())
    expected = chunk_by(
        ChunkPlan(strategy, 20, 4, 60), parsed, document_id="two.txt", tokenizer=words, embedder=words,  # type: ignore[arg-type]
        filename="two.txt", source="two.txt",
    ).chunks  # fmt: skip
    assert [(s.text, s.metadata.wider_text) for s in stored] == [
        (e.text, e.metadata.wider_text) for e in expected
    ]


def test_an_unknown_strategy_in_the_environment_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="chunking"):
        Settings.from_env({"RAGLINE_HOME": str(tmp_path), "RAGLINE_CHUNKING": "paragraphs"})


def test_semantic_ingestion_meters_the_sentences_it_embedded_besides_the_chunks(tmp_path: Path) -> None:
    from ragline.domain.billing import current_period

    words = BowEmbedder()
    text = " ".join(f"Pump valve hose seal n{i}." for i in range(12))
    env = {"RAGLINE_HOME": str(tmp_path), "RAGLINE_CHUNKING": "semantic", "RAGLINE_CHUNK_TOKENS": "20"}
    c = Container(Settings.from_env(env), embedder=words, tokenizer=words)
    try:
        c.tenancy.create_tenant("acme")
        c.registry.create_namespace(new_namespace("acme", "docs"))
        c.ingest.ingest(SCOPE, filename="pump.txt", data=text.encode())
        stored = c.stores.scoped(SCOPE).neighbors("pump.txt", 0, before=0, after=1000)
        usage = c.ledger.period_ingestion("acme", current_period())
    finally:
        c.close()
    chunk_tokens = sum(len(s.text.split()) for s in stored)
    sentence_tokens = len(text.split())
    assert usage.embedded_tokens == chunk_tokens + sentence_tokens
