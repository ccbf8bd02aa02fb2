"""Structure-aware chunking: whole sentences packed up to a token budget, with sentence overlap.

Pure and deterministic: the same document, tokenizer and settings give the same chunks, ids and
sequence numbers. Streaming: sentences are produced lazily, counted in batches (one tokenizer call
for most documents) and packed through a window of the units the current chunk still needs, so
working memory stays bounded however many sentences a document holds (``a. a. a. …``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain, groupby

import numpy as np

from ragline.documents.limits import (
    DEFAULT_DOCUMENT_SECONDS,
    DEFAULT_MAX_CHUNK_BYTES,
    ChunkBytes,
    Deadline,
    bounded_heading_path,
)
from ragline.documents.packing import Segment, Window, fit, pack
from ragline.documents.parsers import ParsedDocument, Section
from ragline.documents.sentences import PARAGRAPH_BREAK, SENTENCE_BREAK, sentence_blocks
from ragline.domain.models import Chunk, ChunkMetadata
from ragline.errors import DependencyFailed, InvalidRequest
from ragline.ports import Embedder, Tokenizer

COUNT_BATCH = 16_384
"""Sentences per tokenizer call: large enough that most documents take one call, small enough that
a document of millions of tiny sentences is never held as one list."""
MIN_CONTEXT_CHARS = 256
"""``wider_text`` adds at most half the chunk's length (and at least this) on each side: a window of
two 8 KB "sentences" around a 1 KB chunk would otherwise multiply what the store holds."""
MAX_SENTENCE_CHARS = 8192
"""Longer "sentences" (no boundary for pages) are cut at a space first: far over any chunk budget,
they would be split anyway, and the tokenizer never sees a 20 MB string."""

TABLE_ROWS_SHARE = 8
"""A table's rows fill an eighth (1/8) of the chunk budget (at least one row, never split unless it passes
the whole budget), below their caption and header row: a question about a cell then finds a chunk of
its row and a neighbour or two. Measured on 52 cell questions (docs/benchmarks.md, "Tables kept as
tables"): rank-1 rows 90.4 % with rows filling the budget, 92.3 % with a quarter, 94.2 % with an
eighth (hybrid); semantic search alone 61.5 → 86.5 %."""

_Block = tuple[int, list[str], list[str]]
"""``(run number, sentences, breaks)``: a run is adjacent sections sharing heading path and page."""


def chunk_document(
    doc: ParsedDocument,
    *,
    document_id: str,
    tokenizer: Tokenizer,
    chunk_tokens: int = 200,
    overlap_tokens: int = 32,
    filename: str = "",
    source: str = "",
    window_sentences: int = 2,
    parent_tokens: int = 0,
    separate: bool = False,
    deadline: Deadline | None = None,
    max_bytes: int = DEFAULT_MAX_CHUNK_BYTES,
) -> list[Chunk]:
    """Split ``doc`` into chunks of at most ``chunk_tokens`` tokens, in document order.

    - Text is never merged across sections with a different heading path or page; adjacent sections
      that share both are packed together (joined by a paragraph break).
    - Chunks hold whole sentences; a sentence longer than the budget is split on word boundaries,
      sized by its token count spread over its words (1 token per word plus the rest in proportion
      to word length; exact for whitespace counting, an estimate for subword tokenizers). A single
      word over the budget is cut into equal character slices.
    - Each chunk after the first of a section starts with the previous chunk's trailing sentences
      totalling at most ``overlap_tokens``, and always leaving room for at least one new sentence (so an
      overlap at or above the budget is harmless).
    - ``metadata.wider_text`` is the chunk plus ``window_sentences`` sentences on each side (same
      section), each side cut to half the chunk's length (at least :data:`MIN_CONTEXT_CHARS`);
      ``text`` is only the sentences, without the heading path.
    - ``metadata.heading_path`` is bounded (:func:`~ragline.documents.limits.bounded_heading_path`):
      long headings are cut and the nearest ones kept, so no chunk carries a copy of megabytes.
    - All chunks together stay within ``max_bytes`` (UTF-8 text, window and metadata), checked as
      they are made: past it, :class:`DocumentTooLarge` naming the file, before anything is stored.
    - A section with a ``header`` (a table: its caption and header row) is chunked on its own, one
      unit per line (a row), never split unless one row alone passes the budget; every chunk starts
      with the header, the rows fill :data:`TABLE_ROWS_SHARE` of the budget, and no row overlaps. A
      header over half the budget is kept once, at the table's start, instead.
    - ``parent_tokens`` (the ``hierarchical`` strategy): the same chunks, grouped in order into parents
      spanning at most that many tokens of their run; a chunk's ``wider_text`` is its whole parent (a
      table's: its header and the parent's rows), not a sentence window. 0: no parents.
    - ``separate``: every section is a run of its own, never packed with its neighbours (the
      ``semantic`` strategy's segments).
    - ``deadline`` (shared with parsing; a fresh :data:`DEFAULT_DOCUMENT_SECONDS` one if omitted) is
      checked per tokenizer batch and per chunk: past it, :class:`DocumentDeadlineExceeded`.
    """
    if chunk_tokens < 1:
        raise InvalidRequest(
            f"chunk_tokens must be at least 1, got {chunk_tokens}", chunk_tokens=chunk_tokens
        )
    if overlap_tokens < 0:
        raise InvalidRequest(
            f"overlap_tokens must be >= 0, got {overlap_tokens}", overlap_tokens=overlap_tokens
        )
    if parent_tokens and parent_tokens < chunk_tokens:
        raise InvalidRequest(
            f"parent_tokens must be 0 or at least chunk_tokens ({chunk_tokens}), got {parent_tokens}",
            parent_tokens=parent_tokens,
        )
    if window_sentences < 0:
        raise InvalidRequest(
            f"window_sentences must be >= 0, got {window_sentences}", window_sentences=window_sentences
        )
    deadline = deadline or Deadline(DEFAULT_DOCUMENT_SECONDS)
    name = filename or document_id
    spent = ChunkBytes(name, max_bytes)
    runs = (
        [((s.heading_path, s.page, s.header), [s]) for s in doc.sections]
        if separate
        else [
            (key, list(group))
            for key, group in groupby(doc.sections, key=lambda s: (s.heading_path, s.page, s.header))
        ]
    )
    repeated = _repeated_headers(runs, tokenizer, chunk_tokens)
    budgets = [chunk_tokens - repeated.get(number, (0, ""))[0] for number in range(len(runs))]
    segments = fit(_counted(_blocks(runs, repeated), tokenizer, deadline, name), budgets)

    chunks: list[Chunk] = []
    for number, run_segments in groupby(segments, key=lambda segment: segment[0]):
        heading_path = bounded_heading_path(runs[number][0][0])
        page = runs[number][0][1]
        head = repeated[number][1] + "\n" if number in repeated else ""
        overlap = 0 if head else overlap_tokens  # a table's rows are not repeated: its header is
        budget = min(budgets[number], max(1, chunk_tokens // TABLE_ROWS_SHARE)) if head else budgets[number]
        window = Window(run_segments)
        if parent_tokens:
            parent_budget = parent_tokens - repeated.get(number, (0, ""))[0]
            pieces = _with_parents(window, parent_budget, budget, overlap)
        else:
            pieces = _with_windows(window, budget, overlap, window_sentences, len(head))
        for body, context in pieces:
            deadline.check(name)
            text = head + body
            wider = head + context
            spent.add(text, wider, filename, source, *heading_path)
            metadata = ChunkMetadata(
                filename=filename, source=source, page=page, heading_path=heading_path, wider_text=wider
            )
            chunks.append(
                Chunk(document_id=document_id, sequence_number=len(chunks), text=text, metadata=metadata)
            )
    return chunks


def _with_windows(
    window: Window, budget: int, overlap: int, sentences: int, head_chars: int
) -> Iterator[tuple[str, str]]:
    """``(chunk, sentence window)`` of a run: ``sentences`` units on each side, each side cut to half
    the chunk's length (at least :data:`MIN_CONTEXT_CHARS`)."""
    for lo, start, end, hi in pack(window, budget, overlap, sentences):
        body = window.join(start, end)
        side = max((head_chars + len(body)) // 2, MIN_CONTEXT_CHARS)
        yield body, window.around(lo, start, end, hi, side)


def _with_parents(window: Window, parent_budget: int, budget: int, overlap: int) -> Iterator[tuple[str, str]]:
    """``(chunk, its parent)`` of a run: the chunks ``fixed`` makes (the same greedy fill and overlap),
    grouped in order into parents that span at most ``parent_budget`` tokens. A parent's text is its
    chunks' text without the repeats their overlap makes (two parents share at most one overlap)."""
    held: list[str] = []
    parent = brk = ""
    first = last = 0  # the parent's first unit's total before it; its last chunk's end
    for _, start, end, _ in pack(window, budget, overlap, 0):
        body = window.join(start, end)
        if held and window.total(end) - first > parent_budget:
            yield from ((child, parent) for child in held)
            held = []
        if held:
            parent += brk + window.join(last, end) if end > last else ""
        else:
            parent, first = body, window.total(start)
        held.append(body)
        last, brk = end, window.break_after(end - 1)  # read now: the window may drop it before the next
    yield from ((child, parent) for child in held)


def _repeated_headers(
    runs: Sequence[tuple[tuple[object, object, str], list[Section]]], tokenizer: Tokenizer, chunk_tokens: int
) -> dict[int, tuple[int, str]]:
    """``{run number: (tokens, header)}`` for the runs whose header (a table's caption and header row)
    starts each of their chunks: those whose header takes at most half the budget. A wider one is
    kept once, as the run's first lines (:func:`_blocks`)."""
    headed = [(number, key[2]) for number, (key, _) in enumerate(runs) if key[2]]
    if not headed:
        return {}
    counts = tokenizer.count_many([header for _, header in headed])
    return {
        number: (count, header)
        for (number, header), count in zip(headed, counts, strict=True)
        if count <= chunk_tokens // 2
    }


def _blocks(
    runs: Sequence[tuple[tuple[object, object, str], list[Section]]], repeated: dict[int, tuple[int, str]]
) -> Iterator[_Block]:
    """Every run's sentences in blocks; a run's sections are joined by paragraph breaks. A section with
    a header (a table) is one unit per line, never cut into sentences; its header leads the run when
    it is too wide to start every chunk."""
    for number, ((_, _, header), sections) in enumerate(runs):
        held: _Block | None = None
        for i, section in enumerate(sections):
            if header:
                lead = header.split("\n") if i == 0 and number not in repeated else []
                lines = [*lead, *section.text.split("\n")]
                units = [_bounded(lines, ["\n"] * (len(lines) - 1) + [""])]
            else:
                units = list(sentence_blocks(section.text))
            for sentences, breaks in units:
                if held is not None:
                    if not held[2][-1]:  # "" only after a section's last sentence
                        held[2][-1] = PARAGRAPH_BREAK
                    yield held
                held = (number, *_bounded(sentences, breaks))
        if held is not None:
            yield held


def _bounded(sentences: list[str], breaks: list[str]) -> tuple[list[str], list[str]]:
    """Sentences over :data:`MAX_SENTENCE_CHARS` cut at the last space before it (anywhere if none)."""
    if max(map(len, sentences)) <= MAX_SENTENCE_CHARS:
        return sentences, breaks
    out_s: list[str] = []
    out_b: list[str] = []
    for sentence, brk in zip(sentences, breaks, strict=True):
        start = 0
        while len(sentence) - start > MAX_SENTENCE_CHARS:
            cut = sentence.rfind(" ", start + 1, start + MAX_SENTENCE_CHARS + 1)
            if cut > start:
                out_s.append(sentence[start:cut])
                out_b.append(SENTENCE_BREAK)
                start = cut + 1
            else:
                out_s.append(sentence[start : start + MAX_SENTENCE_CHARS])
                out_b.append("")
                start += MAX_SENTENCE_CHARS
        out_s.append(sentence[start:])
        out_b.append(brk)
    return out_s, out_b


def _counted(
    blocks: Iterator[_Block], tokenizer: Tokenizer, deadline: Deadline, name: str
) -> Iterator[Segment]:
    """Token counts for blocks gathered into batches of about :data:`COUNT_BATCH` sentences; a batch's
    blocks of one run come out as one segment."""
    batch: list[_Block] = []
    size = 0
    for block in chain(blocks, [None]):
        if block is not None:
            batch.append(block)
            size += len(block[1])
            if size < COUNT_BATCH:
                continue
        if not batch:
            return
        deadline.check(name)
        texts = [sentence for _, sentences, _ in batch for sentence in sentences]
        counts = tokenizer.count_many(texts)
        if len(counts) != len(texts):
            raise DependencyFailed(
                f"tokenizer returned {len(counts)} counts for {len(texts)} texts", expected=len(texts)
            )
        offset = 0
        for number, blocks_of_run in groupby(batch, key=lambda block: block[0]):
            sentences, breaks = [], []
            for _, block_sentences, block_breaks in blocks_of_run:
                sentences += block_sentences
                breaks += block_breaks
            yield number, sentences, breaks, list(counts[offset : offset + len(sentences)])
            offset += len(sentences)
        batch, size = [], 0


class WordCachedCounter:
    """A :class:`Tokenizer` that counts each distinct whitespace-separated word once and sums.

    Exact for tokenizers whose count is additive over whitespace-separated words, such as BERT
    WordPiece (its pre-tokenizer splits on whitespace and punctuation first; normalization is per
    character); an approximation for byte-level BPE. Much cheaper than encoding every sentence
    because natural text repeats words. One ``count_many`` call on the wrapped tokenizer per call.

    The texts are split in one call (joined around a separator word no text contains) and the
    per-text sums taken in numpy, so the Python work per word is one dictionary lookup.
    """

    def __init__(self, inner: Tokenizer, *, max_entries: int = 500_000) -> None:
        self._inner = inner
        self._max_entries = max_entries
        self._cache: dict[str, int] = {_SEPARATOR_WORD: -1}

    def count_many(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        joined = _SEPARATOR.join(texts)
        if joined.count(_SEPARATOR_WORD) != len(texts) - 1:  # some text holds the separator itself
            return self._count_each(texts)
        words = joined.split()
        self._learn(set(words))
        known = np.fromiter(map(self._cache.__getitem__, words), dtype=np.int64, count=len(words))
        separators = np.flatnonzero(known < 0)  # text i's words lie between separators i-1 and i
        known[separators] = 0
        totals = np.concatenate(([0], np.cumsum(known)))
        ends = np.append(separators, len(words))
        starts = np.concatenate(([0], separators + 1))
        counts: list[int] = (totals[ends] - totals[starts]).tolist()
        self._trim()
        return counts

    def _count_each(self, texts: Sequence[str]) -> list[int]:
        """The texts one by one, for the rare batch where a text holds the separator word."""
        split = [text.split() for text in texts]
        words = set(chain.from_iterable(split))
        separator = self._inner.count_many([_SEPARATOR_WORD])[0] if _SEPARATOR_WORD in words else 0
        self._learn(words)
        lookup = self._cache.__getitem__  # the separator word's entry is the marker -1: corrected
        counts = [sum(map(lookup, ws)) + ws.count(_SEPARATOR_WORD) * (separator + 1) for ws in split]
        self._trim()
        return counts

    def _learn(self, words: set[str]) -> None:
        missing = list(words.difference(self._cache))
        if missing:
            self._cache.update(zip(missing, self._inner.count_many(missing), strict=True))

    def _trim(self) -> None:
        if len(self._cache) > self._max_entries:
            self._cache.clear()
            self._cache[_SEPARATOR_WORD] = -1


_SEPARATOR_WORD = "\x00"
"""Joins a batch's texts (as `` \\x00 ``) so one ``split`` serves them all. Its cache entry is -1,
which marks where each text ends; a batch whose texts hold it is counted text by text."""
_SEPARATOR = f" {_SEPARATOR_WORD} "


class EmbedderTokenCounter:
    """A :class:`Tokenizer` that counts with the embedder's own ``count_tokens``.

    Used when embeddings come from an endpoint (no local tokenizer to load): chunks are then sized
    in the unit the endpoint's limits are stated in, and no MiniLM model is read at cold start.
    """

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self._embedder.count_tokens(text) for text in texts]
