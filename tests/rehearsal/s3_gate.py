"""A loopback proxy in front of moto's S3 that answers a missing key as S3 does for the caller's role.

S3 answers a ``GetObject``/``HeadObject`` of a key that does not exist with 404 ``NoSuchKey`` only to a
caller allowed ``s3:ListBucket`` on the bucket; to anyone else it is 403 ``AccessDenied`` (it will not
reveal whether the key exists). moto answers 404 to everyone, so the functions reach S3 through this
gate (``AWS_ENDPOINT_URL_S3``), which knows each caller by the access key id of its SigV4 signature
(the rehearsal gives each function its own) and asks ``may_list(access key, bucket)`` whether its role
grants the listing. Everything else passes through unchanged.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from tests.rehearsal.loopback import Answer, LoopbackProxy, Request

_CREDENTIAL = re.compile(r"Credential=([^/]+)/")


def access_denied() -> bytes:
    """S3's own error document for a refused request."""
    request_id = uuid.uuid4().hex[:16].upper()
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
        f"<Message>Access Denied</Message><RequestId>{request_id}</RequestId>"
        f"<HostId>{request_id}</HostId></Error>"
    ).encode()


@dataclass
class S3Gate(LoopbackProxy):
    upstream: str
    may_list: Callable[[str, str], bool]
    """(access key id, bucket) → whether that caller's role allows ``s3:ListBucket`` on the bucket."""
    denied: list[tuple[str, str, str]] = field(default_factory=list)
    """(access key id, method, path) of every missing-key answer turned into 403."""
    revealed: list[tuple[str, str]] = field(default_factory=list)
    """(access key id, bucket) of every missing-key 404 a caller got by its ``s3:ListBucket``."""

    def answer(self, request: Request) -> Answer:
        answer = self.forward(request)
        if not self._hides_missing_key(request, answer):
            return answer
        return Answer(403, [("Content-Type", "application/xml")], access_denied())

    def _hides_missing_key(self, request: Request, answer: Answer) -> bool:
        """A 404 for a missing key (HEAD has no body to say so) to a caller who may not list."""
        bucket, _, key = unquote(urlsplit(request.path).path).lstrip("/").partition("/")
        if answer.status != 404 or request.method not in ("GET", "HEAD") or not key:
            return False
        if request.method == "GET" and b"<Code>NoSuchKey</Code>" not in answer.body:
            return False
        match = _CREDENTIAL.search(request.headers.get("authorization", ""))
        caller = match.group(1) if match else ""
        if self.may_list(caller, bucket):
            self.revealed.append((caller, bucket))
            return False
        self.denied.append((caller, request.method, request.path))
        return True
