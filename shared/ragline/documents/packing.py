"""Packing units into chunks: over-long sentences cut to fit, then a greedy fill with overlap.

Works on a stream: :class:`Window` pulls a run's units as :func:`pack` needs them and drops those
no later chunk (or its context) can reach, so memory is a chunk and its context, not the run.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from ragline.documents.sentences import SENTENCE_BREAK

Segment = tuple[int, list[str], list[str], list[int]]
"""``(run number, texts, breaks after them, token counts)``: consecutive units of one run."""


def fit(segments: Iterator[Segment], budget: int) -> Iterator[Segment]:
    """Each sentence over ``budget`` replaced by word-boundary pieces that fit it."""
    for number, sentences, breaks, tokens in segments:
        if max(tokens) <= budget:
            yield number, sentences, breaks, tokens
            continue
        out_s: list[str] = []
        out_b: list[str] = []
        out_t: list[int] = []
        for sentence, brk, count in zip(sentences, breaks, tokens, strict=True):
            if count <= budget:
                out_s.append(sentence)
                out_b.append(brk)
                out_t.append(count)
                continue
            for text, glue, estimate in word_pieces(sentence, count, budget):
                out_s.append(text)
                out_b.append(glue)
                out_t.append(estimate)
            out_b[-1] = brk
        yield number, out_s, out_b, out_t


class Window:
    """The units (sentences or pieces) of one run, pulled on demand by absolute index; those no chunk
    can need any more are dropped, so memory holds a chunk and its context, not the run."""

    def __init__(self, segments: Iterator[Segment]) -> None:
        self._segments = segments
        self.texts: list[str] = []
        self.breaks: list[str] = []
        self.tokens: list[int] = []
        self.base = 0  # absolute index of the lists' first unit

    def has(self, index: int) -> bool:
        while index - self.base >= len(self.tokens):
            segment = next(self._segments, None)
            if segment is None:
                return False
            _, texts, breaks, tokens = segment
            self.texts += texts
            self.breaks += breaks
            self.tokens += tokens
        return True

    def join(self, start: int, end: int) -> str:
        """Units ``[start, end)`` with the breaks between them (not after the last)."""
        lo, hi = start - self.base, end - self.base
        texts, breaks = self.texts, self.breaks
        return "".join([part for i in range(lo, hi - 1) for part in (texts[i], breaks[i])] + [texts[hi - 1]])

    def drop_before(self, index: int) -> None:
        dead = index - self.base
        if dead > 1024 and dead * 2 > len(self.tokens):  # amortised: each unit moves O(1) times
            del self.texts[:dead], self.breaks[:dead], self.tokens[:dead]
            self.base = index


def pack(window: Window, budget: int, overlap: int, context: int) -> Iterator[tuple[int, int, int, int]]:
    """``(lo, start, end, hi)`` unit ranges: ``[start, end)`` greedily filled to ``budget``, then the
    next start backs up by ``overlap`` tokens; ``[lo, hi)`` adds ``context`` units on each side."""
    tokens = window.tokens  # extended and trimmed in place by the window
    start = 0
    while window.has(start):
        base = window.base
        end, total = start + 1, tokens[start - base]
        while window.has(end) and total + tokens[end - base] <= budget:
            total += tokens[end - base]
            end += 1
        hi = end
        while hi < end + context and window.has(hi):
            hi += 1
        yield max(0, start - context), start, end, hi
        if not window.has(end):
            return
        # The next chunk repeats trailing units of this one; it must still take unit `end` and move on.
        room = min(overlap, budget - tokens[end - base])
        back, carried = end, 0
        while back - 1 > start and carried + tokens[back - 1 - base] <= room:
            back -= 1
            carried += tokens[back - base]
        start = back
        window.drop_before(start - context)


def word_pieces(sentence: str, count: int, budget: int) -> Iterator[tuple[str, str, int]]:
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
