"""What the ingest model (tests/integration/test_ingest_model.py) adds to :mod:`tests.support.ingest_world`
for rebuilds, batches and events: a recording event publisher that knows which delivery announced
what, the ledger of changes that checks "one change → one event id, however often delivered", and a
store whose ``publish_many`` refuses chosen documents (a fence ``_bulk`` answering 429 for one item).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ragline import errors
from ragline.domain.events import Event
from ragline.domain.models import TenantScope
from ragline.ports import VectorStore, VectorStoreProvider
from tests.support.ingest_world import Worker, Workers

PER_ITEM_OUTCOMES = "RaglineError" in str(VectorStore.publish_many.__annotations__.get("return", ""))
"""Whether ``publish_many`` reports a failed document as its own outcome (the contract of issue 37 #4,
being built on branch wt-batch) or, as on main when this was written, raises for the whole call."""


class Recorder:
    """An :class:`~ragline.ports.EventPublisher` keeping each event with the *unit* that published it:
    the message a worker thread runs, else what the test set in :attr:`unit` (an API call, a batch
    item) or, for a batch's publish, :attr:`by_document`'s unit of the event's document."""

    def __init__(self, workers: Workers) -> None:
        self._workers = workers
        self.unit = ""
        self.by_document: dict[str, str] = {}
        self.log: list[tuple[str, Event]] = []

    def publish(self, events: Sequence[Event]) -> None:
        worker: Worker | None = getattr(self._workers.local, "worker", None)
        for event in events:
            unit = worker.message if worker is not None else self.unit
            if worker is None and not unit:
                unit = self.by_document.get(str(event.detail.get("document_id", "")), "")
            self.log.append((unit, event))


class Changes:
    """ "One change → one event id, however often delivered", checked as events come:

    - a unit (one message, however often and however concurrently delivered; one API call) makes at
      most one change per document: every other change it announces is one already announced (its
      own again, or the one before it re-announced in case its event was lost);
    - one deletion is announced once: between two ``document.deleted`` of a document under new ids,
      another change of it is announced (it served something again, or failed) — a deletion found
      again (a second delete marker, the object's removal after its sidecar's, a second API delete)
      announces nothing new.
    """

    def __init__(self, recorder: Recorder) -> None:
        self._recorder = recorder
        self._read = 0
        self._seen: set[tuple[str, str]] = set()
        self._new: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._last_new: dict[str, tuple[str, str]] = {}
        """Per document, the type and change of the last change announced for the first time."""

    def check(self) -> None:
        log = self._recorder.log
        for unit, event in log[self._read :]:
            if not event.type.startswith("document."):
                continue
            doc, change = str(event.detail["document_id"]), str(event.detail["change"])
            if (doc, change) in self._seen:
                continue
            self._seen.add((doc, change))
            last = self._last_new.get(doc)
            assert not (event.type == "document.deleted" and last and last[0] == event.type), (
                f"{doc}: one deletion announced under two changes: {last[1]}, then {change}"
            )
            self._last_new[doc] = (event.type, change)
            if unit:
                made = self._new[(unit, doc)]
                made.add(change)
                assert len(made) <= 1, (
                    f"{doc}: one {_kind(unit)} announced {len(made)} new changes {sorted(made)} "
                    f"({[e.type for u, e in log if u == unit and e.detail.get('document_id') == doc]})"
                )
        self._read = len(log)

    def _changes(self, doc: str, kind: str) -> set[str]:
        return {
            str(e.detail["change"])
            for _, e in self._recorder.log
            if e.type == kind and e.detail.get("document_id") == doc
        }


def _kind(unit: str) -> str:
    if unit.startswith("api"):
        return "API call"
    return "sidecar message" if ".metadata.json" in unit else "message"


class RefusingStores:
    """A :class:`~ragline.ports.VectorStoreProvider` whose stores' ``publish_many`` fail the documents
    in :attr:`refuse` — the others are published — as a node answering one fence write of a ``_bulk``
    429 does. Reported per document where ``publish_many`` has per-item outcomes
    (:data:`PER_ITEM_OUTCOMES`); otherwise raised for the call after the others' fences rose, which
    is what the OpenSearch store does today (issue 37 #4)."""

    def __init__(self, inner: VectorStoreProvider) -> None:
        self._inner = inner
        self.refuse: set[str] = set()
        self.refused: list[str] = []

    def scoped(self, scope: TenantScope, view: Any = None) -> VectorStore:
        inner = self._inner.scoped(scope) if view is None else self._inner.scoped(scope, view)
        return _RefusingStore(self, inner)  # type: ignore[return-value]

    def close(self) -> None:
        self._inner.close()


class _RefusingStore:
    def __init__(self, owner: RefusingStores, inner: VectorStore) -> None:
        self._owner = owner
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def publish_many(self, generations: Mapping[str, int]) -> dict[str, Any]:
        refused = [d for d in generations if d in self._owner.refuse]
        if not refused:
            return dict(self._inner.publish_many(generations))
        self._owner.refused.extend(refused)
        rest = {d: g for d, g in generations.items() if d not in refused}
        done: dict[str, Any] = dict(self._inner.publish_many(rest)) if rest else {}
        error = errors.DependencyUnavailable("the node answered this fence write 429 (scripted)")
        if PER_ITEM_OUTCOMES:
            return done | {d: error for d in refused}
        raise error
