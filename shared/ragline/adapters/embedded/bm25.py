"""BM25 over one scope's chunks, in numpy: an inverted index in segments, kept up to date by writes.

SQLite's FTS5 evaluates ``bm25()`` once per matching row through its auxiliary-function API, which
costs ~15 ms per query at SciFact size; this index scores all matching chunks with a few vectorised
operations instead. Analysis matches OpenSearch's ``english`` chain: lowercase word tokens, Lucene's
English stop words, Porter stemming. Statistics are per scope (tenant + namespace), so one tenant's
documents never shift another's scores. Parameters are Lucene's: k1 = 1.2, b = 0.75,
idf = ln(1 + (N - n + 0.5) / (n + 0.5)).

A write does not rebuild the index. Each chunk's postings live in a *segment* under a *slot* number
that never changes; :meth:`Bm25Index.updated` adds one segment for the chunks a write added and
forgets the slots of those it removed, and the statistics (N, document frequencies, average length)
are taken over live slots only, so the scores are exactly those of an index built from scratch on
the same chunks. Segments are merged (dead postings dropped) once there are many or much is dead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from typing import Any

import numpy as np
from numpy.typing import NDArray

# Lucene's English stop set (what OpenSearch's `english` analyzer drops), so both stores match alike.
STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there"
    " these they this to was will with".split()
)

_WORD = re.compile(r"\w+", re.UNICODE)
_ASCII_NON_WORD = str.maketrans(dict.fromkeys(
    (c for c in map(chr, range(128)) if not (c.isalnum() or c == "_")), " "
))  # fmt: skip
K1, B = 1.2, 0.75
BUILD_BATCH = 4096
"""Chunks analysed per step of a build: bounds the word lists held at once."""
MAX_SEGMENTS = 8

Slots = NDArray[np.integer[Any]]
"""Slot or position numbers: int32 in stored postings (half the memory), int64 once remapped."""


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("porter")


def analyze(text: str) -> list[str]:
    return [_stem(w) for w in _words(text) if w not in STOPWORDS]


def _words(text: str) -> list[str]:
    """The lowercased ``\\w+`` tokens of ``text``; for ASCII text a translation and a split, which
    give the same tokens faster."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered.translate(_ASCII_NON_WORD).split()
    return _WORD.findall(lowered)


class _TermOfWord(dict[str, int]):
    """Lowercased word → term id (-1 for a stop word), filled on first sight of each word."""

    def __init__(self, ids: dict[str, int]) -> None:
        super().__init__()
        self._ids = ids

    def __missing__(self, word: str) -> int:
        term = -1 if word in STOPWORDS else self._ids.setdefault(_stem(word), len(self._ids))
        self[word] = term
        return term


class Vocabulary:
    """A scope's terms and their ids; only grows. Filled while indexing (under the store's lock),
    read by queries, which never add to it."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self._term_of_word = _TermOfWord(self.ids)

    def term_ids(self, texts: Sequence[str]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(terms, owners)``: every text's term ids in order, and the index of the text each is in."""
        words = list(map(_words, texts))
        sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        terms = np.fromiter(
            map(self._term_of_word.__getitem__, chain.from_iterable(words)),
            dtype=np.int64,
            count=int(sizes.sum()),
        )
        owners = np.repeat(np.arange(len(words), dtype=np.int64), sizes)
        kept = terms >= 0
        return terms[kept], owners[kept]

    def query_ids(self, query: str) -> list[int]:
        """The query's distinct known terms, in first-occurrence order."""
        ids = (self.ids.get(term) for term in dict.fromkeys(analyze(query)))
        return [i for i in ids if i is not None]


@dataclass(frozen=True)
class Segment:
    """Postings grouped by term: ``terms`` (sorted, distinct) own ``slots[starts[i]:starts[i + 1]]``
    with their term frequencies ``tf``."""

    terms: NDArray[np.int64]
    starts: NDArray[np.int64]
    slots: Slots
    tf: NDArray[np.float32]

    @classmethod
    def of(cls, terms: NDArray[np.int64], slots: Slots, tf: NDArray[np.float32]) -> Segment:
        """From postings in any order; each (term, slot) pair at most once."""
        order = np.argsort(terms, kind="stable")
        terms, slots, tf = terms[order], slots[order].astype(np.int32), tf[order]
        firsts = np.flatnonzero(np.diff(terms, prepend=-1)) if len(terms) else np.zeros(0, dtype=np.int64)
        return cls(terms[firsts], np.append(firsts, len(terms)), slots, tf)

    def postings(self, term: int) -> tuple[Slots, NDArray[np.float32]] | None:
        i = int(np.searchsorted(self.terms, term))
        if i == len(self.terms) or self.terms[i] != term:
            return None
        lo, hi = self.starts[i], self.starts[i + 1]
        return self.slots[lo:hi], self.tf[lo:hi]

    def triples(self) -> tuple[NDArray[np.int64], Slots, NDArray[np.float32]]:
        """Every posting as ``(term, slot, tf)`` columns."""
        return np.repeat(self.terms, np.diff(self.starts)), self.slots, self.tf


def analyse_segment(
    vocabulary: Vocabulary, texts: Sequence[str], first_slot: int
) -> tuple[Segment, NDArray[np.float32]]:
    """A segment of ``texts`` in slots ``first_slot, first_slot + 1, …``, and their lengths in terms."""
    parts: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]] = []
    lengths = np.zeros(len(texts), dtype=np.float32)
    for lo in range(0, len(texts), BUILD_BATCH):
        batch = texts[lo : lo + BUILD_BATCH]
        terms, owners = vocabulary.term_ids(batch)
        lengths[lo : lo + len(batch)] = np.bincount(owners, minlength=len(batch))
        # One key per (term, text) occurrence; counting equal keys gives the term frequency.
        keys, counts = np.unique(terms * len(batch) + owners, return_counts=True)
        parts.append((keys // len(batch), keys % len(batch) + (first_slot + lo), counts))
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return Segment.of(empty, empty, np.zeros(0, dtype=np.float32)), lengths
    terms, slots, counts = (np.concatenate(column) for column in zip(*parts, strict=True))
    return Segment.of(terms, slots, counts.astype(np.float32)), lengths


class Bm25Index:
    """One scope's BM25, a snapshot: search structures never change once built, so queries need no
    lock; a write makes a new snapshot (:meth:`updated`) that shares the untouched segments.

    Scores come out per *position*: the chunk order of the store's rows. ``slot_of`` maps positions
    to the slots their postings were indexed under.
    """

    def __init__(
        self,
        vocabulary: Vocabulary,
        segments: tuple[Segment, ...],
        lengths: NDArray[np.float32],
        slot_of: NDArray[np.int64],
    ) -> None:
        self.vocabulary = vocabulary
        self.segments = segments
        self.lengths = lengths  # per slot, dead ones included
        self.slot_of = slot_of
        self.size = len(slot_of)
        # Identity (the common case after a build, a merge or appends): scores need no remapping.
        self._identity = len(lengths) == self.size and bool(np.array_equal(slot_of, np.arange(self.size)))
        self._position = np.full(len(lengths), -1, dtype=np.int64)
        self._position[slot_of] = np.arange(self.size)
        live = lengths[slot_of]  # per position, in position order: the statistics of a fresh build
        avgdl = float(live.mean()) if self.size else 1.0
        self._norm = K1 * (1 - B + B * live / (avgdl or 1.0))

    @classmethod
    def build(cls, texts: Sequence[str]) -> Bm25Index:
        """The index of ``texts``, position ``i`` being ``texts[i]``."""
        vocabulary = Vocabulary()
        segment, lengths = analyse_segment(vocabulary, texts, 0)
        return cls(vocabulary, (segment,), lengths, np.arange(len(texts), dtype=np.int64))

    def updated(
        self, kept: NDArray[np.bool_], added: Sequence[str], order: NDArray[np.int64] | None = None
    ) -> Bm25Index:
        """The index after a write: the positions where ``kept`` holds stay, in order, ``added`` come
        after them, and ``order`` (if given) then permutes the result like the store's rows."""
        first = len(self.lengths)
        segment, lengths = analyse_segment(self.vocabulary, added, first)
        slot_of = np.concatenate((self.slot_of[kept], np.arange(first, first + len(added))))
        if order is not None:
            slot_of = slot_of[order]
        segments = (*self.segments, segment) if len(added) else self.segments
        return Bm25Index(
            self.vocabulary, segments, np.concatenate((self.lengths, lengths)), slot_of
        )._tidied()

    def _tidied(self) -> Bm25Index:
        """Past a quarter dead, or once the later segments hold more postings than the first, one
        segment of the live postings with slots renumbered to positions; past :data:`MAX_SEGMENTS`,
        the later segments merged into one (a small merge). Otherwise ``self``."""
        dead = len(self.lengths) - self.size
        base, *later = self.segments
        if dead * 4 > self.size or sum(len(s.slots) for s in later) > len(base.slots):
            live = self._live_postings(self.segments)
            segment = Segment.of(*live)
            lengths = np.ascontiguousarray(self.lengths[self.slot_of])
            return Bm25Index(self.vocabulary, (segment,), lengths, np.arange(self.size, dtype=np.int64))
        if len(self.segments) > MAX_SEGMENTS:
            terms, positions, tf = self._live_postings(later)
            merged = Segment.of(terms, self.slot_of[positions], tf)
            return Bm25Index(self.vocabulary, (base, merged), self.lengths, self.slot_of)
        return self

    def _live_postings(
        self, segments: Iterable[Segment]
    ) -> tuple[NDArray[np.int64], Slots, NDArray[np.float32]]:
        """The postings of ``segments`` on live slots, as ``(term, position, tf)``."""
        columns = [segment.triples() for segment in segments]
        terms, slots, tf = (np.concatenate(column) for column in zip(*columns, strict=True))
        positions = self._position[slots]
        live = positions >= 0
        return terms[live], positions[live], tf[live]

    def scores(self, query: str) -> NDArray[np.float32]:
        """One score per position (0 where no query term occurs)."""
        out = np.zeros(self.size, dtype=np.float32)
        for term in self.vocabulary.query_ids(query):
            hits = [hit for segment in self.segments if (hit := self._live(segment, term)) is not None]
            n = sum(len(docs) for docs, _ in hits)
            if not n:
                continue
            idf = np.log1p((self.size - n + 0.5) / (n + 0.5))
            for docs, tf in hits:
                out[docs] += idf * tf * (K1 + 1) / (tf + self._norm[docs])
        return out

    def _live(self, segment: Segment, term: int) -> tuple[Slots, NDArray[np.float32]] | None:
        """A segment's postings of ``term`` as (positions, tf), dead slots left out."""
        hit = segment.postings(term)
        if hit is None or self._identity:
            return hit
        positions = self._position[hit[0]]
        live = positions >= 0
        return (positions, hit[1]) if live.all() else (positions[live], hit[1][live])
