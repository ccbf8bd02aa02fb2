"""Every SQLite file of the embedded backend is opened alike."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_sqlite(path: Path, schema: str, *, timeout: float = 5.0) -> sqlite3.Connection:
    """A WAL-mode connection in autocommit mode (transactions are explicit), schema applied."""
    if str(path) != ":memory:":
        path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=timeout, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(schema)
    return conn
