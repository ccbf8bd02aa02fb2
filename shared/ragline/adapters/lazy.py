"""Shared plumbing of the adapters: boto3 clients built on first use, SQLite files opened alike."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
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


def open_sqlite(path: Path, schema: str, *, timeout: float = 5.0) -> sqlite3.Connection:
    """A WAL-mode connection in autocommit mode (transactions are explicit), schema applied."""
    if str(path) != ":memory:":
        path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=timeout, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(schema)
    return conn
