"""The placement registry's documents for the unit tests' recording clients (no node): ``get``,
``mget`` and ``index`` of an in-memory document store, versioned as OpenSearch versions them."""

from __future__ import annotations

from typing import Any


class InMemoryDocuments:
    """``get``/``index`` of the few documents a provider's placement registry writes (the layout, a
    tenant's placement), each with ``_version``, ``_seq_no`` and ``_primary_term``."""

    def __init__(self) -> None:
        self.documents: dict[tuple[str, str], dict[str, Any]] = {}
        self._seq = 0

    def get(self, *, index: str, id: str, ignore: int | None = None, **_: Any) -> dict[str, Any]:
        doc = self.documents.get((index, id))
        if doc is None:
            if ignore == 404:
                return {"_index": index, "_id": id, "found": False}
            from opensearchpy.exceptions import NotFoundError

            raise NotFoundError(404, "not_found", {})
        return {"_index": index, "_id": id, "found": True, **doc}

    def mget(self, *, body: dict[str, Any]) -> dict[str, Any]:
        """Every document asked for as stored here (none of the fences or chunks: not found)."""
        return {"docs": [self.get(index=d["_index"], id=d["_id"], ignore=404) for d in body["docs"]]}

    def index(self, *, index: str, id: str, body: dict[str, Any], op_type: str | None = None,
              if_seq_no: int | None = None, **_: Any) -> dict[str, Any]:  # fmt: skip
        from opensearchpy.exceptions import ConflictError

        old = self.documents.get((index, id))
        if (op_type == "create" and old) or (
            if_seq_no is not None and (old or {}).get("_seq_no") != if_seq_no
        ):
            raise ConflictError(409, "version_conflict_engine_exception", {})
        self._seq += 1
        version = (old or {}).get("_version", 0) + 1
        self.documents[(index, id)] = {
            "_source": body, "_version": version, "_seq_no": self._seq, "_primary_term": 1
        }  # fmt: skip
        return {"_version": version, "_seq_no": self._seq, "_primary_term": 1}
