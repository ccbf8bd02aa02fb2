"""What one scope's store on a domain changes: chunk writes (``_bulk``, several requests at once),
publishes (fences raised, then older generations swept) and deletions, in the order that keeps every
read consistent (see each method).

The public ``upsert`` (which may start a growth round) and the resends of throttled ``_bulk`` lines
(``BULK_RETRIES``) are the store class's, in :mod:`.store`: it reads those settings at each call, and
this module, which it imports, cannot import it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ragline import errors
from ragline.adapters.opensearch import requests as rq
from ragline.adapters.opensearch.client import translate
from ragline.adapters.opensearch.scoped import ScopedStore, placed_write
from ragline.domain.models import Chunk

SWEEP_DOCUMENTS = 500
"""Documents one sweep query covers (one ``bool`` clause each; the node allows 1,024)."""
_BULK_FILTER = "items.*.status,items.*.error.type,items.*._shards.successful"
_log = logging.getLogger("ragline.adapters.opensearch.store")  # the name its warnings always had


class ChunkWrites(ScopedStore):
    """The writing part of a scope's store (see the module)."""

    def _upsert(self, chunks: Sequence[Chunk], generation: int) -> int:
        for c in chunks:
            if c.embedding is None or len(c.embedding) != self._p.dimension:
                raise errors.EmbeddingMismatch(
                    "chunk embedding does not match the index dimension",
                    chunk_id=c.id,
                    expected=self._p.dimension,
                    got=None if c.embedding is None else len(c.embedding),
                )
        if not chunks:
            return 0
        for document_id, fence in self._fences({c.document_id for c in chunks}).items():
            if fence > generation:
                raise errors.Superseded(
                    "a newer version of the document was published",
                    document_id=document_id,
                    generation=generation,
                    published=fence,
                )
        lines = rq.bulk_lines(self.scope, self._index, chunks, generation)
        written = self._bulk_at_once(lines)
        self._p.wrote(self._index)
        return written

    def _bulk_at_once(self, lines: list[bytes]) -> int:
        """:meth:`_bulk` of ``lines`` cut into ``bulk_writers`` parts sent at once: chunk writes are
        independent of each other (unlike a sweep's ordered deletes), and nothing reads them before
        the publish that follows the whole upsert."""
        parts = min(self._p.bulk_writers, len(lines))
        if parts <= 1:
            return self._bulk(lines)
        size = -(-len(lines) // parts)
        pool = self._p.pool()
        futures = [pool.submit(self._bulk, lines[i : i + size]) for i in range(0, len(lines), size)]
        return sum(f.result() for f in futures)

    def _bulk(self, lines: list[bytes], *, gone_ok: bool = False) -> int:
        """Every line written (in order, by ``_bulk`` requests of at most ``bulk_bytes``): how many
        were applied. A 409 means a newer generation holds the chunk (the older write loses, by
        design); ``gone_ok``: deletes, where a 404 is a chunk already deleted."""
        refresh = "false" if self._p.lazy else self._p.refresh
        written = 0
        for batch in rq.bulk_requests(lines, self._p.bulk_bytes):
            for status, error in self._bulk_statuses(batch, refresh):
                if status < 300:
                    written += 1
                elif status == 429:
                    raise errors.Throttled("OpenSearch throttled bulk indexing")
                elif status >= 500:  # e.g. its shard without the copies the write waits for
                    raise errors.DependencyUnavailable("OpenSearch could not write a chunk", status=status)
                elif status != 409 and not (gone_ok and status == 404):
                    raise errors.DependencyFailed("OpenSearch rejected a chunk", status=status, error=error)
        return written

    def _bulk_statuses(self, lines: list[bytes], refresh: str) -> list[tuple[int, str]]:
        """One ``_bulk`` request, its actions applied in order: each line's status (and error type);
        lines answered 429 are sent again after a backoff of 1, 2 and 4 s (then left at 429). An
        action applied on fewer copies than the provider's ``copies`` (a replica failed during the
        write, which ``wait_for_active_shards`` checks only before it) is a 503: on one copy only."""
        copies = self._p.copies
        out: list[tuple[int, str]] = [(0, "")] * len(lines)
        todo = list(range(len(lines)))
        retries = self._bulk_retries()
        for attempt in range(retries + 1):
            body = b"".join(lines[i] for i in todo)
            with translate("bulk indexing"):
                resp = self._p.client.bulk(
                    body=body, refresh=refresh, filter_path=_BULK_FILTER, **self._p.write_params
                )
            throttled = []
            for i, item in zip(todo, resp["items"], strict=True):
                result = next(iter(item.values()))
                out[i] = (result.get("status", 0), str(result.get("error"))[:300])
                if out[i][0] < 300 and result.get("_shards", {}).get("successful", copies) < copies:
                    out[i] = (503, f"written on {result['_shards']['successful']} of {copies} copies")
                if out[i][0] == 429:
                    throttled.append(i)
            if not throttled or attempt == retries:
                return out
            time.sleep(2**attempt)
            todo = throttled
        return out

    def _bulk_retries(self) -> int:
        """Resends of the lines a ``_bulk`` request answered 429 for (the store class answers
        ``store.BULK_RETRIES``, as it is at each request)."""
        raise NotImplementedError

    def publish(self, document_id: str, *, generation: int) -> bool:
        """:meth:`publish_many` of one document."""
        outcome = self.publish_many({document_id: generation})[document_id]
        if isinstance(outcome, errors.RaglineError):
            raise outcome
        return outcome

    @placed_write
    def publish_many(self, generations: Mapping[str, int]) -> dict[str, bool | errors.RaglineError]:
        """A fence is a document whose external version *is* the generation: OpenSearch refuses (409)
        to lower it, which makes each raise atomic, and readers read it in real time — raising it is
        the one switch that makes a version the served one. So the versions' chunks are made
        searchable *first* (one refresh for all), then the fences rise (one ``_bulk``: each action
        succeeds, is refused, or fails on its own — a 429 still there after the retries, a 5xx: that
        document's error), then the accepted documents' older generations are swept together. A
        ``_bulk`` whose answer is lost is settled by reading the fences back. Once this returns, every
        accepted version is served to every process."""
        if not generations:
            return {}
        if self._p.lazy:
            self._p.refresh_now(
                self._index
            )  # every chunk of these versions searchable before they are served
        docs = list(generations.items())
        lines = rq.fence_lines(
            rq.fences_index(self._p.index),
            [(rq.fence_id(self.scope, d), rq.fence_source(self.scope, d), g) for d, g in docs],
        )
        try:
            statuses = self._bulk_statuses(lines, "false")
        except errors.RaglineError as lost:  # applied in part, whole, or not at all: the fences tell
            outcome = self._read_back(generations, lost)
        else:
            outcome = {
                d: fence_outcome(d, status, error)
                for (d, _), (status, error) in zip(docs, statuses, strict=True)
            }
        accepted = [(d, g) for d, g in docs if outcome[d] is True]
        try:
            for i in range(0, len(accepted), SWEEP_DOCUMENTS):
                self._delete_matching(rq.older_versions_query(self.scope, accepted[i : i + SWEEP_DOCUMENTS]))
        except errors.RaglineError:  # published all the same: older chunks stay unseen, swept next time
            _log.warning("sweep after publish failed", exc_info=True)
        return outcome

    def _read_back(
        self, generations: Mapping[str, int], lost: errors.RaglineError
    ) -> dict[str, bool | errors.RaglineError]:
        """Each document's outcome from its fence as read now: at its generation, published; above,
        refused; below, not published (``lost``). ``lost`` is raised when the fences cannot be read."""
        try:
            fences = self._fences(set(generations))
        except errors.RaglineError:
            raise lost from None
        return {
            d: True if fences[d] == g else False if fences[d] > g else lost for d, g in generations.items()
        }

    @placed_write
    def discard(self, document_id: str, *, generation: int) -> int:
        if self._p.lazy:
            self._p.refresh_now(self._index)  # delete-by-query sees only refreshed chunks
        return self._delete_matching(rq.document_query(self.scope, document_id, generation=generation))

    @placed_write
    def delete_document(self, document_id: str, *, older_than: int | None = None) -> int:
        return self._delete_matching(rq.document_query(self.scope, document_id, older_than=older_than))

    def _delete_matching(self, query: dict[str, Any]) -> int:
        """The chunks ``query`` matches, deleted highest sequence number first by ordered bulk requests
        on the tenant's shard (not OpenSearch's ``_delete_by_query``, whose order is its scroll's): the
        node refreshes by itself every second, and a refresh in the middle of a sweep then shows a
        reader a document whose chunks run contiguously from 0, never one with a gap. Each delete
        carries the chunk's generation (``external_gte``), so a chunk a newer version rewrote meanwhile
        is kept (409)."""
        self._p.before_read(self._index)
        deleted = 0
        while True:
            body = {"size": rq.MAX_RESULT_WINDOW, "query": query, "_source": False, "version": True,
                    "sort": [{"sequence_number": "desc"}]}  # fmt: skip
            with translate("delete"):
                found = self._p.client.search(index=self._index, body=body, routing=self._routing)
            hits = found["hits"]["hits"]
            lines = [  # each delete routed as its chunk was found (in order: one line per hit)
                line
                for h in hits
                for line in rq.delete_lines(
                    self._index, h.get("_routing", self._routing), [(h["_id"], h["_version"])]
                )
            ]
            deleted += self._bulk(lines, gone_ok=True)
            if len(hits) < rq.MAX_RESULT_WINDOW:
                break
            self._p.refresh_now(
                self._index
            )  # a document of more chunks than one search returns: the rest next
        if deleted and self._p.refresh == "on_read":
            self._p.refresh_now(self._index)  # deletions are rare: visible everywhere when this returns
        return deleted


def fence_outcome(document_id: str, status: int, error: str) -> bool | errors.RaglineError:
    """A fence action's answer: raised (2xx), refused (409: a newer generation holds it), or this
    document's own failure, by status as :func:`translate` maps a whole request's."""
    if status < 300 or status == 409:
        return status < 300
    details = {"document_id": document_id, "status": status, "error": error}
    if status == 429:
        return errors.Throttled("OpenSearch throttled the publish of the document", **details)
    if status >= 500:
        return errors.DependencyUnavailable("OpenSearch failed to publish the document", **details)
    return errors.DependencyFailed("OpenSearch refused the document's fence", **details)
