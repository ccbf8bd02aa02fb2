"""Ranking over one scope's snapshot (:class:`~.scope_index.ScopeIndex`): the top ``k`` rows of a
semantic or keyword leg, and which rows a query's document and filename filters leave in.

Pure numpy over arrays the store hands in: the scores (the scope's vectors times the query, or its
BM25 scores) and the mask of rows the query may return. Ties rank by rowid, so equal scores come
back in the order they were written, on every run and every process.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ragline import errors
from ragline.adapters.embedded.scope_index import ScopeIndex
from ragline.domain.models import MetadataFilter

Ranked = list[tuple[str, float]]
"""``(chunk id, score)``, best first."""


def unit_query(vector: Sequence[float], dimension: int) -> NDArray[np.float32]:
    """The query vector scaled to length 1 (a zero vector as it is), so the scores are cosines."""
    q = np.asarray(vector, dtype=np.float32)
    if q.shape != (dimension,):
        raise errors.EmbeddingMismatch(
            "query vector does not match the store's dimension", expected=dimension, got=q.size
        )
    return q / (np.linalg.norm(q) or 1.0)


def top_semantic(
    m: ScopeIndex,
    scores: NDArray[np.float32],
    mask: NDArray[np.bool_] | None,
    k: int,
    rowid_of: dict[str, int],
) -> Ranked:
    """The ``k`` best cosines among the rows ``mask`` leaves in; each one's rowid goes in ``rowid_of``."""
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    k = min(k, int(np.isfinite(scores).sum()))
    if k <= 0:
        return []
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.lexsort((m.rowids[top], -scores[top]))]
    return _ranked(m, scores, top, rowid_of)


def top_keyword(
    m: ScopeIndex,
    scores: NDArray[np.float32],
    mask: NDArray[np.bool_] | None,
    k: int,
    rowid_of: dict[str, int],
) -> Ranked:
    """The ``k`` best BM25 scores among the rows ``mask`` leaves in that match at all (score > 0)."""
    if mask is not None:
        scores = np.where(mask, scores, 0.0)
    matching = np.flatnonzero(scores > 0)
    k = min(k, len(matching))
    if k <= 0:
        return []
    top = matching[np.argpartition(-scores[matching], k - 1)[:k]]
    top = top[np.lexsort((m.rowids[top], -scores[top]))]
    return _ranked(m, scores, top, rowid_of)


def _ranked(
    m: ScopeIndex, scores: NDArray[np.float32], top: NDArray[np.intp], rowid_of: dict[str, int]
) -> Ranked:
    out = []
    for i in top.tolist():
        rowid_of[m.chunk_ids[i]] = int(m.rowids[i])
        out.append((m.chunk_ids[i], float(scores[i])))
    return out


def filter_mask(m: ScopeIndex, filters: MetadataFilter) -> NDArray[np.bool_] | None:
    """The rows of ``m`` the filters' document ids and filenames admit (None: no such filter)."""
    mask: NDArray[np.bool_] | None = None
    for values, column in ((filters.document_ids, m.document_ids), (filters.filenames, m.filenames)):
        if values:
            hit = np.isin(column, np.array(values, dtype=object))
            mask = hit if mask is None else mask & hit
    return mask
