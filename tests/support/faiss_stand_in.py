"""The local node's stand-in for the faiss engine. The node is assembled from Maven artifacts, whose
k-NN zip carries no native library, so a faiss field could be created but never written. The AOSS
stand-in and the rehearsal's domain proxy therefore create each faiss field as a Lucene one: the same
HNSW method and cosine scores, without faiss's encoder. AWS runs faiss itself."""

from __future__ import annotations

from typing import Any


def as_lucene(spec: dict[str, Any]) -> int:
    """Turn every faiss ``knn_vector`` method of an index body into Lucene's, in place; returns how many
    fields it changed."""
    changed = 0
    for field in spec.get("mappings", {}).get("properties", {}).values():
        method = field.get("method") if field.get("type") == "knn_vector" else None
        if method is not None and method.get("engine") == "faiss":
            method["engine"] = "lucene"
            method.get("parameters", {}).pop("encoder", None)
            changed += 1
    return changed
