"""S3's refusals, translated by the object store: a 403 is the deployment's fault and says which
permission to check; only S3's own "no such key" is a missing object.

Error paths use ``botocore.stub.Stubber`` (a real client, no network) so the codes and statuses are
the exact ones S3 sends.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ragline import errors
from ragline.adapters.aws.objects import S3ObjectStore

pytestmark = pytest.mark.unit
BUCKET = "ragline-dev-123456789012-us-east-1"
KEY = "acme/docs/gone.txt"


@pytest.fixture
def stubbed() -> Iterator[tuple[S3ObjectStore, Any]]:
    import boto3
    from botocore.stub import Stubber

    client = boto3.session.Session().client(
        "s3", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with Stubber(client) as stubber:
        yield S3ObjectStore(BUCKET, client=client), stubber
        stubber.assert_no_pending_responses()


def test_a_get_refused_with_403_is_a_configuration_error_naming_list_bucket(
    stubbed: tuple[S3ObjectStore, Any],
) -> None:
    # Given S3 refuses the read, as it does for a deleted key when the role may not list the bucket
    store, stubber = stubbed
    stubber.add_client_error("get_object", service_error_code="AccessDenied", http_status_code=403)
    # When the document is read
    with pytest.raises(errors.ConfigurationError) as refused:
        store.get(KEY, limit=1024)
    # Then it is not taken for a missing object: the operator learns which permission to check
    assert not isinstance(refused.value, errors.NotFound)
    assert refused.value.code == "configuration_error"
    assert f"s3://{BUCKET}/{KEY}" in refused.value.message
    assert "s3:ListBucket" in refused.value.message and "403, not 404" in refused.value.message
    assert refused.value.details == {"key": KEY, "code": "AccessDenied", "action": "get"}


def test_a_head_style_403_without_a_code_is_refused_too(stubbed: tuple[S3ObjectStore, Any]) -> None:
    store, stubber = stubbed
    stubber.add_client_error("get_object", service_error_code="403", http_status_code=403)
    with pytest.raises(errors.ConfigurationError, match="s3:ListBucket"):
        store.get(KEY)


def test_a_missing_key_with_404_is_not_found(stubbed: tuple[S3ObjectStore, Any]) -> None:
    store, stubber = stubbed
    stubber.add_client_error("get_object", service_error_code="NoSuchKey", http_status_code=404)
    with pytest.raises(errors.NotFound):
        store.get(KEY)


def test_a_refused_delete_names_its_own_permission(stubbed: tuple[S3ObjectStore, Any]) -> None:
    store, stubber = stubbed
    stubber.add_client_error("delete_object", service_error_code="AccessDenied", http_status_code=403)
    with pytest.raises(errors.ConfigurationError, match="s3:DeleteObject") as refused:
        store.delete(KEY)
    assert "ListBucket" not in refused.value.message
