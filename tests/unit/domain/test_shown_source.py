"""What a client is shown of a document's source: the tenant's own name for it, never the
deployment's bucket or layout; a shown source shown again is itself."""

from __future__ import annotations

import pytest

from ragline.domain.api import ChunkView, DocumentView
from ragline.domain.documents import DocumentRecord, shown_source
from ragline.domain.models import Chunk, ChunkMetadata

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("stored", "name", "shown"),
    [
        ("s3://ragline-docs-123/acme/docs/manuals/pump.md", "pump.md", "manuals/pump.md"),
        ("s3://ragline-docs-123/acme/docs/pump.md", "pump.md", "pump.md"),
        ("s3://ragline-docs-123/odd-key", "odd-key", "odd-key"),  # no namespace path: its name only
        ("s3://ragline-docs-123", "", ""),
        ("api:notes/pump.md", "pump.md", "notes/pump.md"),
        ("api:", "notes.md", "notes.md"),  # API text stored before its source named the file
        (
            "https://wiki.example.com/spaces/OPS/pages/42",
            "42",
            "https://wiki.example.com/spaces/OPS/pages/42",
        ),
        ("samples/northwind/faq.txt", "faq.txt", "samples/northwind/faq.txt"),  # a local path as given
        ("", "faq.txt", ""),
    ],
)
def test_a_stored_source_is_shown_as_the_tenants_own_name(stored: str, name: str, shown: str) -> None:
    assert shown_source(stored, name) == shown
    assert shown_source(shown, name) == shown  # idempotent: a replayed view stays the same


def test_chunk_and_document_views_never_carry_the_bucket() -> None:
    # Given a chunk and a record of an S3 upload
    source = "s3://ragline-docs-123/acme/docs/manuals/pump.md"
    chunk = Chunk(
        document_id="manuals/pump.md",
        sequence_number=0,
        text="Prime the pump.",
        metadata=ChunkMetadata(filename="pump.md", source=source),
    )
    record = DocumentRecord(
        tenant_id="acme", namespace_id="docs", document_id="manuals/pump.md", source=source
    )

    # When they are viewed, built in code or read back from a recorded body (a replay)
    views = [
        ChunkView.build("manuals/pump.md#0", "docs", chunk, None).source,
        ChunkView.model_validate({"id": "x#0", "namespace": "docs", "documentId": "x", "sequenceNumber": 0,
                                  "text": "t", "filename": "pump.md", "source": source}).source,
        DocumentView.of(record).source,
    ]  # fmt: skip

    # Then each shows the path in the namespace
    assert views == ["manuals/pump.md"] * 3
