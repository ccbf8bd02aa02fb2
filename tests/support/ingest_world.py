"""A versioned S3 bucket, an SQS-like queue and step-controlled ingestion workers, for race tests.

:class:`VersionedBucket` is an :class:`~ragline.ports.ObjectStore` with S3's versioning rules (puts add
versions, a plain delete adds a delete marker, a version delete removes one version — removing the
marker is an undelete); every mutation returns the S3 notification S3 would send, with a per-key
increasing sequencer.

:class:`Workers` runs ``IngestService.handle_notification`` for one message per thread and parks each
worker at *checkpoints* (before it claims, reads the object, embeds, writes, publishes, completes): the
test decides which worker moves next and which one dies where, so any interleaving of slow workers,
crashes and redeliveries can be generated — deterministically, one worker moving at a time.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote_plus

from ragline import errors
from ragline.domain.models import Chunk, TenantScope
from ragline.ports import DocumentRegistry, Embedder, VectorStore, VectorStoreProvider

BUCKET = "ragline-docs"
WAIT_S = 60.0


# -- S3 ---------------------------------------------------------------------------------------------
@dataclass
class _Version:
    version_id: str
    data: bytes | None  # None: a delete marker


class VersionedBucket:
    def __init__(self, name: str = BUCKET) -> None:
        self.name = name
        self.versions: dict[str, list[_Version]] = {}
        self.bytes_read = 0
        self._seq = itertools.count(1)
        self._lock = threading.Lock()

    # the ObjectStore port (what the ingest service reads)
    def get(self, key: str, *, version_id: str = "", limit: int | None = None) -> bytes:
        with self._lock:
            versions = self.versions.get(key, [])
            if version_id:
                found = [v.data for v in versions if v.version_id == version_id and v.data is not None]
            else:
                found = [versions[-1].data] if versions and versions[-1].data is not None else []
            if not found or found[0] is None:
                raise errors.NotFound(f"no object {key!r}")
            data = found[0]
            if limit is not None and len(data) > limit:
                raise errors.DocumentTooLarge(f"{key} is {len(data)} bytes", filename=key, limit=limit)
            self.bytes_read += len(data)
            return data

    def put(self, key: str, data: bytes) -> None:
        self.upload(key, data)

    def delete(self, key: str) -> None:
        self.remove(key)

    def list(self, prefix: str) -> list[str]:
        folder = prefix.rstrip("/") + "/" if prefix else ""
        return sorted(k for k in self.versions if k.startswith(folder) and self._current(k) is not None)

    # what a test does to the bucket; each returns the notification body S3 sends
    def upload(self, key: str, data: bytes) -> str:
        with self._lock:
            version = _Version(self._next_version(), data)
            self.versions.setdefault(key, []).append(version)
            return self._event("ObjectCreated:Put", key, version, size=len(data))

    def remove(self, key: str) -> str:
        with self._lock:
            marker = _Version(self._next_version(), None)
            self.versions.setdefault(key, []).append(marker)
            return self._event("ObjectRemoved:DeleteMarkerCreated", key, marker)

    def remove_version(self, key: str, index: int) -> str:
        """Delete one version by id (``index`` into the key's versions, oldest first)."""
        with self._lock:
            versions = self.versions[key]
            version = versions.pop(index % len(versions))
            if not versions:
                del self.versions[key]
            return self._event("ObjectRemoved:Delete", key, version)

    def current(self, key: str) -> bytes | None:
        with self._lock:
            return self._current(key)

    def _current(self, key: str) -> bytes | None:
        versions = self.versions.get(key)
        return versions[-1].data if versions else None

    def _next_version(self) -> str:
        return f"v{next(self._seq):06d}"

    def _event(self, name: str, key: str, version: _Version, size: int = 0) -> str:
        obj = {
            "key": quote_plus(key, safe="/"),
            "size": size,
            "eTag": "",
            "versionId": version.version_id,
            "sequencer": f"{next(self._seq):016X}",  # every event its own, increasing per key
        }
        record = {"eventName": name, "s3": {"bucket": {"name": self.name}, "object": obj}}
        return json.dumps({"Records": [record]})


# -- workers ----------------------------------------------------------------------------------------
class Crash(Exception):
    """Raised at a checkpoint: the worker dies there, like a Lambda killed mid-batch."""


@dataclass
class Worker:
    message: str
    at: str = "start"
    outcome: str = ""  # "", "ok", "crashed", "failed:<code>"
    go: threading.Event = field(default_factory=threading.Event)
    parked: threading.Event = field(default_factory=threading.Event)
    crash: bool = False
    thread: threading.Thread | None = None
    visited: list[str] = field(default_factory=list)
    """Every checkpoint the worker reached, in order."""
    claims: list[Any] = field(default_factory=list)
    """What each of its registry claims returned (:class:`~ragline.domain.documents.Claim`)."""
    held_beside: list[Any] = field(default_factory=list)
    """For each claim, the records other running workers held granted claims on at that moment."""

    @property
    def done(self) -> bool:
        return bool(self.outcome)


class Workers:
    """Step-controlled workers over one ingest service whose ports are wrapped with checkpoints."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.all: list[Worker] = []

    # -- wiring: wrap the service's ports so every call of interest is a checkpoint --------------
    def documents(self, inner: DocumentRegistry) -> DocumentRegistry:
        return _Checkpointed(self, inner, {"claim", "complete"})  # type: ignore[return-value]

    def embedder(self, inner: Embedder) -> Embedder:
        return _Checkpointed(self, inner, {"embed_documents"})  # type: ignore[return-value]

    def objects(self, inner: Any) -> Any:
        return _Checkpointed(self, inner, {"get"})

    def stores(self, inner: VectorStoreProvider) -> VectorStoreProvider:
        return _Stores(self, inner)  # type: ignore[return-value]

    # -- running -----------------------------------------------------------------------------------
    def start(self, run: Callable[[str], object], message: str) -> Worker:
        """Start a worker on ``message``; it runs to its first checkpoint (or to its end)."""
        worker = Worker(message)

        def body() -> None:
            self.local.worker = worker
            try:
                worker.go.wait(WAIT_S)
                worker.go.clear()
                run(message)
                worker.outcome = "ok"
            except Crash:
                worker.outcome = "crashed"
            except errors.RaglineError as exc:
                worker.outcome = f"failed:{exc.code}"
            finally:
                worker.parked.set()

        worker.thread = threading.Thread(target=body, daemon=True)
        self.all.append(worker)
        worker.thread.start()
        self.step(worker)
        return worker

    def step(self, worker: Worker, *, crash: bool = False) -> None:
        """Let ``worker`` run to its next checkpoint (or die at the one it is parked at)."""
        assert not worker.done
        worker.crash = crash
        worker.parked.clear()
        worker.go.set()
        if not worker.parked.wait(WAIT_S):
            raise AssertionError(f"worker stuck after {worker.at}")
        if worker.done and worker.thread is not None:
            worker.thread.join(WAIT_S)

    def finish(self, worker: Worker) -> str:
        while not worker.done:
            self.step(worker)
        return worker.outcome

    def checkpoint(self, name: str) -> None:
        worker: Worker | None = getattr(self.local, "worker", None)
        if worker is None:  # a call from the test itself
            return
        worker.at = name
        worker.visited.append(name)
        worker.parked.set()
        if not worker.go.wait(WAIT_S):
            raise AssertionError(f"worker parked at {name} was never resumed")
        worker.go.clear()
        if worker.crash:
            raise Crash(name)

    @property
    def running(self) -> list[Worker]:
        return [w for w in self.all if not w.done]


class _Checkpointed:
    def __init__(self, workers: Workers, inner: Any, names: set[str]) -> None:
        self._workers = workers
        self._inner = inner
        self._names = names

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name not in self._names:
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self._workers.checkpoint(name)
            result = attr(*args, **kwargs)
            worker: Worker | None = getattr(self._workers.local, "worker", None)
            if name == "claim" and worker is not None:
                worker.held_beside.append(
                    [
                        w.claims[-1].record
                        for w in self._workers.running
                        if w is not worker and w.claims and w.claims[-1].granted
                    ]
                )
                worker.claims.append(result)
            return result

        return call


class _Stores:
    def __init__(self, workers: Workers, inner: VectorStoreProvider) -> None:
        self._workers = workers
        self._inner = inner

    def scoped(self, scope: TenantScope, view: Any = None) -> VectorStore:
        return _Checkpointed(self._workers, self._inner.scoped(scope, view), {"upsert", "publish"})  # type: ignore[return-value]

    def close(self) -> None:
        self._inner.close()


def served_texts(store: VectorStore, document_id: str) -> list[str]:
    """The texts a reader gets for a document, by sequence number."""
    return [c.text for c in store.neighbors(document_id, 0, before=0, after=5_000)]


def chunk_texts(chunks: Sequence[Chunk]) -> list[str]:
    return [c.text for c in sorted(chunks, key=lambda c: c.sequence_number)]
