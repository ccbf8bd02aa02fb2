"""POSTing a signed webhook delivery: bounded in time and in what is read back.

Redirects are not followed (a receiver could redirect to a private address), the receiver's response
body is read to at most ``MAX_RESPONSE_BYTES`` and the whole exchange is cut at ``total_seconds``
(a receiver that trickles bytes cannot hold the delivery function): only the status matters.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ragline import errors

MAX_RESPONSE_BYTES = 64 * 1024
USER_AGENT = "Ragline-Webhooks/1"


class HttpWebhookTransport:
    def __init__(
        self, *, connect_seconds: float = 5.0, total_seconds: float = 10.0, client: Any = None
    ) -> None:
        self._connect = connect_seconds
        self._total = total_seconds
        self._client = client

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            timeout = httpx.Timeout(self._total, connect=self._connect)
            self._client = httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False)
        return self._client

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        """The receiver's HTTP status; ``DependencyUnavailable`` when it could not be reached or did
        not answer within the bound."""
        import httpx

        started = time.monotonic()
        sent = {"Content-Type": "application/json", "User-Agent": USER_AGENT, **headers}
        try:
            with self._http().stream("POST", url, content=body, headers=sent) as response:
                read = 0
                for chunk in response.iter_raw():  # as the bytes arrive (a chunk size would wait to fill it)
                    read += len(chunk)
                    if read >= MAX_RESPONSE_BYTES or time.monotonic() - started > self._total:
                        break
                return int(response.status_code)
        except httpx.HTTPError as exc:
            raise errors.DependencyUnavailable(
                "the webhook receiver could not be reached", error=type(exc).__name__
            ) from exc

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
