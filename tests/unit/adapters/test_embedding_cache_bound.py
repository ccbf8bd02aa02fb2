"""The embedding cache stays under its byte bound on disk, evicting the least recently used vectors."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from ragline.adapters.embedded.embedding_cache import EmbeddingCache
from ragline.config import Settings
from ragline.wiring import Container

pytestmark = pytest.mark.unit
KIB = 1024


class RecordingEmbedder:
    """Vectors of 1 KiB derived from each text; remembers which texts it was asked to embed."""

    model_id = "fake@1"
    dimension = 256

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.embedded.extend(texts)
        seeds = [int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little") for t in texts]
        return np.stack([np.random.default_rng(s).random(self.dimension, dtype=np.float32) for s in seeds])

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return self.embed_documents([text])[0]

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def test_the_file_stays_under_its_bound_and_the_least_recently_used_vectors_go(tmp_path: Path) -> None:
    """Given a 256 KiB cache, when 1,000 distinct 1 KiB vectors go through it while one text is used
    again every batch, then the file on disk never holds more than the bound, the oldest vectors are
    gone (embedded again when asked) and the text in constant use is still cached."""
    path = tmp_path / "cache.sqlite"
    inner = RecordingEmbedder()
    with EmbeddingCache(inner, path, max_bytes=256 * KIB) as cache:
        cache.embed_documents(["in constant use"])
        for batch in range(20):
            cache.embed_documents([f"text {batch}-{i}" for i in range(50)])
            cache.embed_documents(["in constant use"])
            assert path.stat().st_size <= 256 * KIB + 64 * KIB  # the WAL is folded in at each eviction
            assert cache.bytes_used() <= 256 * KIB
        inner.embedded.clear()
        cache.embed_documents(["in constant use", "text 0-0", "text 19-49"])
        assert inner.embedded == ["text 0-0"]
    assert path.stat().st_size <= 256 * KIB  # closed: everything is in the file itself


def test_a_cache_file_from_before_the_bound_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    with sqlite3.connect(path) as old:
        old.execute(
            "CREATE TABLE embedding_cache (model_id TEXT NOT NULL, text_sha256 BLOB NOT NULL, "
            "dimension INTEGER NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model_id, text_sha256)) "
            "WITHOUT ROWID"
        )
    inner = RecordingEmbedder()
    with EmbeddingCache(inner, path, max_bytes=64 * KIB) as cache:
        for batch in range(4):
            cache.embed_documents([f"text {batch}-{i}" for i in range(50)])
        assert cache.bytes_used() <= 64 * KIB and cache.count() < 200


def test_the_setting_bounds_the_containers_cache(tmp_path: Path) -> None:
    container = Container(Settings.from_env({"RAGLINE_EMBEDDING_CACHE_MIB": "32"}, home=tmp_path))
    embedder = container.embedder
    assert isinstance(embedder, EmbeddingCache) and embedder.max_bytes == 32 * 1024 * 1024
    assert Settings().embedding_cache_mib == 256
