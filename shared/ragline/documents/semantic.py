"""Semantic segments: a run's sentences cut where their meaning moves on, before chunking.

A run (adjacent sections sharing heading path and page, as the chunker packs them) is read as one
stream of sentences. Each sentence is embedded with the namespace's own model; the distance at each
gap between two sentences is ``1 - cosine`` between the mean vector of up to :data:`WINDOW` sentences
before it and of up to :data:`WINDOW` after it (one odd sentence does not make a topic). A gap is a
*breakpoint* when its distance is at or above the document's :data:`BREAKPOINT_PERCENTILE`-th
percentile of all its gaps' distances and no lower than the gaps beside it (the windows make the
gaps next to a change rise too: only the peak is the change).

Segments are then cut greedily, sentence by sentence:

- a breakpoint closes the segment once it holds at least ``chunk_tokens / MIN_SHARE`` tokens (no
  one-sentence chunks from a run of short lines);
- a segment that would pass ``chunk_tokens`` with its next sentence closes at its largest gap
  distance among the places that leave it at least that minimum (the least bad cut, not the last
  sentence that fits).

Tables (sections with a header) are never cut here: their rows are already their units. The
segments go to :func:`~ragline.documents.chunker.chunk_document` with ``separate``, so no chunk
spans two segments. Streaming: vectors are held for a batch and a window, never for the document;
the per-sentence token counts and distances (two numbers a sentence) are what is kept.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby

import numpy as np
from numpy.typing import NDArray

from ragline.documents.limits import Deadline
from ragline.documents.parsers import ParsedDocument, Section
from ragline.documents.sentences import PARAGRAPH_BREAK, sentence_blocks
from ragline.errors import DependencyFailed
from ragline.ports import Embedder, Tokenizer

BREAKPOINT_PERCENTILE = 95.0
"""Gaps at or above this percentile of a document's gap distances are breakpoints. Swept on the
long-document set (docs/benchmarks.md, "Chunking strategies, per parser path"): 70 and 80 cut too
often (recall@10 97.3 %); 95 with a half-budget minimum matches ``fixed``'s 99.1 %."""
WINDOW = 2
"""Sentences averaged on each side of a gap."""
MIN_SHARE = 2
"""A segment holds at least ``chunk_tokens // MIN_SHARE`` tokens before a breakpoint may close it."""
EMBED_BATCH = 64
"""Sentences per embedding call (the deadline is checked before each)."""
EMBED_CHARS = 2000
"""The most of one sentence embedded to measure it (a "sentence" of a page without punctuation
would otherwise pass a model's input limit; its start says what it is about)."""

_Unit = tuple[str, str]
"""``(sentence, the break after it)``."""


@dataclass(frozen=True)
class Segmented:
    document: ParsedDocument
    """The document with every prose run cut into segments (one section each)."""
    embedded_tokens: int
    """Tokens of the sentences embedded to find the breakpoints (metered as ingestion embedding)."""


def semantic_segments(
    doc: ParsedDocument,
    *,
    embedder: Embedder,
    tokenizer: Tokenizer,
    chunk_tokens: int,
    deadline: Deadline,
    name: str,
) -> Segmented:
    """``doc`` cut into semantic segments (module docstring); tables pass through, one section per
    table run."""
    runs = [
        (key, list(group))
        for key, group in groupby(doc.sections, key=lambda s: (s.heading_path, s.page, s.header))
    ]
    measured: list[tuple[NDArray[np.int64], NDArray[np.float64]] | None] = []
    spent = 0
    for (_, _, header), sections in runs:
        if header:
            measured.append(None)
            continue
        tokens, distances = _measure(_units(sections), embedder, tokenizer, deadline, name)
        spent += int(tokens.sum())
        measured.append((tokens, distances))
    gaps = [m[1] for m in measured if m is not None and len(m[1])]
    threshold = float(np.percentile(np.concatenate(gaps), BREAKPOINT_PERCENTILE)) if gaps else np.inf
    out: list[Section] = []
    for ((heading_path, page, header), sections), m in zip(runs, measured, strict=True):
        if m is None:
            out.append(
                Section(
                    text="\n".join(s.text for s in sections),
                    heading_path=heading_path,
                    page=page,
                    header=header,
                )
            )
            continue
        for text in _cut(_units(sections), m[0], m[1], threshold, chunk_tokens):
            out.append(Section(text=text, heading_path=heading_path, page=page))
    return Segmented(doc.model_copy(update={"sections": out}), spent)


def _units(sections: Sequence[Section]) -> Iterator[_Unit]:
    """A run's sentences with the break after each; its sections are joined by paragraph breaks (a
    section's last sentence has the break ``""``: the run's last one keeps it)."""
    held: _Unit | None = None
    for section in sections:
        for sentences, breaks in sentence_blocks(section.text):
            for unit in zip(sentences, breaks, strict=True):
                if held is not None:
                    yield held[0], held[1] or PARAGRAPH_BREAK
                held = unit
    if held is not None:
        yield held


def _measure(
    units: Iterator[_Unit], embedder: Embedder, tokenizer: Tokenizer, deadline: Deadline, name: str
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Each sentence's token count, and each gap's distance (one fewer than the sentences)."""
    counts = array("q")  # 8 bytes a sentence, not a Python int's 28 and a list slot
    distances = array("d")
    held: list[NDArray[np.float32]] = []  # vectors from absolute index `base` on
    base = 0
    batch: list[str] = []

    def gaps(total: int | None) -> None:
        """Distances of every gap whose windows are complete (all remaining ones at the end)."""
        nonlocal held, base
        stop = base + len(held)
        while True:
            gap = len(distances)  # between sentence `gap` and `gap + 1`
            if gap + 1 >= (stop if total is None else total) or (total is None and gap + WINDOW >= stop):
                break
            left = held[max(gap - WINDOW + 1, base) - base : gap + 1 - base]
            right = held[gap + 1 - base : min(gap + 1 + WINDOW, stop) - base]
            a, b = np.mean(left, axis=0), np.mean(right, axis=0)
            norms = float(np.linalg.norm(a) * np.linalg.norm(b))
            distances.append(1.0 - float(a @ b) / norms if norms > 0 else 1.0)
        keep = len(distances) - WINDOW + 1  # the next gap's left window starts here
        if keep > base:
            held = held[keep - base :]
            base = keep

    def embed() -> None:
        deadline.check(name)
        vectors = embedder.embed_documents([text[:EMBED_CHARS] for text in batch])
        found = tokenizer.count_many(batch)
        if len(vectors) != len(batch) or len(found) != len(batch):
            raise DependencyFailed(
                f"the embedder or tokenizer returned {len(vectors)}/{len(found)} results for {len(batch)}"
                " sentences",
                expected=len(batch),
            )
        held.extend(np.asarray(vectors, dtype=np.float32))
        counts.extend(found)
        batch.clear()
        gaps(None)

    for sentence, _ in units:
        batch.append(sentence)
        if len(batch) == EMBED_BATCH:
            embed()
    if batch:
        embed()
    gaps(len(counts))
    return np.frombuffer(counts, dtype=np.int64), np.frombuffer(distances, dtype=np.float64)


def _cut(
    units: Iterator[_Unit],
    tokens: NDArray[np.int64],
    distances: NDArray[np.float64],
    threshold: float,
    budget: int,
) -> Iterator[str]:
    """The run's segments' texts (module docstring's rules)."""
    least = max(1, budget // MIN_SHARE)
    current: list[tuple[str, str, int]] = []  # (sentence, break, absolute index)
    held = 0
    last = len(tokens) - 1
    for index, (sentence, brk) in enumerate(units):
        current.append((sentence, brk, index))
        held += int(tokens[index])
        if index == last:
            break
        if held >= least and _peak(distances, index, threshold):
            yield _joined(current)
            current, held = [], 0
        elif held + int(tokens[index + 1]) > budget:
            cut = _best_cut(current, tokens, distances, least)
            yield _joined(current[: cut + 1])
            current = current[cut + 1 :]
            held = sum(int(tokens[i]) for _, _, i in current)
    if current:
        yield _joined(current)


def _peak(distances: NDArray[np.float64], gap: int, threshold: float) -> bool:
    """Whether ``gap`` is a breakpoint: at or above the threshold and no lower than either neighbour
    (the windows make the gaps beside a topic change rise too; only its peak is the change)."""
    d = distances[gap]
    before = distances[gap - 1] if gap > 0 else -np.inf
    after = distances[gap + 1] if gap + 1 < len(distances) else -np.inf
    return bool(d >= threshold and d >= before and d >= after)


def _best_cut(
    current: list[tuple[str, str, int]], tokens: NDArray[np.int64], distances: NDArray[np.float64], least: int
) -> int:
    """The position in ``current`` after which to close it: the largest gap distance among those
    leaving it at least ``least`` tokens (its last sentence if none does)."""
    best, best_distance, held = len(current) - 1, -np.inf, 0
    for position, (_, _, index) in enumerate(current):
        held += int(tokens[index])
        if held >= least and distances[index] > best_distance:
            best, best_distance = position, float(distances[index])
    return best


def _joined(units: list[tuple[str, str, int]]) -> str:
    return "".join(sentence + brk for sentence, brk, _ in units[:-1]) + units[-1][0]
