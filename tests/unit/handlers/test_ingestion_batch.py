"""An ingest batch (the ingestion Lambda's SQS batch, the CLI's folder) publishes its documents together —
one ``publish_many`` — and still settles every document as it would on its own: a version refused at
the fence is discarded and fails its message alone, a store failing the publish fails every message of
the batch with the reason on each record."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.cli.ingest import run_ingest
from ragline.cli.serve import LambdaContext
from ragline.config import Settings
from ragline.domain.models import KeywordQuery, TenantScope
from ragline.ports import VectorStore, VectorStoreProvider
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.lambda_harness import load_handler

pytestmark = pytest.mark.unit
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")


class RecordingStores:
    """The real embedded stores, with every publish recorded (and ``publish_many`` failing on demand)."""

    def __init__(self, inner: VectorStoreProvider) -> None:
        self.inner = inner
        self.publishes: list[dict[str, int]] = []
        self.failing = False

    def scoped(self, scope: TenantScope, view: Any = None) -> VectorStore:
        return RecordingStore(self, self.inner.scoped(scope, view))  # type: ignore[return-value]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class RecordingStore:
    def __init__(self, stores: RecordingStores, inner: VectorStore) -> None:
        self._stores, self._inner = stores, inner

    def publish(self, document_id: str, *, generation: int) -> bool:
        return self.publish_many({document_id: generation})[document_id]

    def publish_many(self, generations: Mapping[str, int]) -> dict[str, bool]:
        self._stores.publishes.append(dict(generations))
        if self._stores.failing:
            raise errors.DependencyFailed("the store refused the publish")
        return self._inner.publish_many(generations)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def message(body: str) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "receiptHandle": "h", "body": body, "eventSource": "aws:sqs"}


def created(key: str, sequencer: str) -> str:
    record = {
        "eventName": "ObjectCreated:Put",
        "s3": {"bucket": {"name": "docs"}, "object": {"key": key, "size": 1, "sequencer": sequencer}},
    }
    return json.dumps({"Records": [record]})


@pytest.fixture
def stores(tmp_path: Path) -> RecordingStores:
    base = Container(Settings(home=tmp_path), embedder=BowEmbedder(), tokenizer=BowEmbedder())
    return RecordingStores(base.stores)


@pytest.fixture
def container(tmp_path: Path, stores: RecordingStores) -> Container:
    c = Container(Settings(home=tmp_path), embedder=BowEmbedder(), tokenizer=BowEmbedder(), stores=stores)
    c.registry.create_namespace(new_namespace("acme", "docs", default=True))
    for name in ("a", "b", "c"):
        c.objects.put(f"acme/docs/{name}.md", f"# {name}\n\nNote {name} about pump{name} priming.".encode())
    c.objects.put("acme/docs/broken.pdf", b"%PDF-1.7 this file was truncated in transit")
    return c


def handle(container: Container, batch: list[dict[str, Any]]) -> list[str]:
    result = load_handler("ingestion").lambda_handler(
        {"Records": batch}, LambdaContext(), container=container
    )
    failed = {f["itemIdentifier"] for f in result["batchItemFailures"]}
    return [str(i) for i, m in enumerate(batch) if m["messageId"] in failed]


def status(container: Container, name: str) -> str | None:
    record = container.documents.get("acme", "docs", name)
    return None if record is None else record.status


def served(container: Container, word: str) -> list[str]:
    return [h.chunk.document_id for h in container.stores.scoped(SCOPE).search(KeywordQuery(text=word))]


def test_an_sqs_batch_publishes_its_documents_once_together_and_a_failing_file_fails_alone(
    container: Container, stores: RecordingStores
) -> None:
    batch = [
        message(created(f"acme/docs/{n}", f"0{i}")) for i, n in enumerate(("a.md", "broken.pdf", "b.md"))
    ]

    assert handle(container, batch) == ["1"]

    # one publish for the good documents (the broken file settled alone: it publishes its deletion)
    assert [p for p in stores.publishes if "broken.pdf" not in p] == [{"a.md": 1, "b.md": 1}]
    assert [status(container, n) for n in ("a.md", "b.md", "broken.pdf")] == ["ready", "ready", "failed"]
    assert served(container, "pumpa") == ["a.md"] and served(container, "pumpb") == ["b.md"]


def test_a_document_refused_at_the_batch_publish_is_discarded_and_fails_its_message_alone(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given b written by the batch, a newer event for b is indexed and published by another worker
    before the batch publishes (here: while the batch reads c): b's older version is refused at the
    fence, thrown away, and only b's message fails; a and c are served, b serves the newer version."""
    other = Container(container.settings, embedder=BowEmbedder(), tokenizer=BowEmbedder())
    read = container.objects.get

    def read_then_overtake_b(key: str, **kw: Any) -> bytes:
        if key == "acme/docs/c.md":
            container.objects.put("acme/docs/b.md", b"# b\n\nNewer b about pumpnewer priming.")
            other.ingest.handle_notification(created("acme/docs/b.md", "09"))
        return read(key, **kw)

    monkeypatch.setattr(container.objects, "get", read_then_overtake_b)
    batch = [message(created(f"acme/docs/{n}.md", f"0{i}")) for i, n in enumerate("abc")]

    assert handle(container, batch) == ["1"]

    assert [status(container, n) for n in ("a.md", "b.md", "c.md")] == ["ready", "ready", "ready"]
    b = container.documents.get("acme", "docs", "b.md")
    assert b is not None and b.sequencer.startswith("09") and b.indexed_generation == b.generation
    assert served(container, "pumpnewer") == ["b.md"] and served(container, "pumpb") == []
    stored = container.stores.scoped(SCOPE).vectors("b.md")  # the older version's chunks are gone
    assert stored and all("pumpnewer" in text for text in stored)
    assert served(container, "pumpa") == ["a.md"] and served(container, "pumpc") == ["c.md"]


def test_a_store_failing_the_batch_publish_fails_every_message_and_records_the_reason(
    container: Container, stores: RecordingStores
) -> None:
    stores.failing = True
    batch = [message(created(f"acme/docs/{n}.md", f"0{i}")) for i, n in enumerate("ab")]

    assert handle(container, batch) == ["0", "1"]

    for name in ("a.md", "b.md"):
        record = container.documents.get("acme", "docs", name)
        assert record is not None and record.status == "failed" and record.error_code == "dependency_failed"
    stores.failing = False
    assert served(container, "pumpa") == []  # nothing was served: the redelivery indexes it


def test_a_document_whose_publish_fails_in_the_store_fails_its_message_alone(
    container: Container, stores: RecordingStores
) -> None:
    """The embedded file refuses b's fence write alone (a trigger aborting it): b's message comes back,
    its record failed with the reason and nothing of it served; a and c are published and ready."""
    conn = stores.inner.connection()  # type: ignore[attr-defined]
    conn.execute(
        "CREATE TRIGGER refuse_b BEFORE INSERT ON fences WHEN NEW.document_id = 'b.md'"
        " BEGIN SELECT RAISE(ABORT, 'write refused'); END"
    )
    batch = [message(created(f"acme/docs/{n}.md", f"0{i}")) for i, n in enumerate("abc")]

    assert handle(container, batch) == ["1"]

    assert stores.publishes == [{"a.md": 1, "b.md": 1, "c.md": 1}]
    assert [status(container, f"{n}.md") for n in "abc"] == ["ready", "failed", "ready"]
    b = container.documents.get("acme", "docs", "b.md")
    assert b is not None and b.error_code == "dependency_failed"
    assert served(container, "pumpa") == ["a.md"] and served(container, "pumpc") == ["c.md"]
    assert served(container, "pumpb") == []
    conn.execute("DROP TRIGGER refuse_b")
    assert handle(container, [batch[1]]) == []  # redelivered: b is indexed
    assert status(container, "b.md") == "ready" and served(container, "pumpb") == ["b.md"]


def test_a_second_event_for_a_document_in_the_same_batch_publishes_the_first_before_claiming(
    container: Container, stores: RecordingStores
) -> None:
    batch = [message(created("acme/docs/a.md", "01")), message(created("acme/docs/a.md", "02"))]

    assert handle(container, batch) == []

    assert stores.publishes == [{"a.md": 1}, {"a.md": 2}]
    record = container.documents.get("acme", "docs", "a.md")
    assert record is not None and record.status == "ready" and record.indexed_generation == 2


def test_a_folder_ingest_publishes_its_files_together(
    container: Container, stores: RecordingStores, tmp_path: Path
) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    for name in ("x", "y", "z"):
        (folder / f"{name}.md").write_text(f"# {name}\n\nFolder note {name} about valve{name}.")
    (folder / "empty.md").write_text("")

    assert run_ingest(container, "acme", "docs", [folder], create=False) == 1  # the empty file failed

    assert [p for p in stores.publishes if "empty.md" not in p] == [{"x.md": 1, "y.md": 1, "z.md": 1}]
    assert [status(container, f"{n}.md") for n in "xyz"] == ["ready"] * 3
    assert served(container, "valvey") == ["y.md"]
