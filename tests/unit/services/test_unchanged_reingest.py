"""Unchanged re-ingests cost nothing: the same bytes, by the same recipe (name, source, model,
chunking) with the same metadata, are neither parsed nor embedded nor recorded in the tenant's
ingestion usage — reported ``unchanged``. New metadata alone is a relabel (stored vectors, nothing
recorded); a changed file, or the same bytes chunked another way, is charged for what was done.

On the embedded wiring (the real SQLite ledger, document registry and store); the embedder is a real
one, counted by a wrapper (not a mock: every call goes through).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.config import Settings
from ragline.domain.api import IngestionUsage
from ragline.domain.document_metadata import MetadataInput
from ragline.domain.models import MAX_SEQUENCE_NUMBER, RunUsage, TenantScope
from ragline.services.authentication import Principal
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder, CountingEmbedder
from tests.support.serving import acme_docs

pytestmark = pytest.mark.unit
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
FIRST = b"# Guide\n\nPrime the pump with clean water. Open the valve slowly. Close it when the tank is full."
SECOND = FIRST + b"\n\nDrain the pump before the first frost."


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def c(tmp_path: Path, embedder: CountingEmbedder) -> Container:
    return acme_docs(tmp_path, embedder=embedder)


def report(c: Container) -> IngestionUsage:
    """The ingestion part of ``GET /v1/usage``, as the tenant's admin reads it."""
    return c.metering.usage_report(Principal.operator("acme")).ingestion


def served(c: Container, document_id: str = "guide.md") -> list[Any]:
    return c.stores.scoped(SCOPE).neighbors(document_id, 0, before=0, after=MAX_SEQUENCE_NUMBER)


def test_the_same_file_ingested_again_is_unchanged_and_costs_nothing(
    c: Container, embedder: CountingEmbedder
) -> None:
    # Given a file ingested once
    first = c.ingest.ingest(SCOPE, filename="guide.md", data=FIRST)
    once, chunks = report(c), served(c)
    assert first.outcome == "indexed" and once.documents == 1 and once.embedded_tokens > 0
    embedder.embedded.clear()

    # When the same bytes are ingested again
    again = c.ingest.ingest(SCOPE, filename="guide.md", data=FIRST)

    # Then nothing is embedded or recorded, and the result says so
    assert (again.outcome, again.usage, again.skipped) == ("unchanged", RunUsage(), True)
    assert (again.chunks, again.content_hash) == (first.chunks, first.content_hash)
    assert embedder.embedded == []
    assert report(c) == once
    # and the document serves the same chunks, ready, at the new version
    record = c.documents.get("acme", "docs", "guide.md")
    assert record is not None and (record.status, record.chunk_count) == ("ready", first.chunks)
    assert [(ch.text, ch.metadata) for ch in served(c)] == [(ch.text, ch.metadata) for ch in chunks]


def test_an_unchanged_file_is_not_even_parsed_so_a_semantic_chunker_embeds_nothing(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    """The semantic chunker embeds every sentence to cut: a re-parse would embed (and cost) again."""
    c = acme_docs(tmp_path, embedder=embedder, chunking="semantic")
    c.ingest.ingest(SCOPE, filename="guide.md", data=FIRST)
    once = report(c)
    assert once.embedded_tokens > 0 and embedder.embedded
    embedder.embedded.clear()

    again = c.ingest.ingest(SCOPE, filename="guide.md", data=FIRST)

    assert again.outcome == "unchanged" and embedder.embedded == []
    assert report(c) == once


def test_new_metadata_alone_relabels_with_the_stored_vectors_and_records_nothing(
    c: Container, embedder: CountingEmbedder
) -> None:
    c.ingest.ingest(SCOPE, filename="guide.md", data=FIRST, metadata=MetadataInput({"team": "ops"}))
    once = report(c)
    embedder.embedded.clear()

    relabelled = c.ingest.ingest(
        SCOPE, filename="guide.md", data=FIRST, metadata=MetadataInput({"team": "hr"})
    )

    # a new version (its readers see new labels), made of the served chunks: nothing embedded or charged
    assert relabelled.outcome == "indexed" and relabelled.usage == RunUsage()
    assert embedder.embedded == [] and report(c) == once
    assert {ch.metadata.attributes["team"] for ch in served(c)} == {"hr"}
    record = c.documents.get("acme", "docs", "guide.md")
    assert record is not None and record.attributes == {"team": "hr"}


def test_a_changed_file_is_charged_for_what_was_embedded(c: Container, embedder: CountingEmbedder) -> None:
    first = c.ingest.ingest(SCOPE, filename="guide.md", data=FIRST)
    embedder.embedded.clear()

    second = c.ingest.ingest(SCOPE, filename="guide.md", data=SECOND)

    assert second.outcome == "indexed" and embedder.embedded  # only the chunks whose text is new
    assert report(c) == IngestionUsage(
        documents=2,
        chunks=first.chunks + second.chunks,
        pages=first.pages + second.pages,
        embedded_tokens=first.usage.embedded_tokens + second.usage.embedded_tokens,
    )
    assert second.usage.embedded_tokens == sum(BowEmbedder().count_many(embedder.embedded))


def test_the_same_bytes_chunked_another_way_are_chunked_again_and_charged(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    # Given a file ingested with 200-token chunks
    c = acme_docs(tmp_path, embedder=embedder)
    c.ingest.ingest(SCOPE, filename="guide.md", data=FIRST * 3)
    once = report(c)

    # When the deployment's chunking changes and the same bytes come again
    smaller = Container(Settings(home=tmp_path, chunk_tokens=12, chunk_overlap_tokens=0), embedder=embedder)
    again = smaller.ingest.ingest(SCOPE, filename="guide.md", data=FIRST * 3)

    # Then they are chunked again — a new version, charged for what it embedded
    assert again.outcome == "indexed" and again.chunks > 1 and again.usage.embedded_tokens > 0
    assert report(c).documents == once.documents + 1
    assert len(served(c)) == again.chunks


class CompleteFailsOnce:
    """The registry, crashing once between a version's publish and its completion."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.failed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def complete(self, record: Any) -> bool:
        if not self.failed:
            self.failed = True
            raise errors.DependencyUnavailable("the registry went away")
        return bool(self.inner.complete(record))


def test_a_record_behind_the_store_is_never_taken_for_what_it_serves(tmp_path: Path) -> None:
    """A version published whose completion failed leaves the record naming the version before: the
    bytes of that one, ingested again, are indexed in full — never the served chunks kept under it."""
    c = acme_docs(tmp_path, embedder=CountingEmbedder())
    c.ingest.ingest(SCOPE, filename="guide.md", data=FIRST)
    crashing = Container(
        Settings(home=tmp_path), documents=CompleteFailsOnce(c.documents), embedder=BowEmbedder()
    )
    with pytest.raises(errors.DependencyUnavailable):
        crashing.ingest.ingest(SCOPE, filename="guide.md", data=SECOND)
    assert any("frost" in ch.text for ch in served(c))  # the store serves the second version

    back = c.ingest.ingest(SCOPE, filename="guide.md", data=FIRST)

    assert back.outcome == "indexed"
    assert served(c) and not any("frost" in ch.text for ch in served(c))
    record = c.documents.get("acme", "docs", "guide.md")
    assert record is not None and record.status == "ready" and record.chunk_count == len(served(c))
