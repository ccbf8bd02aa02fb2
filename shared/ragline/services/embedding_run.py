"""Embedding a document within the worker's clock: when the function is killed, how fast it embeds.

A Lambda invocation ends at its timeout whatever it is doing. :class:`WorkerDeadline` is that moment,
taken from the Lambda context when the invocation starts (the time left then is also the best
measure of the whole budget an invocation gets: the context does not state the timeout).
:class:`EmbeddingRate` is the embedder's throughput as measured by this worker — every batch it
embeds adds to it, so a warm worker knows it before its next document embeds a single text.

:class:`EmbeddingClock` applies both to one document, before each batch of its embedding:

- a document whose remaining embedding cannot finish in the time left (less
  :attr:`IngestSettings.reserve_seconds` for writing and publishing) but could in a whole
  invocation raises :class:`~ragline.errors.WorkerOutOfTime` — not the document's fault: the served
  version stays, the message is redelivered and starts afresh;
- one that could not finish even in a whole invocation raises
  :class:`~ragline.errors.EmbeddingTimeExceeded` (a ``DocumentTooLarge``): the version ends
  ``failed`` with the estimate, the measured rate and the budget in its reason.

:class:`EmbeddingRun` is the loop: batches, vectors reused, each batch timed and checked first.
Without a worker deadline (the CLI, the API's text ingestion) nothing is checked: only the
settings' parse budget applies. The clock is injectable so tests never sleep.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ragline import errors
from ragline.domain.models import Chunk
from ragline.ports import Embedder

Clock = Callable[[], float]


class WorkerDeadline:
    """The moment the worker is killed, and the time it had when its invocation started."""

    def __init__(self, seconds_left: float, *, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self.budget = seconds_left
        """Time left when the invocation started: what a redelivered message would get (at most)."""
        self._ends = clock() + seconds_left

    @classmethod
    def of_lambda(cls, context: object, *, clock: Clock = time.monotonic) -> WorkerDeadline:
        """From a Lambda context's ``get_remaining_time_in_millis()``."""
        remaining_ms = context.get_remaining_time_in_millis()  # type: ignore[attr-defined]
        return cls(float(remaining_ms) / 1000.0, clock=clock)

    def remaining(self) -> float:
        return self._ends - self.clock()


@dataclass
class EmbeddingRate:
    """Texts embedded per second by this worker's embedder, over everything it has embedded."""

    texts: int = 0
    seconds: float = 0.0

    def add(self, texts: int, seconds: float) -> None:
        self.texts += texts
        self.seconds += max(seconds, 0.0)

    @property
    def per_second(self) -> float | None:
        """``None`` until something was measured (a first batch is then small: a probe)."""
        if not self.texts or self.seconds <= 0:
            return None
        return self.texts / self.seconds


@dataclass
class EmbeddingClock:
    """One document's embedding, checked against the worker's deadline before every batch."""

    deadline: WorkerDeadline
    rate: EmbeddingRate
    filename: str
    reserve_seconds: float
    total_texts: int
    """Texts the document embeds in all (those whose stored vectors it reuses excluded)."""
    prepared_seconds: float = 0.0
    """Its parse and chunking time: a whole invocation would spend it again."""

    def check(self, texts_left: int) -> None:
        """Raise unless ``texts_left`` more texts can be embedded, and the rest done, in time."""
        left = self.deadline.remaining() - self.reserve_seconds
        rate = self.rate.per_second
        needed = texts_left / rate if rate else 0.0
        if left > 0 and needed <= left:
            return
        if rate and self._whole_run_needs(rate) > self.deadline.budget - self.reserve_seconds:
            raise self._too_long(rate)
        reason = (
            f"the worker has {max(left, 0):.0f} s left, too little to embed its {texts_left:,} remaining"
            f" texts (about {needed:.0f} s at the measured {rate or 0:.0f} texts/s)"
        )
        raise errors.WorkerOutOfTime(
            f"Left {self.filename!r} for a later invocation: {reason}.",
            filename=self.filename,
            reason=reason,
            seconds_left=round(max(left, 0), 1),
        )

    def timed(self, texts: int, seconds: float) -> None:
        self.rate.add(texts, seconds)

    def _whole_run_needs(self, rate: float) -> float:
        """Seconds this document needs from a fresh start: parsing and chunking it again, then
        embedding every text at ``rate``."""
        return self.prepared_seconds + self.total_texts / rate

    def _too_long(self, rate: float) -> errors.EmbeddingTimeExceeded:
        needed = self._whole_run_needs(rate)
        budget = self.deadline.budget - self.reserve_seconds
        reason = (
            f"embedding its {self.total_texts:,} texts needs about {needed:.0f} s at the measured"
            f" {rate:.0f} texts/s, more than the {budget:.0f} s one ingestion run has for it"
        )
        return errors.EmbeddingTimeExceeded(
            f"Cannot index {self.filename!r}: {reason}.",
            filename=self.filename,
            reason=reason,
            texts=self.total_texts,
            texts_per_second=round(rate, 1),
            budget_seconds=round(budget, 1),
        )


PROBE_BATCH = 32
"""Texts in a document's first batch while the worker's rate is unknown: enough to measure it,
little enough that a document too long for the run is refused before most of it is embedded."""


class EmbeddingRun:
    """One document's chunks embedded in batches of at most ``batch_size``, reusing the stored
    vector of every text already indexed for it (``known``), each batch timed into the worker's
    rate and preceded by ``clock``'s check (``None``: no worker deadline, nothing checked)."""

    def __init__(
        self,
        embedder: Embedder,
        known: dict[str, NDArray[np.float32]],
        *,
        batch_size: int,
        clock: EmbeddingClock | None = None,
    ) -> None:
        self._embedder = embedder
        self._known = known
        self._batch_size = batch_size
        self._clock = clock
        self.embedded: list[str] = []
        """Texts this run had to embed (the rest reused stored vectors)."""

    def batches(self, chunks: list[Chunk]) -> Iterator[list[Chunk]]:
        """``chunks`` with embeddings, a batch at a time (one batch's vectors in memory)."""
        texts_left = len({c.text for c in chunks if c.text not in self._known})
        start = 0
        while start < len(chunks):
            size = self._batch_size
            if self._clock is not None:
                self._clock.check(texts_left)
                if self._clock.rate.per_second is None:
                    size = min(size, PROBE_BATCH)
            batch = chunks[start : start + size]
            before = len(self.embedded)
            yield self._embed(batch)
            texts_left -= len(self.embedded) - before
            start += size

    def _embed(self, batch: list[Chunk]) -> list[Chunk]:
        missing = list(dict.fromkeys(c.text for c in batch if c.text not in self._known))
        fresh: dict[str, NDArray[np.float32]] = {}
        if missing:
            began = self._clock.deadline.clock() if self._clock else 0.0
            fresh = dict(zip(missing, self._embedder.embed_documents(missing), strict=True))
            if self._clock:
                self._clock.timed(len(missing), self._clock.deadline.clock() - began)
            self.embedded.extend(missing)
        stamped = []
        for c in batch:
            vector = fresh[c.text] if c.text in fresh else self._known[c.text]
            stamped.append(c.model_copy(update={"embedding": tuple(vector.tolist())}))
        return stamped
