"""Where a tenant's chunks are stored and searched: the vector store and the provider that
binds it to one scope.

Part of :mod:`ragline.ports` (which re-exports every port); the docstrings are the contracts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: importing the ports must stay cheap (cold starts)
    import numpy as np
    from numpy.typing import NDArray

    from ragline.domain.filters import ReadView
    from ragline.domain.models import Chunk, SearchHit, SearchQuery, StoreCapabilities, TenantScope
    from ragline.errors import RaglineError


@runtime_checkable
class VectorStore(Protocol):
    """Chunks of one tenant's namespace; the scope is bound at construction, never per call.

    Contract (versions: every ingest or delete of a document works at its own, higher *generation*;
    a document's *fence* is the generation last published, 0 before any):
    - Readers see exactly the published generation of each document: a chunk is served — by
      ``search``, ``neighbors`` and ``count(doc)`` — iff its generation equals its document's fence.
      Never a chunk of an unpublished version, never two versions of one document at once.
    - ``upsert(chunks, generation=g)`` inserts or replaces chunks by id
      (``{document_id}#{sequence_number}``) *within generation g*, each carrying an embedding of the
      store's dimension. A version above the fence is written beside the served one and stays unseen
      until its publish; a write at the fence (0 for a document never published) is served at once; a
      write below the fence is refused with :class:`~ragline.errors.Superseded`. Returns how many
      chunks were written.
    - ``publish(doc, generation=g)`` raises the fence to ``g`` — atomically refused, returning False,
      when the fence is already above ``g`` — which makes the chunks written at ``g`` (none: a delete)
      the served version in one step, then deletes the document's chunks below ``g`` (an older
      version, or the orphans of a worker that died before its publish). Publishing the fence's own
      generation again changes nothing served (it only sweeps). The fence outlives the chunks, so a
      slow worker holding an older version can neither resurrect a deleted document nor be served
      beside a newer version (it loses at ``upsert``, or at ``publish`` and then ``discard``s).
    - ``publish_many({doc: g, ...})`` is ``publish`` for several documents at once, each document's
      outcome its own: ``True`` published (its fence is at ``g``), ``False`` refused (its fence is
      above ``g``), or the :class:`~ragline.errors.RaglineError` that failed *that document's* publish
      (a node answering its fence write 429 or 5xx, its version not yet searchable): its fence did not
      rise, it serves what it served, and publishing ``g`` again later may succeed. One document's
      failure never fails another's publish, so the caller settles each document from what is
      served. It raises only for a failure of the whole call after which no fence rose; a store that
      cannot tell whether a fence rose (a request whose answer was lost) reads it back and reports the
      document from what it holds. Only when it cannot read it either (the store unreachable) is an
      outcome unknown: that document is reported failed — the whole call raises when no outcome is
      known — and publishing the same generation again (idempotent) settles it. One
      refresh and one fence write for the lot, so an ingest batch pays for visibility once, not once
      per document. Each document's new version still appears whole, at its fence's raise; documents
      appear together or one by one, unordered. A sweep of older chunks that fails after the fence
      rose does not fail the publish (they are unseen below the fence; the next publish sweeps them).
      ``publish`` raises the error ``publish_many`` would report for the document.
    - ``discard(doc, generation=g)`` deletes the document's chunks at exactly ``g``.
    - ``vectors(doc)`` maps each stored chunk text of the document — of any generation, unpublished
      ones included — to its embedding (for reuse), as float32 arrays.
    - ``delete_document(doc, older_than=g)`` deletes the document's chunks whose generation is below
      ``g`` (all of them when ``older_than`` is None); it does not move the fence.
    - ``search`` honours the query's mode; every hit carries a :class:`ScoreBreakdown` for the legs
      that produced it; no hit ever belongs to another tenant or namespace.
    - ``neighbors`` returns the document's chunks with sequence numbers in
      ``[seq - before, seq + after]``, ordered by sequence number.
    - Writes are visible to the next ``search`` from the same process (read-your-writes).
    - A store bound to a :class:`~ragline.domain.filters.ReadView` (``provider.scoped(scope, view)``)
      serves only the chunks the view admits (:meth:`ReadView.admits` on the chunk's ``attributes``
      and ``readers``), and a query's ``filters.where`` narrows further: ``search``, ``neighbors``
      and ``count(doc)`` never return, count or skip a place for any other chunk. The filter runs
      inside the search, never after it: a search returns ``min(k, chunks admitted and matched)``
      hits (k = 1 among 10,000 chunks finds the one). Writes are not affected by the view.
    """

    scope: TenantScope

    def capabilities(self) -> StoreCapabilities: ...

    def upsert(self, chunks: Sequence[Chunk], *, generation: int = 0) -> int: ...

    def publish(self, document_id: str, *, generation: int) -> bool: ...

    def publish_many(self, generations: Mapping[str, int]) -> dict[str, bool | RaglineError]: ...

    def discard(self, document_id: str, *, generation: int) -> int: ...

    def vectors(self, document_id: str) -> dict[str, NDArray[np.float32]]: ...

    def delete_document(self, document_id: str, *, older_than: int | None = None) -> int:
        """Delete the document's chunks (only those below generation ``older_than`` if given)."""
        ...

    def search(self, query: SearchQuery) -> list[SearchHit]: ...

    def neighbors(
        self, document_id: str, sequence_number: int, *, before: int = 5, after: int = 5
    ) -> list[Chunk]: ...

    def count(self, document_id: str | None = None) -> int:
        """The chunks one document serves; without a document, every chunk stored in the scope
        (unpublished versions included: a storage figure, not what readers see)."""
        ...


class VectorStoreProvider(Protocol):
    """Builds scope-bound stores over one physical store (a SQLite file, an OpenSearch index)."""

    def scoped(self, scope: TenantScope, view: ReadView | None = None) -> VectorStore:
        """The scope's store, serving only what ``view`` admits (None: every chunk)."""
        ...

    def purge_tenant(self, tenant_id: str) -> int:
        """Delete everything the tenant holds in the store, in every namespace it ever had — chunks
        *and* fences; returns how many chunks went. Idempotent (a tenant's deletion)."""
        ...

    def close(self) -> None: ...
