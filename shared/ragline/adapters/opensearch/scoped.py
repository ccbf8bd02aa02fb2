"""The base of one scope's store on a domain: where its tenant's chunks live, followed through moves,
and what each document serves (its fence), read in real time.

Every read and write of :class:`~ragline.adapters.opensearch.store.OpenSearchVectorStore` runs through
:meth:`ScopedStore._placed` and keeps only chunks at their document's fence; its writing, searching and
document-reading parts (:mod:`.writes`, :mod:`.searching`, :mod:`.document_reads`) build on this class.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ragline import errors
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.client import translate
from ragline.adapters.opensearch.indexes import ModelIndexes
from ragline.adapters.opensearch.placement import Place
from ragline.domain.filters import ReadView
from ragline.domain.models import StoreCapabilities, TenantScope, chunk_id

FENCE_RETRIES = 3
"""Reads of a document retried because a publish moved its fence meanwhile."""
MOVE_RETRIES = 5
"""Runs of an operation whose tenant was moved meanwhile (each is re-placed before it runs again)."""
_T = TypeVar("_T")


class Moved(Exception):
    """The tenant's placement changed under an operation: it runs again where the tenant lives now."""


def placed_write(method: Callable[..., _T]) -> Callable[..., _T]:
    """A write run where the tenant lives now, again after a move (:meth:`ScopedStore._placed`)."""

    @functools.wraps(method)
    def run(self: ScopedStore, *args: Any, **kwargs: Any) -> _T:
        return self._placed(lambda: method(self, *args, **kwargs), write=True)

    return run


def placed_read(method: Callable[..., _T]) -> Callable[..., _T]:
    """A read run on the cached placement, again when it turns out to have changed."""

    @functools.wraps(method)
    def run(self: ScopedStore, *args: Any, **kwargs: Any) -> _T:
        return self._placed(lambda: method(self, *args, **kwargs), write=False)

    return run


class ScopedStore:
    """One scope of a model's indexes: its placement and its documents' fences (see the module)."""

    def __init__(self, provider: ModelIndexes, scope: TenantScope, view: ReadView | None = None) -> None:
        self._p = provider
        self.scope = scope
        self.view = None if view is None or view.everything else view
        """Inside every read's query (:mod:`.filtering`); None: every chunk."""
        self._routing = scope.tenant_id
        self._place = provider.placements.cached(scope.tenant_id)
        """Where the tenant's chunks live, as last seen (:mod:`.placement`; checked on the way)."""

    @property
    def _index(self) -> str:
        return self._place.index

    def _placed(self, run: Callable[[], _T], *, write: bool) -> _T:
        """``run`` against the tenant's chunk index. A write reads the placement in real time (waiting
        out a move) and again after: moved meanwhile, it runs again where the tenant lives now (every
        write is idempotent: versioned chunks and fences). A read runs on the cached placement, which
        the fence read checks (:meth:`_fences_and_sources`) and :meth:`_check_place` otherwise: a
        changed one makes it read again."""
        placements = self._p.placements
        for _ in range(MOVE_RETRIES):
            if write:
                self._place = placements.for_write(self.scope.tenant_id)
            try:
                result = run()
                if write:
                    self._check_place()
            except Moved:
                continue
            return result
        raise errors.Throttled("the tenant's chunks kept moving; retry", tenant_id=self.scope.tenant_id)

    def _check_place(self) -> None:
        """Raise :class:`Moved` (and remember the new place) when the tenant's placement changed."""
        self._seen(self._p.placements.read(self.scope.tenant_id))

    def _seen(self, now: Place) -> None:
        if now != self._place:
            self._place = now
            raise Moved

    def capabilities(self) -> StoreCapabilities:
        return StoreCapabilities()

    def _fences(self, document_ids: set[str]) -> dict[str, int]:
        """The generation last published per document (0: none yet), in one request."""
        return self._fences_and_sources(document_ids, [])[0]

    def _fences_and_sources(
        self, document_ids: set[str], source_ids: list[str]
    ) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
        """The documents' fences (as :meth:`_fences`) and the chunks of ``source_ids`` (``_id``s, as
        :meth:`_mget`), in one ``_mget`` over both indexes: a hybrid search reads the sources its
        fusion will most likely keep in the round trip that reads the fences."""
        ids = sorted(document_ids)
        fences = rq.fences_index(self._p.index)
        placements = self._p.placements
        docs = [placements.doc_ref(self.scope.tenant_id)]  # checks the cached placement on the way
        docs += [{"_index": fences, "_id": rq.fence_id(self.scope, d), "_source": False} for d in ids]
        docs += rq.mget_body(self.scope, self._index, source_ids)["docs"]
        with translate("fence read"):
            resp = self._p.client.mget(body={"docs": docs})
        placed, *got = resp["docs"]
        self._seen(placements.remember(self.scope.tenant_id, placements.place_of(placed)))
        fenced = zip(ids, got[: len(ids)], strict=True)
        published = {d: int(doc["_version"]) if doc.get("found") else 0 for d, doc in fenced}
        return published, self._in_scope(got[len(ids) :])

    def _served(self, document_id: str) -> int:
        """The document's published generation (0 before any publish), read in real time."""
        return self._fences({document_id}).get(document_id, 0)

    def _at_served(self, document_id: str, read: Callable[[int], _T]) -> _T:
        """``read`` at the document's published generation, the fence read before and after: when it
        held, every chunk of that generation was searchable before the read (publish refreshes before
        it raises the fence) and none was swept (a sweep takes only older ones). A publish in between
        makes it read again, a few times at most."""
        served = self._served(document_id)
        for _ in range(FENCE_RETRIES):
            result = read(served)
            now = self._served(document_id)
            if now == served:
                return result
            served = now
        return read(served)

    def _mget(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        with translate("read"):
            resp = self._p.client.mget(body=rq.mget_body(self.scope, self._index, ids))
        return self._in_scope(resp["docs"])

    def _in_scope(self, docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Found chunks of an ``_mget`` answer by chunk id; the scope is checked again on the way out,
        not only in the query."""
        out: dict[str, dict[str, Any]] = {}
        for doc in docs:
            src = doc.get("_source")
            if (
                doc.get("found")
                and src
                and (src["tenant_id"], src["namespace_id"])
                == (
                    self.scope.tenant_id,
                    self.scope.namespace_id,
                )
            ):
                out[chunk_id(src["document_id"], src["sequence_number"])] = src
        return out
