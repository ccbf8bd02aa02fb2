"""Structure-aware chunking: whole sentences packed up to a token budget, with sentence overlap.

Pure and deterministic: the same document, tokenizer and settings give the same chunks, ids and
sequence numbers. The tokenizer is called once per document, with every sentence in one batch.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from itertools import chain, groupby

from ragline.documents.parsers import ParsedDocument, Section
from ragline.documents.sentences import PARAGRAPH_BREAK, SENTENCE_BREAK, split_with_breaks
from ragline.domain.models import Chunk, ChunkMetadata
from ragline.errors import DependencyFailed, InvalidRequest
from ragline.ports import Embedder, Tokenizer


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
      section); ``text`` is only the sentences, without the heading path.
    """
    if chunk_tokens < 1:
        raise InvalidRequest(
            f"chunk_tokens must be at least 1, got {chunk_tokens}", chunk_tokens=chunk_tokens
        )
    if overlap_tokens < 0:
        raise InvalidRequest(
            f"overlap_tokens must be >= 0, got {overlap_tokens}", overlap_tokens=overlap_tokens
        )
    if window_sentences < 0:
        raise InvalidRequest(
            f"window_sentences must be >= 0, got {window_sentences}", window_sentences=window_sentences
        )

    runs: list[tuple[Section, list[str], list[str]]] = []
    for _, group in groupby(doc.sections, key=lambda s: (s.heading_path, s.page)):
        sections = list(group)
        sentences: list[str] = []
        breaks: list[str] = []
        for section in sections:
            s, b = split_with_breaks(section.text)
            if s:
                if breaks:
                    breaks[-1] = PARAGRAPH_BREAK
                sentences += s
                breaks += b
        if sentences:
            runs.append((sections[0], sentences, breaks))
    if not runs:
        return []

    everything = list(chain.from_iterable(sentences for _, sentences, _ in runs))
    counts = tokenizer.count_many(everything)
    if len(counts) != len(everything):
        raise DependencyFailed(
            f"tokenizer returned {len(counts)} counts for {len(everything)} texts", expected=len(everything)
        )

    chunks: list[Chunk] = []
    offset = 0
    for section, run_sentences, run_breaks in runs:
        sentences, breaks = run_sentences, run_breaks
        tokens = counts[offset : offset + len(sentences)]
        offset += len(sentences)
        if max(tokens) > chunk_tokens:
            sentences, breaks, tokens = _split_long(sentences, breaks, tokens, chunk_tokens)
        joined = list(map(str.__add__, sentences, breaks))
        last = len(sentences)
        for start, end in _pack(tokens, chunk_tokens, overlap_tokens):
            lo, hi = max(0, start - window_sentences), min(last, end + window_sentences)
            metadata = ChunkMetadata(
                filename=filename,
                source=source,
                page=section.page,
                heading_path=section.heading_path,
                wider_text="".join(joined[lo : hi - 1]) + sentences[hi - 1],
            )
            chunks.append(
                Chunk(
                    document_id=document_id,
                    sequence_number=len(chunks),
                    text="".join(joined[start : end - 1]) + sentences[end - 1],
                    metadata=metadata,
                )
            )
    return chunks


def _pack(tokens: Sequence[int], budget: int, overlap: int) -> Iterator[tuple[int, int]]:
    """``[start, end)`` unit ranges: greedy fill to ``budget``, then back up by ``overlap`` tokens."""
    n = len(tokens)
    start = 0
    while start < n:
        end, total = start + 1, tokens[start]
        while end < n and total + tokens[end] <= budget:
            total += tokens[end]
            end += 1
        yield start, end
        if end == n:
            return
        # The next chunk repeats trailing units of this one; it must still take unit `end` and move on.
        room = min(overlap, budget - tokens[end])
        back, carried = end, 0
        while back - 1 > start and carried + tokens[back - 1] <= room:
            back -= 1
            carried += tokens[back]
        start = back


def _split_long(
    sentences: list[str], breaks: list[str], tokens: list[int], budget: int
) -> tuple[list[str], list[str], list[int]]:
    """Replace each sentence over ``budget`` with word-boundary pieces that fit it."""
    out_s: list[str] = []
    out_b: list[str] = []
    out_t: list[int] = []
    for sentence, brk, count in zip(sentences, breaks, tokens, strict=True):
        if count <= budget:
            out_s.append(sentence)
            out_b.append(brk)
            out_t.append(count)
            continue
        pieces = list(_word_pieces(sentence, count, budget))
        for text, glue, estimate in pieces:
            out_s.append(text)
            out_b.append(glue)
            out_t.append(estimate)
        out_b[-1] = brk
    return out_s, out_b, out_t


def _word_pieces(sentence: str, count: int, budget: int) -> Iterator[tuple[str, str, int]]:
    """``(text, break after, estimated tokens)`` pieces of one over-long sentence."""
    words = sentence.split()
    n = len(words)
    extra_chars = sum(map(len, words)) - n
    extra_tokens = count - n
    # 1 token per word, the rest spread by length: exact when a word is a token, fair for subwords.
    if extra_tokens >= 0 and extra_chars > 0:
        estimates = [1 + extra_tokens * (len(w) - 1) / extra_chars for w in words]
    else:
        estimates = [count / n] * n
    target = count / math.ceil(count / budget)  # balanced pieces, each at most the budget

    current: list[str] = []
    total = 0.0
    for word, estimate in zip(words, estimates, strict=True):
        if estimate > budget:  # one word over the budget: equal character slices
            if current:
                yield " ".join(current), SENTENCE_BREAK, math.ceil(total - 1e-9)
                current, total = [], 0.0
            slices = math.ceil(estimate / budget)
            size = math.ceil(len(word) / slices)
            parts = [word[i : i + size] for i in range(0, len(word), size)]
            for i, part in enumerate(parts):
                glue = "" if i < len(parts) - 1 else SENTENCE_BREAK
                yield part, glue, min(budget, math.ceil(estimate / len(parts) - 1e-9))
            continue
        if current and total + estimate > target + 1e-9:
            yield " ".join(current), SENTENCE_BREAK, math.ceil(total - 1e-9)
            current, total = [], 0.0
        current.append(word)
        total += estimate
    if current:
        yield " ".join(current), SENTENCE_BREAK, math.ceil(total - 1e-9)


class WordCachedCounter:
    """A :class:`Tokenizer` that counts each distinct whitespace-separated word once and sums.

    Exact for tokenizers whose count is additive over whitespace-separated words, such as BERT
    WordPiece (its pre-tokenizer splits on whitespace and punctuation first; normalization is per
    character); an approximation for byte-level BPE. Much cheaper than encoding every sentence
    because natural text repeats words. One ``count_many`` call on the wrapped tokenizer per call.
    """

    def __init__(self, inner: Tokenizer, *, max_entries: int = 500_000) -> None:
        self._inner = inner
        self._max_entries = max_entries
        self._cache: dict[str, int] = {}

    def count_many(self, texts: Sequence[str]) -> list[int]:
        split = [text.split() for text in texts]
        cache = self._cache
        missing = list(set(chain.from_iterable(split)).difference(cache))
        if missing:
            cache.update(zip(missing, self._inner.count_many(missing), strict=True))
        lookup = cache.__getitem__
        counts = [sum(map(lookup, words)) for words in split]
        if len(cache) > self._max_entries:
            cache.clear()
        return counts


class EmbedderTokenCounter:
    """A :class:`Tokenizer` that counts with the embedder's own ``count_tokens``.

    Used when embeddings come from an endpoint (no local tokenizer to load): chunks are then sized
    in the unit the endpoint's limits are stated in, and no MiniLM model is read at cold start.
    """

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [self._embedder.count_tokens(text) for text in texts]
