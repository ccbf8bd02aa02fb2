"""boto3 clients built on first use, never at import or construction."""

from __future__ import annotations

import threading
from typing import Any


class LazyClient:
    """A boto3 client built on first call — never at import or construction — or the one injected."""

    def __init__(self, service: str, *, client: Any = None, region: str | None = None) -> None:
        self.service = service
        self.region = region
        self._client = client
        self._lock = threading.Lock()

    def __call__(self) -> Any:
        with self._lock:  # building boto3 clients concurrently from one session is not thread-safe
            if self._client is None:
                import boto3

                self._client = boto3.client(self.service, region_name=self.region)
            return self._client
