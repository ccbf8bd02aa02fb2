"""What one scope's store on a domain reads of a single document: its chunks' vectors (re-ingest
reuse), its served chunk count, and the chunks around one of them — each at the document's published
generation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.client import translate
from ragline.adapters.opensearch.legs import stored_chunk
from ragline.adapters.opensearch.scoped import ScopedStore, placed_read
from ragline.domain.models import Chunk, neighbor_window


class DocumentReads(ScopedStore):
    """The document-reading part of a scope's store (see the module)."""

    @placed_read
    def vectors(self, document_id: str) -> dict[str, NDArray[np.float32]]:
        from opensearchpy import helpers

        self._p.before_read(self._index)
        with translate("vectors"):
            found = {
                h["_source"]["text"]: np.asarray(h["_source"][rq.VECTOR_FIELD], dtype=np.float32)
                for h in helpers.scan(
                    self._p.client,
                    index=self._index,
                    query={"query": rq.document_query(self.scope, document_id)},
                    routing=self._routing,
                    _source=["text", rq.VECTOR_FIELD],
                    size=500,
                )
            }
        self._check_place()  # no fence read to check the placement on the way
        return found

    @placed_read
    def count(self, document_id: str | None = None) -> int:
        """A document's served chunks (at its published generation); the scope's every stored chunk
        (with a view: every stored chunk it admits)."""
        self._p.before_read(self._index)
        if document_id is None:
            counted = self._count({"bool": {"filter": rq.scope_filter(self.scope, view=self.view)}})
            self._check_place()  # no fence read to check the placement on the way
            return counted
        return self._at_served(
            document_id,
            lambda g: self._count(rq.document_query(self.scope, document_id, generation=g, view=self.view)),
        )

    def _count(self, query: dict[str, Any]) -> int:
        with translate("count"):
            resp = self._p.client.count(index=self._index, body={"query": query}, routing=self._routing)
        return int(resp["count"])

    @placed_read
    def neighbors(
        self, document_id: str, sequence_number: int, *, before: int = 5, after: int = 5
    ) -> list[Chunk]:
        window = neighbor_window(sequence_number, before, after)
        if window is None:
            return []
        self._p.before_read(self._index)

        def read(generation: int) -> list[Chunk]:
            body = rq.neighbors_search(
                self.scope, document_id, sequence_number, *window, generation=generation, view=self.view
            )
            with translate("neighbors"):
                resp = self._p.client.search(index=self._index, body=body, routing=self._routing)
            return [stored_chunk(h["_source"]) for h in resp["hits"]["hits"]]

        return self._at_served(document_id, read)
