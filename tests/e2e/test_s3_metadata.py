"""Issue 29 #1/#3: an S3 document's metadata and ACL come from its sidecar ``<key>.metadata.json``.

Through moto (real notifications, DynamoDB records) and the real OpenSearch node. S3 orders events
per key only, so a sidecar's event and its document's may arrive in either order, twice, or after
the sidecar is gone: every order ends with the document served with the sidecar S3 holds now. A
sidecar is never a document; a bad one fails the document with the reason and keeps what was served.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline.domain.api import DocumentLabels
from ragline.domain.models import KeywordQuery
from ragline.services.authentication import Principal
from ragline.services.documents import DocumentService
from tests.e2e.test_s3_ingestion import Handler, World, key_of

pytestmark = [pytest.mark.e2e, pytest.mark.opensearch]

PUMP = b"# Pump\n\nPrime the pump with clean water. " + b"Check every seal before the season. " * 30
SIDECAR = {
    "metadataAttributes": {
        "year": 2024,
        "team": {"value": {"type": "STRING", "stringValue": "ops"}},
        "tags": {"value": {"type": "STRING_LIST", "stringListValue": ["pumps", "safety"]}},
        "draft": False,
    },
    "access": {"users": ["ann"], "groups": ["ops"]},
}
LABELS = {"year": 2024.0, "team": "ops", "tags": ["pumps", "safety"], "draft": False}


@pytest.fixture
def world(
    moto_endpoint: str, moto_aws_env: dict[str, str], opensearch_url: str, tmp_path: Path
) -> Iterator[World]:
    w = World(moto_endpoint, opensearch_url, tmp_path)
    yield w
    w.stores.drop()


@pytest.fixture
def handler(world: World) -> Handler:
    return Handler(world)


def put_sidecar(world: World, body: Any, path: str = "pump.md") -> None:
    world.put(f"{path}.metadata.json", body if isinstance(body, bytes) else json.dumps(body).encode())


def served(world: World, doc: str = "pump.md") -> list[Any]:
    return world.store().neighbors(doc, 0, before=0, after=1000)


def assert_served_with(world: World, attributes: dict[str, Any], readers: tuple[str, ...]) -> None:
    record = world.documents.get("acme", "docs", "pump.md")
    assert record is not None and record.status == "ready", record
    assert (record.attributes, record.readers) == (attributes, readers)
    chunks = served(world)
    assert chunks and len(chunks) == record.chunk_count
    assert all((c.metadata.attributes, c.metadata.readers) == (attributes, readers) for c in chunks)


def test_a_sidecar_before_its_document_labels_it_and_is_never_a_document(
    world: World, handler: Handler
) -> None:
    put_sidecar(world, SIDECAR)
    world.put("pump.md", PUMP)
    sidecar, document = sorted(world.receive(2), key=lambda m: not key_of(m).endswith(".json"))
    assert handler([sidecar]) == {"batchItemFailures": []}  # no document yet: its own event reads it
    assert world.documents.get("acme", "docs", "pump.md.metadata.json") is None
    queued = world.documents.get("acme", "docs", "pump.md")  # issue 37 #6: it keeps the sidecar's event
    assert queued is not None and queued.status == "queued" and queued.chunk_count == 0
    assert handler([document]) == {"batchItemFailures": []}
    assert_served_with(world, LABELS, ("g:ops", "u:ann"))
    assert world.documents.get("acme", "docs", "pump.md.metadata.json") is None
    assert world.store().count("pump.md.metadata.json") == 0
    indexed = world.documents.get("acme", "docs", "pump.md")
    assert handler([sidecar]) == {"batchItemFailures": []}  # redelivered: the same labels, no new version
    assert_served_with(world, LABELS, ("g:ops", "u:ann"))
    assert world.documents.get("acme", "docs", "pump.md") == indexed
    schema = world.registry.get_namespace("acme", "docs").settings.metadata_schema
    assert schema == {"year": "number", "team": "string", "tags": "string_list", "draft": "boolean"}


def test_a_sidecar_after_its_document_relabels_it_and_its_deletion_clears_the_labels(
    world: World, handler: Handler
) -> None:
    world.put("pump.md", PUMP)
    [document] = world.receive(1)
    assert handler([document]) == {"batchItemFailures": []}
    assert_served_with(world, {}, ())
    first = world.documents.get("acme", "docs", "pump.md")
    assert first is not None
    texts = sorted(c.text for c in served(world))

    put_sidecar(world, SIDECAR)
    [sidecar] = world.receive(1)
    assert handler([sidecar]) == {"batchItemFailures": []}
    assert_served_with(world, LABELS, ("g:ops", "u:ann"))
    assert sorted(c.text for c in served(world)) == texts
    assert handler([document]) == {"batchItemFailures": []}  # the document's event again: no change
    assert_served_with(world, LABELS, ("g:ops", "u:ann"))

    key = "acme/docs/pump.md.metadata.json"
    for v in world.s3.list_object_versions(Bucket=world.bucket, Prefix=key)["Versions"]:
        world.s3.delete_object(Bucket=world.bucket, Key=key, VersionId=v["VersionId"])
    [removed] = world.receive(1)
    assert handler([removed]) == {"batchItemFailures": []}
    assert_served_with(world, {}, ())
    assert [h.chunk.document_id for h in world.store().search(KeywordQuery(text="seal"))][:1] == ["pump.md"]


def test_a_bad_sidecar_fails_the_document_with_its_reason_and_keeps_the_served_version(
    world: World, handler: Handler
) -> None:
    put_sidecar(world, SIDECAR)
    world.put("pump.md", PUMP)
    assert handler(world.receive(2)) == {"batchItemFailures": []}
    assert_served_with(world, LABELS, ("g:ops", "u:ann"))
    for bad, code, words in (
        (b"{not json", "invalid_request", "not valid JSON"),
        ({"metadataAttributes": {"year": "twenty"}}, "metadata_type_clash", "year"),
        (b'{"metadataAttributes": {"pad": "' + b"x" * 70_000 + b'"}}', "invalid_request", "64 KiB"),
        ({"metadataAttributes": {"x": {"value": {"type": "MAP"}}}}, "invalid_request", "typed value"),
        ({"metadataAttributes": {}, "access": {"users": ["a,b"]}}, "invalid_request", "user"),
    ):
        put_sidecar(world, bad)
        [event] = world.receive(1)
        assert handler([event]) == {"batchItemFailures": [{"itemIdentifier": event["MessageId"]}]}
        record = world.documents.get("acme", "docs", "pump.md")
        assert record is not None and record.status == "failed" and record.error_code == code, record
        assert words in record.error_message
        assert (record.attributes, record.readers) == (LABELS, ("g:ops", "u:ann"))
        chunks = served(world)  # the previous version, whole, with its labels
        assert chunks and all(c.metadata.attributes == LABELS for c in chunks)
    assert world.registry.get_namespace("acme", "docs").settings.metadata_schema["year"] == "number"


def test_a_users_own_file_named_like_a_sidecar_is_recorded_not_dropped(
    world: World, handler: Handler
) -> None:
    # Given a user's own "notes.md.metadata.json" in the bucket, with no "notes.md" beside it
    world.put("notes.md.metadata.json", b'{"metadataAttributes": {"year": 2024}}')
    [event] = world.receive(1)
    # When its event is handled, twice
    assert handler([event]) == {"batchItemFailures": []}
    assert handler([event]) == {"batchItemFailures": []}
    # Then nothing is indexed, and the record of the name it reserves says why
    record = world.documents.get("acme", "docs", "notes.md")
    assert record is not None and (record.status, record.error_code) == ("failed", "reserved_name")
    assert "'notes.md.metadata.json' was not indexed" in record.error_message
    assert world.store().count("notes.md") == 0 and world.store().count("notes.md.metadata.json") == 0
    assert world.documents.get("acme", "docs", "notes.md.metadata.json") is None
    # When the document it describes is uploaded, the file is its sidecar
    world.put("notes.md", PUMP)
    assert handler(world.receive(1)) == {"batchItemFailures": []}
    ready = world.documents.get("acme", "docs", "notes.md")
    assert ready is not None and (ready.status, ready.attributes) == ("ready", {"year": 2024.0})


def test_an_api_delete_of_a_labelled_document_is_announced_once_whichever_event_comes_first(
    world: World, handler: Handler
) -> None:
    """Issue 37 #5: the sidecar's removal applied first deletes the document; the object's removal
    then finds it deleted and keeps that change (moto sends no event for delete markers: S3's are
    built here, as S3 sends them)."""
    put_sidecar(world, SIDECAR)
    world.put("pump.md", PUMP)
    assert handler(world.receive(2)) == {"batchItemFailures": []}
    service = DocumentService(
        registry=world.registry,
        documents=world.documents,
        objects=world.service._objects,  # type: ignore[arg-type]  # the world's S3 store
        ingest=world.service,
    )
    assert service.delete(Principal.operator("acme"), "docs", "pump.md").status == "deleting"
    sidecar_gone = removal_event("acme/docs/pump.md.metadata.json", world.bucket, "F0")
    object_gone = removal_event("acme/docs/pump.md", world.bucket, "F1")
    for message in (sidecar_gone, object_gone, object_gone, sidecar_gone):
        assert handler([message]) == {"batchItemFailures": []}
    record = world.documents.get("acme", "docs", "pump.md")
    assert record is not None and record.status == "deleted"
    assert record.event_id == "sidecar-" + "F0".ljust(32, "0")  # one deletion, the first applied
    assert served(world) == []


def removal_event(key: str, bucket: str, sequencer: str) -> dict[str, Any]:
    """The SQS message S3 sends for a delete marker put on ``key``."""
    record = {
        "eventName": "ObjectRemoved:DeleteMarkerCreated",
        "s3": {"bucket": {"name": bucket}, "object": {"key": key, "sequencer": sequencer}},
    }
    body = json.dumps({"Records": [record]})
    return {"MessageId": f"m-{sequencer}", "ReceiptHandle": "r", "Body": body, "MD5OfBody": ""}


def test_the_api_changes_an_s3_documents_metadata_by_writing_its_sidecar(
    world: World, handler: Handler
) -> None:
    world.put("pump.md", PUMP)
    assert handler(world.receive(1)) == {"batchItemFailures": []}
    service = DocumentService(
        registry=world.registry,
        documents=world.documents,
        objects=world.service._objects,  # type: ignore[arg-type]  # the world's S3 store
        ingest=world.service,
    )
    body = DocumentLabels.model_validate({"metadata": {"year": 2025}, "access": {"groups": ["eng"]}})
    done = service.relabel(Principal.operator("acme"), "docs", "pump.md", body)
    assert done.status == "updating"
    written = world.s3.get_object(Bucket=world.bucket, Key="acme/docs/pump.md.metadata.json")["Body"].read()
    assert json.loads(written) == {
        "metadataAttributes": {"year": 2025.0},
        "access": {"users": [], "groups": ["eng"]},
    }
    [sidecar] = world.receive(1)
    assert handler([sidecar]) == {"batchItemFailures": []}
    assert_served_with(world, {"year": 2025.0}, ("g:eng",))
    assert service.delete(Principal.operator("acme"), "docs", "pump.md").status == "deleting"
    current = world.s3.list_objects_v2(Bucket=world.bucket, Prefix="acme/docs/").get("Contents", [])
    assert current == []  # the object and its sidecar (moto sends no event for their delete markers)
