"""A loopback proxy in front of the store (the local OpenSearch node, or the AOSS proxy in front of it)
that lets only requests SigV4-signed for its service through (403 otherwise, as an IAM-protected domain
or collection does) and records who called what, by the access key id of the signature (the rehearsal
gives each function its own)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import NamedTuple
from urllib.parse import urlsplit

from tests.rehearsal.loopback import Answer, LoopbackProxy, Request
from tests.support import faiss_stand_in


class SignedCall(NamedTuple):
    key: str
    """The access key id of the signature: which function called."""
    method: str
    path: str
    body: bytes | None
    """What an index-less request (``_bulk``, ``_msearch``, ``_mget``) names its indexes in."""


@dataclass
class SignedProxy(LoopbackProxy):
    upstream: str
    service: str = "es"
    """The service the signature must be scoped to: ``es`` for a domain, ``aoss`` for a collection."""
    calls: list[SignedCall] = field(default_factory=list)
    """Every request let through."""
    refused: list[tuple[str, str]] = field(default_factory=list)

    def answer(self, request: Request) -> Answer:
        scope = rf"^AWS4-HMAC-SHA256 Credential=([^/]+)/\d{{8}}/[^/]+/{re.escape(self.service)}/aws4_request,"
        match = re.match(scope, request.headers.get("authorization", ""))
        if match is None or not request.headers.get("x-amz-date"):
            self.refused.append((request.method, request.path))
            unsigned = f'{{"message":"request is not signed with SigV4 for {self.service}"}}'.encode()
            return Answer(403, [("Content-Type", "application/json")], unsigned)
        self.calls.append(SignedCall(match.group(1), request.method, request.path, request.body))
        if self.service == "es":
            request = _faiss_as_lucene(request)
        return self.forward(request, drop=("authorization",))


def _faiss_as_lucene(request: Request) -> Request:
    """An index creation (``PUT /<index>``) with faiss fields, as the local node can take it (see
    :mod:`tests.support.faiss_stand_in`): the template deploys faiss on a domain."""
    path = urlsplit(request.path).path.strip("/")
    if request.method != "PUT" or not request.body or "/" in path or path.startswith("_"):
        return request
    spec = json.loads(request.body)
    if not faiss_stand_in.as_lucene(spec):
        return request
    body = json.dumps(spec).encode()
    return request._replace(body=body, headers={**request.headers, "content-length": str(len(body))})
