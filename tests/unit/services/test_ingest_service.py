"""The ingest service's costs and ordering on the embedded adapters."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.embedded.documents import SqliteDocumentRegistry
from ragline.adapters.embedded.objects import LocalObjectStore
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.domain.models import TenantScope
from ragline.services.ingest import IngestService, IngestSettings, ObjectEvent
from ragline.services.namespaces import new_namespace
from tests.support.fakes import BowEmbedder
from tests.support.vectors import DIM

pytestmark = pytest.mark.unit
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")


class Counting:
    """Counts calls per method on a real object (not a mock: calls go through)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return attr(*args, **kwargs)

        return counted


@pytest.fixture
def parts(tmp_path: Path) -> dict[str, Any]:
    registry = SqliteTenantRegistry(tmp_path / "t.sqlite")
    registry.create_namespace(new_namespace("acme", "docs"))
    objects = LocalObjectStore(tmp_path / "objects")
    objects.put("acme/docs/guide.md", b"# Guide\n\nPrime the pump. Open the valve slowly.")
    documents = Counting(SqliteDocumentRegistry(tmp_path / "d.sqlite"))
    embedder = Counting(BowEmbedder())
    stores = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)
    service = IngestService(
        registry=registry,
        documents=documents,
        stores=stores,
        embedder=embedder,  # type: ignore[arg-type]
        tokenizer=BowEmbedder(),
        settings=IngestSettings(),
        objects=objects,
    )
    return {
        "service": service,
        "documents": documents,
        "embedder": embedder,
        "objects": objects,
        "stores": stores,
    }


def event(seq: str) -> ObjectEvent:
    return ObjectEvent(scope=SCOPE, key="acme/docs/guide.md", path="guide.md", sequencer=seq, size=10)


def test_redelivered_event_costs_one_registry_read_and_no_embedding(parts: dict[str, Any]) -> None:
    first = parts["service"].sync_object(event("0A"))
    assert first.outcome == "indexed"
    parts["documents"].calls.clear()
    parts["embedder"].calls.clear()
    again = parts["service"].sync_object(event("0A"))
    assert again.outcome == "duplicate"
    assert parts["documents"].calls == ["get"] and parts["embedder"].calls == []


def test_new_event_with_unchanged_bytes_skips_embedding(parts: dict[str, Any]) -> None:
    parts["service"].sync_object(event("0A"))
    parts["embedder"].calls.clear()
    result = parts["service"].sync_object(event("0B"))
    assert result.outcome == "unchanged" and parts["embedder"].calls == []
    assert parts["stores"].scoped(SCOPE).count("guide.md") == result.chunks


def test_older_event_never_overwrites_a_newer_one(parts: dict[str, Any]) -> None:
    parts["service"].sync_object(event("0B"))
    parts["objects"].put("acme/docs/guide.md", b"# Guide\n\nStale text that must not win.")
    assert parts["service"].sync_object(event("0A")).outcome == "stale"
    texts = [c.text for c in parts["stores"].scoped(SCOPE).neighbors("guide.md", 0, before=0, after=50)]
    assert texts and all("Stale" not in t for t in texts)


def test_delete_then_late_create_event_is_stale(parts: dict[str, Any]) -> None:
    parts["service"].sync_object(event("0A"))
    assert parts["service"].remove(SCOPE, "guide.md", "0C").outcome == "deleted"
    assert parts["service"].sync_object(event("0B")).outcome == "stale"
    assert parts["stores"].scoped(SCOPE).count("guide.md") == 0


def test_an_object_deleted_before_its_event_is_processed_settles_as_deleted(parts: dict[str, Any]) -> None:
    """Every event syncs with what S3 serves now: a create event for a gone object removes the document."""
    parts["objects"].delete("acme/docs/guide.md")
    result = parts["service"].sync_object(event("0A"))
    assert result.outcome == "deleted"
    record = parts["documents"].inner.get("acme", "docs", "guide.md")
    assert record.status == "deleted" and record.error_code == ""
    assert parts["service"].remove(SCOPE, "guide.md", "0B").outcome == "deleted"


def test_a_document_over_the_parse_budget_fails_with_the_reason_and_serves_nothing(tmp_path: Path) -> None:
    registry = SqliteTenantRegistry(tmp_path / "t.sqlite")
    registry.create_namespace(new_namespace("acme", "docs"))
    documents = SqliteDocumentRegistry(tmp_path / "d.sqlite")
    stores = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)

    def service(seconds: float) -> IngestService:
        return IngestService(
            registry=registry,
            documents=documents,
            stores=stores,
            embedder=BowEmbedder(),
            tokenizer=BowEmbedder(),
            settings=IngestSettings(max_document_seconds=seconds),
        )

    service(120).ingest(SCOPE, filename="guide.md", data=b"# Guide\n\nThe first version.")
    with pytest.raises(errors.DocumentDeadlineExceeded):
        service(0).ingest(SCOPE, filename="guide.md", data=b"# Guide\n\nA second version.")
    record = documents.get("acme", "docs", "guide.md")
    assert record is not None and record.status == "failed"
    assert record.error_code == errors.DocumentDeadlineExceeded.code and "budget" in record.error_message
    assert stores.scoped(SCOPE).count("guide.md") == 0  # S3 no longer serves the first version


class FailsOnSecondBatch(BowEmbedder):
    """Embeds the first batch, then finds the file itself at fault (as a budget checked per batch does)."""

    def __init__(self) -> None:
        super().__init__()
        self.batches = 0

    def embed_documents(self, texts: Any) -> Any:
        self.batches += 1
        if self.batches > 1:
            raise errors.DocumentTooLarge("guide.md needs more work than its budget", filename="guide.md")
        return super().embed_documents(texts)


def test_a_version_that_fails_after_writing_a_batch_serves_none_of_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a served version, and a new one written two chunks at a time that fails after its first batch
    monkeypatch.setattr("ragline.services.ingest.WRITE_BATCH", 2)
    registry = SqliteTenantRegistry(tmp_path / "t.sqlite")
    registry.create_namespace(new_namespace("acme", "docs"))
    stores = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=DIM)

    def service(embedder: BowEmbedder) -> IngestService:
        return IngestService(
            registry=registry, documents=SqliteDocumentRegistry(tmp_path / "d.sqlite"), stores=stores,
            embedder=embedder, tokenizer=BowEmbedder(),
            settings=IngestSettings(chunk_tokens=12, chunk_overlap_tokens=0),
        )  # fmt: skip

    service(BowEmbedder()).ingest(SCOPE, filename="guide.md", data=b"# Guide\n\nThe first version.")
    second = "\n\n".join(f"# Part {i}\n\nThe second version paragraph {i} says enough." for i in range(6))
    with pytest.raises(errors.DocumentTooLarge):
        service(FailsOnSecondBatch()).ingest(SCOPE, filename="guide.md", data=second.encode())
    # Then it serves nothing: not the first version (S3 no longer serves it), not a part of the second
    store = stores.scoped(SCOPE)
    assert store.neighbors("guide.md", 0, before=0, after=100) == []
    assert store.count() == 0
