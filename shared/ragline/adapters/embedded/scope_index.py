"""One scope's in-memory search structures, and how a write's changes are folded into them.

A :class:`ScopeIndex` is a snapshot for one scope generation: the scope's rows in rowid order (ids,
document ids, filenames), their vectors as one float32 matrix (made when a semantic query first
needs it), and, once a keyword query asked for it, their BM25 index. What a search reads of a
snapshot never changes; searches use one without a lock. After a write the
store reads only the rows of the documents the write touched and :meth:`ScopeIndex.updated` makes
the next snapshot from this one, equal to what a full load of the scope would build.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragline.adapters.embedded.bm25 import Bm25Index
from ragline.domain.models import chunk_id

MAX_CHANGED_DOCUMENTS = 5000
"""More documents changed than this since a scope was last read: read it whole instead."""

Row = tuple[Any, ...]
"""``(rowid, document_id, filename, embedding bytes, seq, text)`` as the store selects them."""


class _VectorBuffer:
    """Rows of vectors with room to grow: matrices are views of its first rows, so appending past
    the newest one's rows copies nothing and changes no older view."""

    def __init__(self, data: NDArray[np.float32], used: int) -> None:
        self.data = data
        self.used = used

    @classmethod
    def holding(cls, rows: int, dimension: int) -> _VectorBuffer:
        return cls(np.empty((rows * 5 // 4 + 64, dimension), dtype=np.float32), rows)

    def append(self, used: int, rows: NDArray[np.float32]) -> NDArray[np.float32] | None:
        """A view of ``used`` rows plus ``rows``, or None if a matrix past ``used`` exists."""
        if used != self.used:
            return None
        end = used + len(rows)
        if end > len(self.data):
            grown = _VectorBuffer.holding(end, self.data.shape[1])
            grown.data[:used] = self.data[:used]
            self.data = grown.data
        self.data[used:end] = rows
        self.used = end
        return self.data[:end]


class _Vectors:
    """A snapshot's vectors: a matrix, or until a semantic query needs one the recipe for it (rows
    of an earlier matrix and rows read since, gathered), so keyword-only use never copies vectors."""

    def __init__(
        self,
        matrix: NDArray[np.float32] | None = None,
        buffer: _VectorBuffer | None = None,
        recipe: tuple[NDArray[np.float32], tuple[NDArray[np.float32], ...], NDArray[np.int64]] | None = None,
    ) -> None:
        self._matrix = matrix
        self._buffer = buffer
        self._recipe = recipe

    @classmethod
    def of(cls, blobs: Sequence[bytes], dimension: int) -> _Vectors:
        buffer = _VectorBuffer.holding(len(blobs), dimension)
        matrix = buffer.data[: len(blobs)]
        for lo in range(0, len(blobs), 4096):  # joined a slice at a time: no second copy of them all
            part = blobs[lo : lo + 4096]
            matrix[lo : lo + len(part)] = np.frombuffer(b"".join(part), dtype=np.float32).reshape(
                -1, dimension
            )
        return cls(matrix, buffer)

    def after(
        self, kept: NDArray[np.bool_], added: NDArray[np.float32], order: NDArray[np.int64] | None
    ) -> _Vectors:
        """The vectors once rows where ``kept`` is False are gone, ``added`` come last and ``order``
        permutes them: appended in place when only new rows came, else a recipe."""
        if self._matrix is not None and self._buffer is not None and order is None and kept.all():
            appended = self._buffer.append(len(self._matrix), added)
            if appended is not None:
                return _Vectors(appended, self._buffer)
        if self._recipe is not None:
            base, extras, gather = self._recipe
        else:
            assert self._matrix is not None
            base, extras, gather = self._matrix, (), np.arange(len(self._matrix))
        start = len(base) + sum(len(rows) for rows in extras)
        gather = np.concatenate((gather[kept], np.arange(start, start + len(added))))
        return _Vectors(recipe=(base, (*extras, added), gather if order is None else gather[order]))

    def matrix(self) -> NDArray[np.float32]:
        """The matrix, made from the recipe on first call (callers hold the store's lock)."""
        if self._matrix is None:
            assert self._recipe is not None
            base, extras, gather = self._recipe
            buffer = _VectorBuffer.holding(len(gather), base.shape[1])
            matrix = buffer.data[: len(gather)]
            later = gather >= len(base)
            if len(base):
                np.take(base, np.minimum(gather, len(base) - 1), axis=0, out=matrix)
            if later.any():
                matrix[later] = np.concatenate(extras)[gather[later] - len(base)]
            self._matrix, self._buffer, self._recipe = matrix, buffer, None
        return self._matrix


@dataclass
class ScopeIndex:
    generation: int
    rowids: NDArray[np.int64]
    document_ids: NDArray[np.object_]
    filenames: NDArray[np.object_]
    chunk_ids: NDArray[np.object_]
    vectors: _Vectors = field(repr=False)
    bm25: Bm25Index | None = None
    """Built on the first keyword query (under the store's lock), then carried through updates."""
    masks: dict[object, NDArray[np.bool_]] = field(default_factory=dict, repr=False)
    """Filter leaves' rows of this snapshot, by leaf (see ``store_filters``): readers' ``@*`` once."""

    @classmethod
    def load(cls, generation: int, rows: Sequence[Row], dimension: int) -> ScopeIndex:
        """From all the scope's rows in rowid order (``text`` may be left out)."""
        return cls(
            generation=generation,
            rowids=np.array([r[0] for r in rows], dtype=np.int64),
            document_ids=_objects(r[1] for r in rows),
            filenames=_objects(r[2] for r in rows),
            chunk_ids=_objects(chunk_id(r[1], r[4]) for r in rows),
            vectors=_Vectors.of([r[3] for r in rows], dimension),
        )

    def updated(self, generation: int, changed: set[str], rows: Sequence[Row], dimension: int) -> ScopeIndex:
        """This scope after writes that touched only the documents ``changed``, whose rows now are
        ``rows`` (in rowid order, with their text): theirs replace the ones held, the rest stay."""
        touched = map(changed.__contains__, self.document_ids.tolist())
        kept = ~np.fromiter(touched, dtype=bool, count=len(self.rowids))
        added = ScopeIndex.load(generation, rows, dimension)
        rowids = np.concatenate((self.rowids[kept], added.rowids))
        # New rows get rowids past every other; a rewritten chunk keeps its own, so it may sit earlier.
        order = None if _ascending(rowids) else np.argsort(rowids, kind="stable")
        update = ScopeIndex(
            generation=generation,
            rowids=rowids if order is None else rowids[order],
            document_ids=_merged(self.document_ids[kept], added.document_ids, order),
            filenames=_merged(self.filenames[kept], added.filenames, order),
            chunk_ids=_merged(self.chunk_ids[kept], added.chunk_ids, order),
            vectors=self.vectors.after(kept, added.vectors.matrix(), order),
        )
        if self.bm25 is not None:
            update.bm25 = self.bm25.updated(kept, [str(r[5]) for r in rows], order)
        return update


def _objects(values: Any) -> NDArray[np.object_]:
    items = list(values)
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _merged(
    kept: NDArray[np.object_], added: NDArray[np.object_], order: NDArray[np.int64] | None
) -> NDArray[np.object_]:
    merged = np.concatenate((kept, added))
    return merged if order is None else merged[order]


def _ascending(values: NDArray[np.int64]) -> bool:
    return bool(len(values) < 2 or (values[1:] > values[:-1]).all())


# -- reading a scope from the store's file ------------------------------------------------------------
def read_scope(
    conn: sqlite3.Connection, key: tuple[str, str], cached: ScopeIndex | None, dimension: int
) -> ScopeIndex:
    """The scope ``key`` (tenant, namespace) at its current generation: ``cached`` itself if that has
    not moved, ``cached`` updated with the documents changed since when the change record covers
    every write since, otherwise every row read again."""
    conn.execute("BEGIN")  # one read snapshot: the generation, the record and the rows agree
    try:
        row = conn.execute(
            "SELECT generation FROM scopes WHERE tenant_id=? AND namespace_id=?", key
        ).fetchone()
        generation = int(row[0]) if row else 0
        if cached is not None and cached.generation == generation:
            return cached
        update = None if cached is None else _read_changes(conn, key, cached, generation, dimension)
        if update is not None:
            return update
        rows = conn.execute(
            "SELECT rowid, document_id, filename, embedding, seq FROM chunks"
            " WHERE tenant_id=? AND namespace_id=? ORDER BY rowid",
            key,
        ).fetchall()
        return ScopeIndex.load(generation, rows, dimension)
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def _read_changes(
    conn: sqlite3.Connection, key: tuple[str, str], cached: ScopeIndex, generation: int, dimension: int
) -> ScopeIndex | None:
    """``cached`` with the documents changed since its generation read again; None when the record
    cannot vouch for every write since (a writer that keeps none, a purge) or too much changed."""
    if generation < cached.generation:
        return None
    (latest,) = conn.execute(
        "SELECT max(generation) FROM scope_log WHERE tenant_id=? AND namespace_id=?", key
    ).fetchone()
    if latest != generation:
        return None
    changed = {
        str(document_id)
        for (document_id,) in conn.execute(
            "SELECT document_id FROM scope_log WHERE tenant_id=? AND namespace_id=? AND generation > ?",
            (*key, cached.generation),
        )
    }
    if len(changed) > MAX_CHANGED_DOCUMENTS:
        return None
    rows: list[Row] = []
    ordered = sorted(changed)
    for lo in range(0, len(ordered), 500):
        group = ordered[lo : lo + 500]
        rows += conn.execute(
            "SELECT rowid, document_id, filename, embedding, seq, text FROM chunks"
            f" WHERE tenant_id=? AND namespace_id=? AND document_id IN ({','.join('?' * len(group))})",
            (*key, *group),
        ).fetchall()
    rows.sort(key=lambda r: int(r[0]))
    update = cached.updated(generation, changed, rows, dimension)
    (count,) = conn.execute(
        "SELECT count(*) FROM chunks WHERE tenant_id=? AND namespace_id=?", key
    ).fetchone()
    return update if count == len(update.rowids) else None


def read_texts(conn: sqlite3.Connection, key: tuple[str, str], index: ScopeIndex) -> list[str]:
    """The text of each of ``index``'s rows, in its order."""
    rows = conn.execute("SELECT rowid, text FROM chunks WHERE tenant_id=? AND namespace_id=?", key).fetchall()
    texts = dict(rows)
    return [str(texts[rowid]) for rowid in index.rowids.tolist()]
