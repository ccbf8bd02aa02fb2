"""Real-text filler for pooled-index benches: other tenants' chunks cut from English text on this
machine (never uniform random words), with cheap deterministic stand-in vectors.

Sources, all offline: docstrings and comments of the installed Python packages (``.venv/lib``),
their README/licence/METADATA texts, ``/usr/share/doc`` and the man pages (troff stripped).
Passages are ``WORDS`` words, deduplicated (licences repeat), windows of the texts at several offsets
when one cut gives too few (:data:`SHIFTS`), cached one a line in
``.ragline/bench-cache/filler-passages.txt``. Vectors: embedding a million texts with the offline
model is too slow here, so each passage's vector is a seeded random projection of its hashed
tokens, normalised — deterministic, and near for passages that share words, but not the model's
space (the kNN leg of a pooled bench searches among them; it never ranks them for the tenant).
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).parents[1]
CACHE = ROOT / ".ragline" / "bench-cache" / "filler-passages.txt"
WORDS = 100
BUCKETS = 4096
_DOC = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'|#\s?(.*)$', re.S | re.M)
_TROFF = re.compile(r"\\f[A-Z]|\\\(..|\\.")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")


def _texts() -> Iterator[str]:
    venv = ROOT / ".venv" / "lib"
    for path in sorted(venv.rglob("*.py")):
        try:
            src = path.read_text(errors="ignore")
        except OSError:
            continue
        yield " ".join(next(g for g in m.groups() if g) for m in _DOC.finditer(src) if any(m.groups()))
    for base in (venv, Path("/usr/share/doc")):
        for path in sorted(base.rglob("*")):
            name = path.name.lower()
            if path.is_file() and (name.startswith(("readme", "license", "copying", "copyright", "metadata"))
                                   or name.endswith((".md", ".rst", ".txt"))):  # fmt: skip
                yield _read(path)
    for path in sorted(Path("/usr/share/man").rglob("*.gz")):
        lines = _read(path).splitlines()
        yield _TROFF.sub(" ", " ".join(x for x in lines if not x.startswith((".", "'\\\""))))


def _read(path: Path) -> str:
    try:
        raw = path.read_bytes()
        return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8", "ignore")
    except (OSError, EOFError, gzip.BadGzipFile):
        return ""


SHIFTS = (0, WORDS // 2, WORDS // 4, 3 * WORDS // 4)
"""Where the windows start: the texts are cut at word 0, then (for more passages than that gives)
half a window later, and so on — overlapping passages, as a chunker with overlap cuts them."""


def passages(n: int) -> list[str]:
    """The first ``n`` distinct passages of real text (fewer if the machine has fewer): windows of
    ``WORDS`` words at the first of :data:`SHIFTS`, then at the next ones while more are wanted."""
    if not CACHE.exists() or sum(1 for _ in CACHE.open()) < n:
        seen: set[int] = set()
        out: list[str] = []
        for shift in SHIFTS:
            for text in _texts():
                words = _WORD.findall(text)
                for i in range(shift, len(words) - WORDS // 2, WORDS):
                    p = " ".join(words[i : i + WORDS])
                    h = zlib.crc32(p.lower().encode())
                    if h not in seen:
                        seen.add(h)
                        out.append(p)
                if len(out) >= n:
                    break
            if len(out) >= n:
                break
        CACHE.parent.mkdir(parents=True, exist_ok=True)
        CACHE.write_text("\n".join(out) + "\n")
    with CACHE.open() as f:
        return [line.rstrip("\n") for _, line in zip(range(n), f, strict=False)]


def stand_in_vectors(texts: list[str], dim: int, seed: int = 7) -> NDArray[np.float32]:
    """A seeded random projection of each text's hashed tokens, normalised (see the module doc)."""
    proj = np.random.default_rng(seed).standard_normal((BUCKETS, dim)).astype(np.float32)
    out = np.empty((len(texts), dim), dtype=np.float32)
    for i, t in enumerate(texts):
        buckets = [zlib.crc32(w.encode()) % BUCKETS for w in t.lower().split()] or [0]
        v = proj[buckets].sum(axis=0)
        out[i] = v / (np.linalg.norm(v) or 1.0)
    return out
