"""S3 event notifications as SQS delivers them, parsed leniently (only the fields Ragline reads).

Real S3 also sends ``s3:TestEvent`` messages, and emulators omit some fields, so everything but the
bucket and key is optional. Keys arrive URL-encoded (``+`` for spaces): decoded with ``unquote_plus``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from urllib.parse import unquote_plus

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ragline import errors
from ragline.domain.models import TenantScope


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class S3Object(_Lenient):
    key: str
    size: int = 0
    etag: str = Field(default="", alias="eTag")
    version_id: str | None = Field(default=None, alias="versionId")
    sequencer: str = ""


class S3Bucket(_Lenient):
    name: str


class S3Entity(_Lenient):
    bucket: S3Bucket
    object: S3Object


class S3Record(_Lenient):
    event_name: str = Field(alias="eventName")
    event_time: str = Field(default="", alias="eventTime")
    s3: S3Entity

    @property
    def removed(self) -> bool:
        return self.event_name.startswith("ObjectRemoved")

    @property
    def key(self) -> str:
        return unquote_plus(self.s3.object.key)

    @property
    def sequencer(self) -> str:
        """S3's own sequencer; emulators that omit it fall back to the event time (ns, hex)."""
        if self.s3.object.sequencer:
            return self.s3.object.sequencer
        try:
            when = datetime.fromisoformat(self.event_time.replace("Z", "+00:00"))
        except ValueError as exc:
            raise errors.InvalidRequest("S3 event has neither a sequencer nor an event time") from exc
        return f"{int(when.timestamp() * 1_000_000) * 1000:X}"


class S3Notification(_Lenient):
    records: list[S3Record] = Field(default_factory=list, alias="Records")
    event: str = Field(default="", alias="Event")
    """``s3:TestEvent`` for the message S3 sends when a notification is configured."""

    @model_validator(mode="after")
    def _is_s3(self) -> S3Notification:
        if not self.records and self.event != "s3:TestEvent":
            raise ValueError("neither Records nor an s3:TestEvent")
        return self


class _SnsEnvelope(_Lenient):
    type: Literal["Notification"] = Field(alias="Type")
    message: str = Field(alias="Message")


def parse_notification(body: str) -> S3Notification:
    """An S3 notification as S3 sends it to SQS, or wrapped by SNS (a topic fanning out to the
    queue, raw delivery off). Anything else — EventBridge's ``Object Created`` shape, any other
    JSON — is refused with the reason, so the message ends in the DLQ instead of being dropped."""
    try:
        envelope = _SnsEnvelope.model_validate_json(body)
    except ValidationError:
        pass
    else:
        body = envelope.message
    try:
        return S3Notification.model_validate_json(body)
    except ValidationError as exc:
        reason = "an EventBridge event" if '"detail-type"' in body[:2000] else "not an S3 event notification"
        raise errors.InvalidRequest(
            f"{reason}: the queue takes S3 notifications, direct or through SNS",
            problems=str(exc)[:500],
        ) from exc


def split_key(key: str) -> tuple[TenantScope, str]:
    """``<tenant_id>/<namespace_id>/<path>`` → scope and path; anything else is refused."""
    parts = key.split("/", 2)
    if len(parts) != 3 or not parts[2].strip("/"):
        raise errors.InvalidRequest(f"object key {key!r} is not <tenant>/<namespace>/<path>", key=key)
    try:
        return TenantScope(tenant_id=parts[0], namespace_id=parts[1]), parts[2]
    except ValidationError as exc:
        message = f"object key {key!r} names an invalid tenant or namespace"
        raise errors.InvalidRequest(message, key=key) from exc


def object_key_of(source: str) -> str | None:
    """``s3://bucket/<key>`` → ``<key>``; None for a document that did not come from S3."""
    if not source.startswith("s3://"):
        return None
    parts = source.split("/", 3)
    return parts[3] if len(parts) == 4 and parts[3] else None
