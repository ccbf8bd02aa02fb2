"""Ingestion fits the worker's clock: no accepted document outlives the invocation that runs it.

The embedder is slow on an injected clock (each text it embeds moves the clock on; nothing sleeps):
a document whose embedding cannot fit one run fails with the estimate before it embeds (or at the
first batch that shows it), one that only lacks the time *left* is retried with the served version
kept, and the CLI (no worker deadline) indexes whatever its settings allow.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from ragline import errors
from ragline.adapters.embedded.documents import SqliteDocumentRegistry
from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.embedded.tenants import SqliteTenantRegistry
from ragline.domain.models import TenantScope
from ragline.services.embedding_run import PROBE_BATCH, WorkerDeadline
from ragline.services.ingest import IngestService, IngestSettings
from ragline.services.namespaces import new_namespace
from tests.support.fakes import BowEmbedder

pytestmark = pytest.mark.unit
SCOPE = TenantScope(tenant_id="acme", namespace_id="docs")
SETTINGS = IngestSettings(chunk_tokens=8, chunk_overlap_tokens=0)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class SlowEmbedder(BowEmbedder):
    """Embeds ``texts_per_second`` (changeable mid-document) on ``clock``; counts what it embedded."""

    def __init__(self, clock: FakeClock, texts_per_second: float) -> None:
        self.clock = clock
        self.texts_per_second = texts_per_second
        self.embedded = 0
        self.after_first_call: float | None = None

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.clock.now += len(texts) / self.texts_per_second
        self.embedded += len(texts)
        if self.after_first_call is not None:
            self.texts_per_second = self.after_first_call
        return super().embed_documents(texts)


def sentences(n: int, tag: str = "") -> bytes:
    """``n`` distinct sentences of 8 words: one chunk each at ``chunk_tokens=8``."""
    return "".join(f"Sentence {i} {tag} says seven more plain words. " for i in range(n)).encode()


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    registry = SqliteTenantRegistry(tmp_path / "t.sqlite")
    registry.create_namespace(new_namespace("acme", "docs"))
    clock = FakeClock()
    embedder = SlowEmbedder(clock, texts_per_second=10)
    documents = SqliteDocumentRegistry(tmp_path / "d.sqlite")
    stores = SqliteVectorStoreProvider(tmp_path / "s.sqlite", dimension=embedder.dimension)
    service = IngestService(
        registry=registry,
        documents=documents,
        stores=stores,
        embedder=embedder,
        tokenizer=BowEmbedder(),
        settings=SETTINGS,
    )
    return {
        "service": service,
        "clock": clock,
        "embedder": embedder,
        "documents": documents,
        "stores": stores,
    }


def worker(world: dict[str, Any], seconds: float) -> IngestService:
    service: IngestService = world["service"]
    return service.within(WorkerDeadline(seconds, clock=world["clock"]))


def test_given_a_cold_worker_when_a_document_cannot_embed_in_one_run_then_it_fails_after_a_probe(
    world: dict[str, Any],
) -> None:
    # Given a 300 s invocation and an embedder at 10 texts/s: 4,000 texts need 400 s
    with pytest.raises(errors.EmbeddingTimeExceeded) as caught:
        worker(world, 300).ingest(SCOPE, filename="long.txt", data=sentences(4000), document_id="long")

    # Then only the probe batch was embedded, and the reason gives the estimate and the rate
    assert world["embedder"].embedded == PROBE_BATCH
    message = caught.value.message
    assert "'long.txt'" in message and "4,000 texts" in message and "10 texts/s" in message
    assert "290 s" in message  # the run's 300 s less the reserve for writing and publishing
    record = world["documents"].get("acme", "docs", "long")
    assert (record.status, record.error_code) == ("failed", "embedding_time_exceeded")
    assert world["stores"].scoped(SCOPE).count("long") == 0  # the probe's chunks were discarded


def test_given_a_warm_worker_when_a_document_cannot_embed_in_one_run_then_it_fails_before_embedding(
    world: dict[str, Any],
) -> None:
    worker(world, 300).ingest(SCOPE, filename="short.txt", data=sentences(50), document_id="short")
    embedded_before = world["embedder"].embedded

    with pytest.raises(errors.EmbeddingTimeExceeded):
        worker(world, 300).ingest(SCOPE, filename="long.txt", data=sentences(4000), document_id="long")

    assert world["embedder"].embedded == embedded_before  # the measured rate refused it up front


def test_given_too_little_time_left_for_a_document_that_fits_a_run_then_retried_keeping_the_served_version(
    world: dict[str, Any],
) -> None:
    # Given a served first version, and a worker that has measured its rate
    worker(world, 300).ingest(SCOPE, filename="guide.txt", data=sentences(40, "v1"), document_id="guide")
    run = worker(world, 300)
    world["clock"].now += 250  # 50 s left: 40 s after the reserve, 1,000 texts need 100 s

    with pytest.raises(errors.WorkerOutOfTime):
        run.ingest(SCOPE, filename="guide.txt", data=sentences(1000, "v2"), document_id="guide")

    record = world["documents"].get("acme", "docs", "guide")
    assert (record.status, record.error_code, record.chunk_count) == ("failed", "worker_out_of_time", 40)
    assert world["stores"].scoped(SCOPE).count("guide") == 40  # v1 is still what readers get
    # When the message comes back to a fresh invocation, then it is indexed
    again = worker(world, 300).ingest(
        SCOPE, filename="guide.txt", data=sentences(1000, "v2"), document_id="guide"
    )
    assert (again.outcome, again.chunks) == ("indexed", 1000)


def test_given_an_embedder_that_slows_down_when_embedding_then_it_stops_at_a_batch_within_the_run(
    world: dict[str, Any],
) -> None:
    # Given a probe at 100 texts/s, then 10 texts/s: 1,532 texts look like 15 s, then like 145 s
    embedder = world["embedder"]
    embedder.texts_per_second, embedder.after_first_call = 100, 10
    deadline = WorkerDeadline(120, clock=world["clock"])

    with pytest.raises(errors.EmbeddingTimeExceeded):
        world["service"].within(deadline).ingest(
            SCOPE, filename="slowing.txt", data=sentences(PROBE_BATCH + 1500), document_id="slowing"
        )

    assert embedder.embedded == PROBE_BATCH + 500  # the probe and one batch; then the check stopped it
    assert deadline.remaining() > 0  # the document did not outlive its worker
    assert world["stores"].scoped(SCOPE).count("slowing") == 0  # nothing of it is served


def test_given_no_worker_deadline_when_the_cli_ingests_a_long_document_then_it_is_indexed(
    world: dict[str, Any],
) -> None:
    result = world["service"].ingest(SCOPE, filename="long.txt", data=sentences(4000), document_id="long")

    assert (result.outcome, result.chunks) == ("indexed", 4000)


def test_given_less_than_the_start_margin_left_when_a_message_comes_then_it_is_not_started(
    world: dict[str, Any],
) -> None:
    with pytest.raises(errors.WorkerOutOfTime, match="not started"):
        worker(world, SETTINGS.min_start_seconds - 1)

    assert worker(world, SETTINGS.min_start_seconds) is not world["service"]


class SlowTokenizer(BowEmbedder):
    """Counting takes 20 s on the injected clock."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock

    def count_many(self, texts: Sequence[str]) -> list[int]:
        self.clock.now += 20
        return super().count_many(texts)


def test_given_a_worker_with_less_time_than_the_parse_budget_when_parsing_outlasts_it_then_retried(
    world: dict[str, Any], tmp_path: Path
) -> None:
    service = IngestService(
        registry=world["service"]._registry,
        documents=world["documents"],
        stores=world["stores"],
        embedder=world["embedder"],
        tokenizer=SlowTokenizer(world["clock"]),
        settings=SETTINGS,
    )
    # Given 25 s left (15 s after the reserve, under the 120 s parse budget) and a 20 s chunking
    late = service.within(WorkerDeadline(25, clock=world["clock"]))

    with pytest.raises(errors.WorkerOutOfTime, match="ran out of time while parsing"):
        late.ingest(SCOPE, filename="notes.txt", data=sentences(100), document_id="notes")

    record = world["documents"].get("acme", "docs", "notes")
    assert (record.status, record.error_code) == ("failed", "worker_out_of_time")  # retried, not refused
