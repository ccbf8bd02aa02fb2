"""An Embedder that remembers document vectors in a SQLite file.

Keyed by ``(model_id, sha256(text))``, so vectors of different models (or truncations, which are
part of ``model_id``) never mix. Meant for benchmarks and evaluation runs that embed the same corpus
again and again; queries are not cached.

The file is bounded (``max_bytes``, counted in SQLite pages in use, so what is on disk): after each
store that takes it over, the least recently used vectors go until it is back under nine tenths of
the bound, and their pages are given back to the file system. On Lambda ``/tmp`` is the only
writable folder and a few hundred MB at most, shared with every document's scratch files.
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from ragline.ports import Embedder

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embedding_cache (
    model_id    TEXT    NOT NULL,
    text_sha256 BLOB    NOT NULL,
    dimension   INTEGER NOT NULL,
    vector      BLOB    NOT NULL,
    used        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (model_id, text_sha256)
) WITHOUT ROWID
"""
_LOOKUP_CHUNK = 500
"""Keys per ``IN (...)`` lookup; well under SQLite's bound-parameter limit."""
_BLOB_DTYPE = np.dtype("<f4")
DEFAULT_MAX_BYTES = 256 * 1024 * 1024
_LOW_WATER = 0.9
"""An eviction frees down to this share of the bound, so the next few stores need none."""


def text_key(text: str) -> bytes:
    """The cache key of a text: the SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).digest()


class EmbeddingCache:
    """Wraps an Embedder; ``embed_documents`` embeds only texts it has not seen for this model.

    One lookup for the whole call, one call to the inner embedder for the misses (each distinct text
    once), one transaction to store them. Vectors are stored as little-endian float32 blobs and come
    back bit-for-bit. Safe to share between threads of one process (a lock guards the connection;
    the inner embedder runs outside it); WAL mode lets other processes read meanwhile.
    """

    model_id: str
    dimension: int

    def __init__(self, inner: Embedder, path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.inner = inner
        self.max_bytes = max_bytes
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.path = Path(path)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tick = 0
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA auto_vacuum=INCREMENTAL")  # takes effect on a new file only
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(f"PRAGMA journal_size_limit={4 * 1024 * 1024}")  # the WAL shrinks back
        self._conn.execute(_SCHEMA)
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(embedding_cache)")}
        if "used" not in columns:  # a cache file from before the bound
            self._conn.execute("ALTER TABLE embedding_cache ADD COLUMN used INTEGER NOT NULL DEFAULT 0")

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """Not cached: delegated to the inner embedder."""
        return self.inner.embed_query(text)

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Shape ``(len(texts), dimension)``; cached vectors for known texts, fresh ones for the rest."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        keys = [text_key(text) for text in texts]
        found = self._lookup(keys)

        missing: dict[bytes, list[int]] = {}
        for index, key in enumerate(keys):
            vector = found.get(key)
            if vector is None:
                missing.setdefault(key, []).append(index)
            else:
                out[index] = vector
        hits = len(texts) - sum(len(positions) for positions in missing.values())

        if missing:
            miss_keys = list(missing)
            miss_texts = [texts[missing[key][0]] for key in miss_keys]
            vectors = np.asarray(self.inner.embed_documents(miss_texts), dtype=np.float32)
            if vectors.shape != (len(miss_texts), self.dimension):
                raise ValueError(
                    f"inner embedder returned shape {vectors.shape}, "
                    f"expected {(len(miss_texts), self.dimension)}"
                )
            for key, vector in zip(miss_keys, vectors, strict=True):
                out[missing[key]] = vector
            self._store(miss_keys, vectors)

        with self._lock:
            self.hits += hits
            self.misses += len(texts) - hits
        return out

    def _lookup(self, keys: Sequence[bytes]) -> dict[bytes, NDArray[np.float32]]:
        unique = list(dict.fromkeys(keys))
        found: dict[bytes, NDArray[np.float32]] = {}
        expected_bytes = self.dimension * _BLOB_DTYPE.itemsize
        with self._lock:
            for start in range(0, len(unique), _LOOKUP_CHUNK):
                chunk = unique[start : start + _LOOKUP_CHUNK]
                placeholders = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    "SELECT text_sha256, dimension, vector FROM embedding_cache "
                    f"WHERE model_id = ? AND text_sha256 IN ({placeholders})",
                    [self.model_id, *chunk],
                ).fetchall()
                for key, dimension, blob in rows:
                    # A row of another size cannot be this model's: treat it as a miss (overwritten).
                    if dimension == self.dimension and len(blob) == expected_bytes:
                        found[bytes(key)] = np.frombuffer(blob, dtype=_BLOB_DTYPE).astype(np.float32)
            if found:  # recently used: the last to be evicted
                used = self._now()
                self._conn.executemany(
                    "UPDATE embedding_cache SET used = ? WHERE model_id = ? AND text_sha256 = ?",
                    [(used, self.model_id, key) for key in found],
                )
        return found

    def _now(self) -> int:
        """A use's order: wall-clock nanoseconds, strictly increasing within this process."""
        self._tick = max(time.time_ns(), self._tick + 1)
        return self._tick

    def _store(self, keys: Sequence[bytes], vectors: NDArray[np.float32]) -> None:
        with self._lock:
            used = self._now()
            rows = [
                (
                    self.model_id,
                    key,
                    self.dimension,
                    np.ascontiguousarray(vector, dtype=_BLOB_DTYPE).tobytes(),
                    used,
                )
                for key, vector in zip(keys, vectors, strict=True)
            ]
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO embedding_cache (model_id, text_sha256, dimension, vector, used) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            if self.bytes_used() > self.max_bytes:
                self._evict()

    def bytes_used(self) -> int:
        """What the cache's pages in use take (the file, less the free pages it keeps for reuse)."""
        page_size = self._conn.execute("PRAGMA page_size").fetchone()[0]
        pages = self._conn.execute("PRAGMA page_count").fetchone()[0]
        free = self._conn.execute("PRAGMA freelist_count").fetchone()[0]
        return int((pages - free) * page_size)

    def _evict(self) -> None:
        """Least recently used rows (every model's) until the pages in use are under the low-water
        mark; then the freed pages are returned to the file system and the WAL folded back in."""
        target = self.max_bytes * _LOW_WATER
        while (used := self.bytes_used()) > target:
            rows = self._conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
            if not rows:
                break
            excess = math.ceil((used - target) / (used / rows))
            self._conn.execute(
                "DELETE FROM embedding_cache WHERE (model_id, text_sha256) IN "
                "(SELECT model_id, text_sha256 FROM embedding_cache ORDER BY used LIMIT ?)",
                (max(excess, 1),),
            )
        self._conn.executescript("PRAGMA incremental_vacuum;")  # run to the end (execute() frees one page)
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def count(self) -> int:
        """Vectors stored for this model."""
        with self._lock:
            row = self._conn.execute(
                "SELECT count(*) FROM embedding_cache WHERE model_id = ?", (self.model_id,)
            ).fetchone()
        return int(row[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
