""":class:`~ragline.ports.ObjectStore` over one S3 bucket (the tenants' documents bucket)."""

from __future__ import annotations

from typing import Any

from ragline import errors
from ragline.adapters.boto import LazyClient

S3Client = Any  # boto3's client is untyped here; the adapter is the only place it appears

_THROTTLED = {"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded"}
_MISSING = {"NoSuchKey", "404", "NotFound", "NoSuchVersion"}
_PERMISSIONS = {
    "get": "s3:GetObject and s3:GetObjectVersion on the bucket's objects, and s3:ListBucket on the bucket"
    " (without it S3 answers a missing key with 403, not 404)",
    "put": "s3:PutObject on the bucket's objects",
    "delete": "s3:DeleteObject on the bucket's objects",
    "list": "s3:ListBucket on the bucket",
    "purge": "s3:ListBucketVersions on the bucket and s3:DeleteObjectVersion on its objects",
}
"""What the caller's role needs for each action: what a 403 tells the operator to check."""


def translate(exc: Exception, action: str, key: str, bucket: str = "") -> errors.RaglineError:
    """botocore errors → Ragline errors, by error code only.

    A refusal (403) is the deployment's fault, never the object's: a :class:`ConfigurationError`
    naming the permissions the action needs — a missing key is one of its causes, so a 403 is never
    taken for "not found" (the message fails and is retried, visibly, rather than deleting a
    document S3 may still hold)."""
    from botocore.exceptions import ClientError, ConnectionError, EndpointConnectionError

    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
        if code in _MISSING:
            return errors.NotFound(f"no object {key!r}", key=key)
        if status == 403 or code in ("AccessDenied", "403", "Forbidden"):
            where = f"s3://{bucket}/{key}" if bucket else repr(key)
            needs = _PERMISSIONS.get(action, "access to the bucket")
            return errors.ConfigurationError(
                f"S3 denied {action} of {where} ({code or status}): the role needs {needs}",
                key=key, code=code, action=action,
            )  # fmt: skip
        if code in _THROTTLED or status == 503:
            return errors.Throttled(f"S3 throttled {action}", key=key)
        if status >= 500:
            return errors.DependencyUnavailable(f"S3 failed during {action}", key=key, status=status)
        return errors.DependencyFailed(f"S3 refused {action}", key=key, code=code)
    if isinstance(exc, (EndpointConnectionError, ConnectionError)):
        return errors.DependencyUnavailable(f"S3 unreachable during {action}", key=key)
    raise exc


def _refuse_over(key: str, size: int, limit: int) -> None:
    if size > limit:
        raise errors.DocumentTooLarge(
            f"{key} is {size} bytes; the limit is {limit}", filename=key, size=size, limit=limit
        )


def _folder(prefix: str) -> str:
    """The prefix names a folder: ``t/ns`` means ``t/ns/…``, never a sibling ``t/ns2/…``."""
    return prefix if not prefix or prefix.endswith("/") else prefix + "/"


class S3ObjectStore:
    def __init__(self, bucket: str, *, client: S3Client | None = None) -> None:
        self.bucket = bucket
        self._client = LazyClient("s3", client=client)

    @property
    def client(self) -> S3Client:
        client: S3Client = self._client()
        return client

    def get(self, key: str, *, version_id: str = "", limit: int | None = None) -> bytes:
        """One ``GetObject`` (of ``version_id`` when given): its Content-Length is checked against
        ``limit`` before the body is streamed, and the body is read to ``limit`` + 1 bytes at most."""
        request = {"Bucket": self.bucket, "Key": key} | ({"VersionId": version_id} if version_id else {})
        try:
            response = self.client.get_object(**request)
            body = response["Body"]
            try:
                if limit is None:
                    data: bytes = body.read()
                else:
                    _refuse_over(key, int(response.get("ContentLength", 0)), limit)
                    data = body.read(limit + 1)
                    _refuse_over(key, len(data), limit)
            finally:
                body.close()  # an unread body would keep its connection busy
        except errors.RaglineError:
            raise
        except Exception as exc:
            raise translate(exc, "get", key, self.bucket) from exc
        return data

    def put(self, key: str, data: bytes) -> None:
        try:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=data)
        except Exception as exc:
            raise translate(exc, "put", key, self.bucket) from exc

    def delete(self, key: str) -> None:
        try:
            self.client.delete_object(Bucket=self.bucket, Key=key)
        except Exception as exc:
            raise translate(exc, "delete", key, self.bucket) from exc

    def purge(self, prefix: str) -> int:
        """Every version and delete marker under the folder, so a versioned bucket keeps nothing."""
        if not prefix.strip("/"):
            raise errors.InvalidRequest("refusing to purge the whole bucket")
        folder = _folder(prefix)
        removed = 0
        try:
            for page in self.client.get_paginator("list_object_versions").paginate(
                Bucket=self.bucket, Prefix=folder
            ):
                entries = [*page.get("Versions", []), *page.get("DeleteMarkers", [])]
                batch = [{"Key": e["Key"], "VersionId": e["VersionId"]} for e in entries]
                for i in range(0, len(batch), 1000):  # DeleteObjects takes 1,000 keys at most
                    resp = self.client.delete_objects(
                        Bucket=self.bucket, Delete={"Objects": batch[i : i + 1000], "Quiet": True}
                    )
                    if resp.get("Errors"):
                        first = resp["Errors"][0]
                        raise errors.DependencyFailed(
                            "S3 refused to delete some versions", key=first.get("Key", ""),
                            code=first.get("Code", ""), failed=len(resp["Errors"]),
                        )  # fmt: skip
                    removed += len(batch[i : i + 1000])
        except errors.RaglineError:
            raise
        except Exception as exc:
            raise translate(exc, "purge", prefix, self.bucket) from exc
        return removed

    def list(self, prefix: str) -> list[str]:
        folder = _folder(prefix)
        keys: list[str] = []
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=folder
            ):
                keys.extend(o["Key"] for o in page.get("Contents", []))
        except Exception as exc:
            raise translate(exc, "list", prefix, self.bucket) from exc
        return sorted(keys)
