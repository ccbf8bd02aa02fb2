"""Issue 29 #1: a metadata sidecar and its document racing, at exact interleavings (workers parked
at checkpoints), on the SQLite store and the OpenSearch node. S3 orders events per key only, so the
sidecar's event cannot be ordered against its document's by sequencer: whichever sync runs last
reads both as S3 serves them, and a slower worker holding an older reading loses at the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.ports import VectorStoreProvider
from tests.integration.test_ingest_races import DOC, KEY, World, only, version

pytestmark = pytest.mark.integration
SIDECAR = KEY + ".metadata.json"


@pytest.fixture
def world(both_stores: tuple[str, VectorStoreProvider], tmp_path: Path) -> World:
    return World(both_stores[1], tmp_path)


def labels(world: World) -> set[tuple[str, tuple[str, ...]]]:
    """Every served chunk's (attributes, readers), as comparable text."""
    chunks = world.store.neighbors(DOC, 0, before=0, after=1000)
    return {(json.dumps(c.metadata.attributes, sort_keys=True), c.metadata.readers) for c in chunks}


def sidecar(year: int, *groups: str) -> bytes:
    return json.dumps({"metadataAttributes": {"year": year}, "access": {"groups": list(groups)}}).encode()


def test_a_sidecar_written_while_its_document_is_indexed_wins_over_the_older_reading(world: World) -> None:
    slow = world.workers.start(world.service.handle_notification, world.bucket.upload(KEY, version("one", 4)))
    world.workers.step(slow)  # claimed
    world.workers.step(slow)  # read the object
    world.workers.step(slow)  # read its sidecar (none yet): parked before embedding
    assert slow.at == "embed_documents"
    assert world.run(world.bucket.upload(SIDECAR, sidecar(2024, "hr"))) == "ok"  # overtakes the slow one
    assert world.workers.finish(slow) == "failed:superseded"
    assert world.run(slow.message) == "ok"  # its redelivery is stale: the labels stay
    only(world, "one", 4)
    assert labels(world) == {('{"year": 2024}', ("g:hr",))}
    record = world.documents.get("acme", "docs", DOC)
    assert record is not None and record.attributes == {"year": 2024.0} and record.readers == ("g:hr",)


def test_a_sidecar_replaced_while_an_older_sidecar_event_runs_ends_on_the_newest(world: World) -> None:
    assert world.run(world.bucket.upload(KEY, version("one", 4))) == "ok"
    first = world.bucket.upload(SIDECAR, sidecar(2023, "a"))
    slow = world.workers.start(world.service.handle_notification, first)
    world.workers.step(slow)  # claimed (a local write), parked before reading the object
    world.workers.step(slow)  # read the object: parked before reading the sidecar
    assert slow.at == "get"
    world.bucket.upload(SIDECAR, sidecar(2025, "b"))  # replaced before the slow event reads it
    assert world.workers.finish(slow) == "ok"  # it reads the current sidecar, not the one it announced
    assert labels(world) == {('{"year": 2025}', ("g:b",))}
    assert world.run(first) == "ok"  # the older sidecar's event again: still the current sidecar
    assert labels(world) == {('{"year": 2025}', ("g:b",))}
    only(world, "one", 4)


def test_a_document_deleted_while_its_sidecar_event_runs_is_removed_not_resurrected(world: World) -> None:
    assert world.run(world.bucket.upload(KEY, version("one", 4))) == "ok"
    slow = world.workers.start(world.service.handle_notification, world.bucket.upload(SIDECAR, sidecar(1)))
    world.workers.step(slow)  # claimed (a local write), parked before reading the object
    removal = world.bucket.remove(KEY)
    assert world.workers.finish(slow) == "ok"  # S3 serves nothing under the key: the document goes
    assert world.texts() == []
    assert world.run(removal) == "ok"
    assert world.texts() == [] and world.store.count(DOC) == 0
    record = world.documents.get("acme", "docs", DOC)
    assert record is not None and record.status == "deleted"
