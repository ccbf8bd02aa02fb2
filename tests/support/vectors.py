"""A tiny deterministic bag-of-words embedder for store tests (not a mock: real vectors, real cosine)."""

from __future__ import annotations

import hashlib
import re

import numpy as np

DIM = 64


def bow_vector(text: str, dim: int = DIM) -> tuple[float, ...]:
    """Hash each word into ``dim`` buckets and L2-normalise: shared words => high cosine."""
    v = np.zeros(dim, dtype=np.float32)
    for word in re.findall(r"\w+", text.lower()):
        h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big")
        v[h % dim] += 1.0
    n = float(np.linalg.norm(v))
    if n == 0:
        v[0] = 1.0
        n = 1.0
    return tuple(float(x) for x in v / n)
