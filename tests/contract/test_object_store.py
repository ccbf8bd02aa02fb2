"""The ObjectStore contract, run against a local folder and S3 (moto server, a fresh bucket per test)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.aws.objects import S3ObjectStore
from ragline.adapters.embedded.objects import LocalObjectStore
from tests.contract.object_store_contract import HOSTILE_KEYS, ObjectStoreContract
from tests.support.moto_server import CREDENTIALS, REGION, aws_env
from tests.support.s3_reads import CountingBody, CountingClient

pytestmark = pytest.mark.contract


class TestLocalObjectStore(ObjectStoreContract):
    @pytest.fixture
    def objects(self, tmp_path: Path) -> LocalObjectStore:
        return LocalObjectStore(tmp_path / "root")


@pytest.fixture(scope="module")
def s3_client(moto_endpoint: str) -> Any:
    """One client for the module (building one costs ~0.3 s), built in moto's environment (no proxy)."""
    import boto3

    with pytest.MonkeyPatch.context() as env:
        for name, value in aws_env(moto_endpoint).items():
            env.setenv(name, value)
        return boto3.session.Session().client(
            "s3",
            endpoint_url=moto_endpoint,
            region_name=REGION,
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            aws_session_token=CREDENTIALS["AWS_SESSION_TOKEN"],
        )


@pytest.fixture
def bucket(s3_client: Any) -> Iterator[str]:
    name = f"objects-{uuid.uuid4().hex[:16]}"
    s3_client.create_bucket(Bucket=name)
    yield name
    for page in s3_client.get_paginator("list_objects_v2").paginate(Bucket=name):
        for item in page.get("Contents", []):
            s3_client.delete_object(Bucket=name, Key=item["Key"])
    s3_client.delete_bucket(Bucket=name)


class TestS3ObjectStore(ObjectStoreContract):
    @pytest.fixture
    def objects(self, s3_client: Any, bucket: str) -> S3ObjectStore:
        return S3ObjectStore(bucket, client=s3_client)


# -- local folder specifics -----------------------------------------------------------------------
def _files_outside(tmp_path: Path, root: Path) -> list[Path]:
    return [p for p in tmp_path.rglob("*") if p.is_file() and not p.is_relative_to(root)]


@pytest.mark.parametrize("key", [*HOSTILE_KEYS, "", "t//ns/a.txt", "t/./ns/a.txt", "t/ns/"])
def test_local_refuses_keys_that_are_not_one_plain_relative_path(tmp_path: Path, key: str) -> None:
    """Given a key with an empty, ``.`` or ``..`` segment, every operation refuses it; no file appears."""
    root = tmp_path / "root"
    objects = LocalObjectStore(root)
    objects.put("t/ns/a.txt", b"victim")

    for attempt in (lambda: objects.put(key, b"evil"), lambda: objects.get(key), lambda: objects.delete(key)):
        with pytest.raises(errors.InvalidRequest):
            attempt()

    assert _files_outside(tmp_path, root) == []
    assert objects.list("") == ["t/ns/a.txt"] and objects.get("t/ns/a.txt") == b"victim"


def test_local_refuses_a_symlink_out_of_the_root(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"secret")
    root.mkdir()
    os.symlink(outside, root / "link")
    objects = LocalObjectStore(root)

    with pytest.raises(errors.InvalidRequest):
        objects.get("link/secret.txt")
    with pytest.raises(errors.InvalidRequest):
        objects.put("link/planted.txt", b"x")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_local_object_and_folder_of_one_name_clash_as_a_conflict(tmp_path: Path) -> None:
    """A file cannot also be a folder: the clash is a Ragline ``Conflict``, and no temp file is left."""
    objects = LocalObjectStore(tmp_path)
    objects.put("t/ns/a", b"an object")
    objects.put("t/ns/b/c.txt", b"an object in folder b")

    with pytest.raises(errors.Conflict):
        objects.put("t/ns/a/child.txt", b"x")
    with pytest.raises(errors.Conflict):
        objects.put("t/ns/b", b"x")

    assert objects.list("t") == ["t/ns/a", "t/ns/b/c.txt"]
    assert sorted(p.name for p in (tmp_path / "t" / "ns").iterdir()) == ["a", "b"]
    objects.delete("t/ns/b")  # a folder is no object: a no-op, like a missing key
    with pytest.raises(errors.NotFound):
        objects.get("t/ns/a/child.txt")
    assert objects.get("t/ns/b/c.txt") == b"an object in folder b"


def test_local_list_of_a_root_that_does_not_exist_yet_is_empty(tmp_path: Path) -> None:
    assert LocalObjectStore(tmp_path / "not-yet").list("") == []


# -- S3 specifics ---------------------------------------------------------------------------------
def test_s3_stores_dotted_keys_verbatim(s3_client: Any, bucket: str) -> None:
    """S3 keys are opaque strings: ``..`` is no traversal there, so such keys are stored as they are."""
    objects = S3ObjectStore(bucket, client=s3_client)
    objects.put("t/ns2/../ns/a.txt", b"literal")

    assert objects.list("t/ns2") == ["t/ns2/../ns/a.txt"]
    assert objects.list("t/ns") == []


def test_s3_client_is_built_on_first_use_from_the_environment(
    moto_aws_env: dict[str, str], s3_client: Any, bucket: str
) -> None:
    objects = S3ObjectStore(bucket)  # no client, no I/O yet
    objects.put("acme/docs/a.txt", b"a")
    assert s3_client.get_object(Bucket=bucket, Key="acme/docs/a.txt")["Body"].read() == b"a"


def test_s3_missing_bucket_is_a_dependency_failure_not_a_missing_key(s3_client: Any) -> None:
    objects = S3ObjectStore(f"no-such-bucket-{uuid.uuid4().hex[:12]}", client=s3_client)

    for attempt in (lambda: objects.get("a"), lambda: objects.put("a", b"x"), lambda: objects.list("")):
        with pytest.raises(errors.DependencyFailed) as failed:
            attempt()
        assert failed.value.details["code"] == "NoSuchBucket"


def test_s3_purge_of_a_versioned_bucket_leaves_no_version_and_no_delete_marker(s3_client: Any) -> None:
    """The documents bucket is versioned: a tenant's purge must remove old versions and markers too."""
    name = f"versioned-{uuid.uuid4().hex[:16]}"
    s3_client.create_bucket(Bucket=name)
    s3_client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    objects = S3ObjectStore(name, client=s3_client)
    for i in range(3):
        objects.put("acme/docs/a.txt", f"version {i}".encode())
    objects.put("acme/docs/b.txt", b"b")
    objects.delete("acme/docs/b.txt")  # a delete marker over b's only version
    objects.put("globex/docs/a.txt", b"another tenant")

    assert objects.purge("acme") == 3 + 1 + 1

    left = s3_client.list_object_versions(Bucket=name, Prefix="acme/")
    assert left.get("Versions", []) == [] and left.get("DeleteMarkers", []) == []
    assert objects.get("globex/docs/a.txt") == b"another tenant"
    assert objects.purge("acme") == 0
    objects.purge("globex")
    s3_client.delete_bucket(Bucket=name)


# -- bounded, versioned reads (issue 24 #4) ---------------------------------------------------------
@pytest.fixture
def versioned_bucket(s3_client: Any) -> Iterator[str]:
    name = f"versioned-{uuid.uuid4().hex[:16]}"
    s3_client.create_bucket(Bucket=name)
    s3_client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    yield name
    S3ObjectStore(name, client=s3_client).purge("acme")
    s3_client.delete_bucket(Bucket=name)


def test_s3_bounded_get_refuses_from_the_content_length_without_reading_the_body(
    s3_client: Any, bucket: str
) -> None:
    """Issue 24 #4: 120 MiB were read to refuse a file; now not one byte of an object over the limit."""
    s3_client.put_object(Bucket=bucket, Key="acme/docs/big.bin", Body=b"x" * (2 * 1024 * 1024))
    client = CountingClient(s3_client)
    with pytest.raises(errors.DocumentTooLarge) as refused:
        S3ObjectStore(bucket, client=client).get("acme/docs/big.bin", limit=1024)
    assert refused.value.details["size"] == 2 * 1024 * 1024
    assert sum(client.read) == 0


def test_s3_get_of_a_version_reads_that_version_and_not_found_once_it_is_gone(
    s3_client: Any, versioned_bucket: str
) -> None:
    client = CountingClient(s3_client)
    objects = S3ObjectStore(versioned_bucket, client=client)
    first = s3_client.put_object(Bucket=versioned_bucket, Key="acme/docs/a.txt", Body=b"small")["VersionId"]
    s3_client.put_object(Bucket=versioned_bucket, Key="acme/docs/a.txt", Body=b"y" * 4096)
    assert objects.get("acme/docs/a.txt", version_id=first, limit=100) == b"small"
    assert client.requests[-1]["VersionId"] == first
    with pytest.raises(errors.DocumentTooLarge):
        objects.get("acme/docs/a.txt", limit=100)  # the current version is over the limit
    s3_client.delete_object(Bucket=versioned_bucket, Key="acme/docs/a.txt", VersionId=first)
    with pytest.raises(errors.NotFound):
        objects.get("acme/docs/a.txt", version_id=first, limit=100)


class LyingClient:
    """A GetObject whose body is longer than its declared Content-Length (a proxy, a bug)."""

    def __init__(self, data: bytes, declared: int) -> None:
        self.data, self.declared = data, declared
        self.read: list[int] = []

    def get_object(self, **request: Any) -> dict[str, Any]:
        import io

        return {"ContentLength": self.declared, "Body": CountingBody(io.BytesIO(self.data), self.read)}


def test_s3_bounded_get_never_reads_past_the_limit_whatever_the_length_says() -> None:
    client = LyingClient(b"z" * 10_000, declared=10)
    with pytest.raises(errors.DocumentTooLarge):
        S3ObjectStore("b", client=client).get("acme/docs/a.txt", limit=100)
    assert sum(client.read) == 101


def test_local_get_of_a_version_serves_the_one_file_a_folder_keeps(tmp_path: Path) -> None:
    objects = LocalObjectStore(tmp_path)
    objects.put("acme/docs/a.txt", b"abc")
    assert objects.get("acme/docs/a.txt", version_id="ignored: a folder keeps one version", limit=3) == b"abc"
