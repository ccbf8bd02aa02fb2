"""IR metrics over ranked document ids, as BEIR/pytrec_eval compute them (graded qrels, linear gain)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ndcg_at(ranked: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    dcg = sum(qrels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((g for g in qrels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: Sequence[str], qrels: Mapping[str, int], k: int = 100) -> float:
    relevant = {d for d, g in qrels.items() if g > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def mrr_at(ranked: Sequence[str], qrels: Mapping[str, int], k: int = 10) -> float:
    for i, d in enumerate(ranked[:k]):
        if qrels.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def dedupe_documents(chunk_document_ids: Sequence[str]) -> list[str]:
    """Chunk hits → document ranking (first, i.e. best, chunk of each document wins)."""
    return list(dict.fromkeys(chunk_document_ids))
