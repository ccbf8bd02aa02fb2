"""Issue 12 #5: each indexed document version is recorded once in the ledger and shown in the report.

On the embedded wiring (the real SQLite ledger, document registry and store); crashes are injected by
wrapping a real adapter, not by mocks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.domain.billing import current_period
from ragline.domain.models import IngestUsage, RunUsage, TenantScope
from ragline.services.authentication import Principal
from ragline.services.ingest import IngestService, IngestSettings, ObjectEvent
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.serving import acme_docs

pytestmark = pytest.mark.unit
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
KEY = "acme/docs/guide.md"
FIRST = b"# Guide\n\nPrime the pump. Open the valve slowly."
SECOND = b"# Guide\n\nPrime the pump. Open the valve slowly. Close it when the tank is full."


@pytest.fixture
def c(tmp_path: Path) -> Container:
    return acme_docs(tmp_path)


def event(seq: str) -> ObjectEvent:
    return ObjectEvent(scope=SCOPE, key=KEY, path="guide.md", sequencer=seq, size=10)


def ingestion(c: Container) -> IngestUsage:
    return c.ledger.period_ingestion("acme", current_period())


def test_an_indexed_document_shows_in_the_usage_report_and_is_not_a_run(c: Container) -> None:
    c.objects.put(KEY, FIRST)
    result = c.ingest.sync_object(event("0A"))
    assert result.outcome == "indexed" and result.usage.embedded_tokens > 0

    report = c.metering.usage_report(Principal.operator("acme"))
    assert report.ingestion.model_dump(by_alias=False) == {
        "documents": 1,
        "chunks": result.chunks,
        "pages": result.pages,
        "embedded_tokens": result.usage.embedded_tokens,
    }
    assert report.runs == 0 and report.usage.model_dump() == {k: 0 for k in report.usage.model_dump()}
    body = report.model_dump(mode="json")
    assert body["ingestion"]["embeddedTokens"] == result.usage.embedded_tokens


def test_a_redelivered_event_adds_nothing_and_a_new_version_is_added(c: Container) -> None:
    c.objects.put(KEY, FIRST)
    first = c.ingest.sync_object(event("0A"))
    assert c.ingest.sync_object(event("0A")).outcome == "duplicate"
    assert ingestion(c).documents == 1

    c.objects.put(KEY, FIRST)  # an unchanged re-upload: a version of its own, nothing spent on it
    again = c.ingest.sync_object(event("0B"))
    assert again.outcome == "unchanged" and again.usage == RunUsage()
    c.objects.put(KEY, SECOND)
    second = c.ingest.sync_object(event("0C"))
    assert second.outcome == "indexed" and second.usage.embedded_tokens > 0

    assert ingestion(c) == IngestUsage(
        documents=2,
        chunks=first.chunks + second.chunks,
        pages=first.pages + second.pages,
        embedded_tokens=first.usage.embedded_tokens + second.usage.embedded_tokens,
    )
    assert c.ledger.period_runs("acme", current_period()) == 0


def test_text_added_through_the_api_is_metered_and_a_delete_adds_nothing(c: Container) -> None:
    result = c.ingest.ingest(SCOPE, filename="notes.md", data=FIRST)
    c.ingest.remove(SCOPE, "notes.md")
    assert ingestion(c) == IngestUsage(
        documents=1, chunks=result.chunks, pages=result.pages, embedded_tokens=result.usage.embedded_tokens
    )


class CompleteFailsOnce:
    """The registry, crashing once between the publish and the completion of a version."""

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


class LedgerFailsOnce:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.failed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def record_ingest(self, tenant_id: str, entry_id: str, usage: IngestUsage) -> bool:
        if not self.failed:
            self.failed = True
            raise errors.Throttled("the ledger is busy")
        return bool(self.inner.record_ingest(tenant_id, entry_id, usage))


def service(c: Container, *, documents: Any = None, ledger: Any = None) -> IngestService:
    return IngestService(
        registry=c.registry,
        documents=documents or c.documents,
        stores=c.stores,
        embedder=BowEmbedder(),
        tokenizer=BowEmbedder(),
        settings=IngestSettings(),
        objects=c.objects,
        ledger=ledger or c.ledger,
    )


def test_a_crash_after_the_record_and_its_redelivery_record_the_version_once(c: Container) -> None:
    c.objects.put(KEY, FIRST)
    crashing = service(c, documents=CompleteFailsOnce(c.documents))
    with pytest.raises(errors.DependencyUnavailable):
        crashing.sync_object(event("0A"))
    assert ingestion(c).documents == 1  # recorded before the publish

    redelivered = crashing.sync_object(event("0A"))  # SQS redelivers: a new claim of the same event
    assert redelivered.outcome in ("indexed", "unchanged")
    assert c.documents.get("acme", "docs", "guide.md").status == "ready"
    assert redelivered.usage.embedded_tokens == 0  # it reused the vectors the first attempt published
    recorded = ingestion(c)
    assert (recorded.documents, recorded.chunks, recorded.pages) == (1, redelivered.chunks, redelivered.pages)
    assert recorded.embedded_tokens > 0  # what the first attempt embedded


def test_a_ledger_failure_keeps_the_served_version_and_the_redelivery_records_it(c: Container) -> None:
    c.objects.put(KEY, FIRST)
    first = c.ingest.sync_object(event("0A"))
    c.objects.put(KEY, SECOND)
    flaky = service(c, ledger=LedgerFailsOnce(c.ledger))
    with pytest.raises(errors.Throttled):
        flaky.sync_object(event("0B"))
    record = c.documents.get("acme", "docs", "guide.md")
    assert record.status == "failed" and record.content_hash == first.content_hash  # nothing published
    assert c.stores.scoped(SCOPE).count("guide.md") == first.chunks
    assert ingestion(c).documents == 1

    second = flaky.sync_object(event("0B"))
    assert second.outcome == "indexed"
    assert ingestion(c).documents == 2
    assert ingestion(c).embedded_tokens == first.usage.embedded_tokens + second.usage.embedded_tokens


def test_ingestion_is_recorded_at_a_used_up_run_quota(c: Container) -> None:
    c.ledger.commit("acme", "run-1", RunUsage(retrievals=1), 1)
    c.ingest.ingest(SCOPE, filename="notes.md", data=FIRST)
    assert ingestion(c).documents == 1
