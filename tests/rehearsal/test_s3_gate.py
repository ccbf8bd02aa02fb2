"""The rehearsal's S3 gate answers a missing key as S3 does: 404 to a role allowed ``s3:ListBucket`` on
the bucket, 403 ``AccessDenied`` to one that is not; what exists is served to both."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from tests.rehearsal.cloudformation import REGION, FunctionSpec
from tests.rehearsal.s3_gate import S3Gate

pytestmark = pytest.mark.integration
READ = {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": "arn:aws:s3:::{bucket}/*"}
LIST = {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::{bucket}"}


def role(bucket: str, *statements: dict[str, Any]) -> FunctionSpec:
    filled = [{**st, "Resource": str(st["Resource"]).format(bucket=bucket)} for st in statements]
    return FunctionSpec("IngestionFunction", "app.h", [], {}, filled, 300, 2048, "Active")


@pytest.fixture
def gated(moto_endpoint: str) -> Iterator[tuple[str, S3Gate, dict[str, Any]]]:
    """A bucket with one object, and an S3 client through the gate per role: ``reader`` may only
    get objects, ``lister`` may also list the bucket."""
    bucket = f"gate-{uuid.uuid4().hex[:8]}"
    roles = {"READER": role(bucket, READ), "LISTER": role(bucket, READ, LIST)}
    gate = S3Gate(moto_endpoint, lambda key, b: roles[key].allows("s3:ListBucket", f"arn:aws:s3:::{b}"))
    url = gate.start()
    direct = boto3.client(
        "s3", endpoint_url=moto_endpoint, region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x"
    )
    direct.create_bucket(Bucket=bucket)
    direct.put_object(Bucket=bucket, Key="acme/docs/here.txt", Body=b"here")
    clients = {
        name: boto3.session.Session().client(
            "s3", endpoint_url=url, region_name=REGION, aws_access_key_id=key, aws_secret_access_key="x"
        )
        for name, key in (("reader", "READER"), ("lister", "LISTER"))
    }
    try:
        yield bucket, gate, clients
    finally:
        gate.stop()


def error_of(call: Any) -> tuple[int, str]:
    with pytest.raises(ClientError) as caught:
        call()
    response = caught.value.response
    return response["ResponseMetadata"]["HTTPStatusCode"], str(response["Error"]["Code"])


def test_a_role_without_list_bucket_is_denied_a_missing_key(
    gated: tuple[str, S3Gate, dict[str, Any]],
) -> None:
    bucket, gate, clients = gated
    reader = clients["reader"]
    assert error_of(lambda: reader.get_object(Bucket=bucket, Key="acme/docs/gone.txt")) == (
        403,
        "AccessDenied",
    )
    assert error_of(lambda: reader.head_object(Bucket=bucket, Key="acme/docs/gone.txt"))[0] == 403
    assert [(key, method) for key, method, _ in gate.denied] == [("READER", "GET"), ("READER", "HEAD")]


def test_a_role_with_list_bucket_learns_the_key_is_missing(
    gated: tuple[str, S3Gate, dict[str, Any]],
) -> None:
    bucket, gate, clients = gated
    lister = clients["lister"]
    assert error_of(lambda: lister.get_object(Bucket=bucket, Key="acme/docs/gone.txt")) == (404, "NoSuchKey")
    assert error_of(lambda: lister.head_object(Bucket=bucket, Key="acme/docs/gone.txt"))[0] == 404
    assert not gate.denied


def test_an_existing_object_is_served_to_both(gated: tuple[str, S3Gate, dict[str, Any]]) -> None:
    bucket, gate, clients = gated
    for client in clients.values():
        assert client.get_object(Bucket=bucket, Key="acme/docs/here.txt")["Body"].read() == b"here"
    clients["reader"].delete_object(Bucket=bucket, Key="acme/docs/here.txt")  # passes through to moto
    assert error_of(lambda: clients["reader"].get_object(Bucket=bucket, Key="acme/docs/here.txt"))[0] == 403
    assert len(gate.denied) == 1
