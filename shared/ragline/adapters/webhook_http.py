"""POSTing a signed webhook delivery through :mod:`ragline.outbound`: to public addresses only, checked
as the connection is made (a subscribed name that later resolves to the metadata service or the VPC
is never reached), bounded in time and in what is read back.

Redirects are not followed (the status is the answer), the receiver's response body is read to at
most ``MAX_RESPONSE_BYTES`` and the whole exchange is cut at ``total_seconds`` (a receiver that trickles
bytes cannot hold the delivery function): only the status matters.
"""

from __future__ import annotations

from collections.abc import Mapping

from ragline import outbound

MAX_RESPONSE_BYTES = 64 * 1024
USER_AGENT = "Ragline-Webhooks/1"


class HttpWebhookTransport:
    def __init__(self, *, total_seconds: float = 10.0, allow_loopback: bool = False) -> None:
        self._total = total_seconds
        self._allow_loopback = allow_loopback
        """Loopback receivers (tests, ``ragline serve``'s local webhooks) only where the operator allows."""

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        """The receiver's HTTP status; ``DependencyUnavailable`` when it could not be reached or did
        not answer within the bound, ``DependencyFailed`` for a name resolving to a private address."""
        sent = {"Content-Type": "application/json", "User-Agent": USER_AGENT, **headers}
        return outbound.request(
            "POST",
            url,
            headers=sent,
            body=body,
            timeout=self._total,
            max_bytes=MAX_RESPONSE_BYTES,
            allow_loopback=self._allow_loopback,
            whole_body=False,
        ).status

    def close(self) -> None:
        """Nothing held between deliveries (each POST has its own checked connection)."""
