"""A loopback proxy in front of the local OpenSearch node that lets only SigV4-signed requests through
(403 otherwise, as an IAM-protected domain does) and records who called what, by the access key id of
the signature (the rehearsal gives each function its own)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tests.rehearsal.loopback import Answer, LoopbackProxy, Request

_CREDENTIAL = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^/]+)/\d{8}/[^/]+/es/aws4_request,")
_UNSIGNED = b'{"message":"request is not signed with SigV4 for es"}'


@dataclass
class SignedProxy(LoopbackProxy):
    upstream: str
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    """(access key id, method, path) of every request let through."""
    refused: list[tuple[str, str]] = field(default_factory=list)

    def answer(self, request: Request) -> Answer:
        match = _CREDENTIAL.match(request.headers.get("authorization", ""))
        if match is None or not request.headers.get("x-amz-date"):
            self.refused.append((request.method, request.path))
            return Answer(403, [("Content-Type", "application/json")], _UNSIGNED)
        self.calls.append((match.group(1), request.method, request.path))
        return self.forward(request, drop=("authorization",))
