"""What every boto3-backed adapter (the aws and bedrock backends) shares: clients built on first use,
and reading a ``ClientError``'s code and HTTP status. botocore is never imported here at import time."""

from __future__ import annotations

import threading
from typing import Any


class LazyClient:
    """A boto3 client built on first call — never at import or construction — or the one injected.

    ``config`` (keyword arguments of ``botocore.config.Config``: retries, timeouts, pool size) applies
    to the client this builds, not to an injected one.
    """

    def __init__(
        self,
        service: str,
        *,
        client: Any = None,
        region: str | None = None,
        config: dict[str, Any] | None = None,
    ) -> None:
        self.service = service
        self.region = region
        self._client = client
        self._config = config
        self._lock = threading.Lock()

    def __call__(self) -> Any:
        with self._lock:  # building boto3 clients concurrently from one session is not thread-safe
            if self._client is None:
                import boto3

                kwargs: dict[str, Any] = {"region_name": self.region}
                if self._config:
                    from botocore.config import Config

                    kwargs["config"] = Config(**self._config)
                self._client = boto3.client(self.service, **kwargs)
            return self._client


def error_code(exc: BaseException) -> str:
    """The AWS error code of a ``ClientError`` (``""`` for anything else)."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return ""
    return str((response.get("Error") or {}).get("Code") or "")


def http_status(exc: BaseException) -> int:
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return 0
    status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    return status if isinstance(status, int) else 0
