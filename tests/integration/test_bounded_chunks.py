"""A document's chunks are bounded: no chunk carries megabytes of headings, and a document whose
chunks would still total too much ends ``failed`` naming the file — never a store or cluster error.

Given the 1 MB long-heading Markdown of issue 24 (six nested headings of ~150 KB over ~170 KB of
prose: every chunk used to carry ~880 KB of heading path, which the OpenSearch node refused as one
bulk request, ``dependency_failed``), when it is ingested on each store, then it is indexed with
short heading paths; and with a chunk budget below what it needs, it fails with the file's name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ragline.adapters.embedded.documents import SqliteDocumentRegistry
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.documents.limits import MAX_HEADING_PATH_CHARS
from ragline.domain.models import TenantScope
from ragline.errors import DocumentTooLarge
from ragline.ports import VectorStoreProvider
from ragline.services.ingest import IngestService, IngestSettings
from ragline.services.namespaces import new_namespace
from tests.support.fakes import BowEmbedder
from tests.support.hostile_files import long_headings, long_headings_docx

pytestmark = pytest.mark.integration
SCOPE = TenantScope(tenant_id="acme", namespace_id="handbook")


def service(stores: VectorStoreProvider, home: Path, settings: IngestSettings) -> IngestService:
    tenants = SqliteTenantRegistry(home / "tenants.sqlite")
    tenants.create_namespace(new_namespace("acme", "handbook"))
    return IngestService(
        registry=tenants,
        documents=SqliteDocumentRegistry(home / "documents.sqlite"),
        stores=stores,
        embedder=BowEmbedder(),
        tokenizer=BowEmbedder(),
        settings=settings,
    )


@pytest.mark.parametrize("filename", ["headings.md", "headings.html", "headings.docx"])
def test_given_a_1mb_file_of_long_headings_when_ingested_then_indexed_with_bounded_heading_paths(
    both_stores: tuple[str, VectorStoreProvider], tmp_path: Path, filename: str
) -> None:
    kind, stores = both_stores
    data = long_headings(1024 * 1024, html=filename.endswith(".html"))
    if filename.endswith(".docx"):
        data = long_headings_docx(1024 * 1024)  # ~110 KB of zip

    result = service(stores, tmp_path, IngestSettings()).ingest(
        SCOPE, filename=filename, data=data, document_id="doc"
    )

    assert (result.outcome, result.chunks > 100) == ("indexed", True), kind
    store = stores.scoped(SCOPE)
    assert store.count("doc") == result.chunks
    deepest = long_headings_text(long_headings(1024 * 1024))
    for chunk in store.neighbors("doc", 50, before=2, after=2):
        path = chunk.metadata.heading_path
        assert sum(map(len, path)) <= MAX_HEADING_PATH_CHARS  # short, whatever the headings
        assert path[0] == "…" and len(path) >= 3  # the outer headings give way ...
        assert deepest.startswith(path[-1].rstrip("…"))  # ... to the nearest, kept first


def long_headings_text(data: bytes) -> str:
    """The deepest heading's text in :func:`long_headings`' Markdown or HTML."""
    text = data.decode()
    start = text.index("###### ") + 7 if "######" in text else text.index("<h6>") + 4
    return text[start:]


def test_given_chunks_over_the_documents_budget_when_ingested_then_failed_naming_the_file(
    both_stores: tuple[str, VectorStoreProvider], tmp_path: Path
) -> None:
    kind, stores = both_stores
    ingest = service(stores, tmp_path, IngestSettings(max_chunk_bytes=256 * 1024))

    with pytest.raises(DocumentTooLarge) as caught:
        ingest.ingest(SCOPE, filename="headings.md", data=long_headings(1024 * 1024), document_id="doc")

    assert "'headings.md'" in caught.value.message and "262,144 bytes" in caught.value.message
    record = ingest._documents.get("acme", "handbook", "doc")
    assert record is not None
    assert (record.status, record.error_code) == ("failed", "document_too_large"), kind
    assert "headings.md" in record.error_message
    assert stores.scoped(SCOPE).count("doc") == 0
