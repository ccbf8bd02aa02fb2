"""Packing units into chunks: over-long sentences cut to fit, then a greedy fill with overlap.

Works on a stream: :class:`Window` pulls a run's units as :func:`pack` needs them and drops those
no later chunk (or its context) can reach, so memory is a chunk and its context, not the run.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, chain, islice

from ragline.documents.sentences import SENTENCE_BREAK

Segment = tuple[int, list[str], list[str], list[int]]
"""``(run number, texts, breaks after them, token counts)``: consecutive units of one run."""


def fit(segments: Iterator[Segment], budgets: Sequence[int]) -> Iterator[Segment]:
    """Each sentence over its run's budget (``budgets[run number]``) replaced by word-boundary pieces
    that fit it."""
    for number, sentences, breaks, tokens in segments:
        budget = budgets[number]
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
    can need any more are dropped, so memory holds a chunk and its context, not the run.

    ``totals[i]`` is the token count of every unit before local index ``i`` (since the run began), so
    the tokens of units ``[a, b)`` are ``totals[b] - totals[a]`` and a greedy fill is one bisection.
    """

    def __init__(self, segments: Iterator[Segment]) -> None:
        self._segments = segments
        self.parts: list[str] = []  # each unit's text, then the break after it
        self.tokens: list[int] = []
        self.totals: list[int] = [0]
        self.base = 0  # absolute index of the lists' first unit

    @property
    def stop(self) -> int:
        """One past the absolute index of the last unit pulled so far."""
        return self.base + len(self.tokens)

    def has(self, index: int) -> bool:
        while index >= self.stop:
            if not self._pull():
                return False
        return True

    def _pull(self) -> bool:
        segment = next(self._segments, None)
        if segment is None:
            return False
        _, texts, breaks, tokens = segment
        self.parts += chain.from_iterable(zip(texts, breaks, strict=True))
        self.tokens += tokens
        self.totals += islice(accumulate(tokens, initial=self.totals[-1]), 1, None)
        return True

    def fill(self, start: int, budget: int) -> int:
        """The end of the greedy fill from ``start``: as many units as fit ``budget``, at least one."""
        limit = self.totals[start - self.base] + budget
        while self.totals[-1] <= limit and self._pull():  # all pulled units fit: more may
            pass
        lo = start - self.base + 1
        return max(start + 1, bisect_right(self.totals, limit, lo) - 1 + self.base)

    def carried(self, start: int, end: int, room: int) -> int:
        """The first unit after ``start`` from which the units up to ``end`` total at most ``room``."""
        lo, hi = start - self.base + 1, end - self.base
        return bisect_left(self.totals, self.totals[hi] - room, lo, hi) + self.base

    def join(self, start: int, end: int) -> str:
        """Units ``[start, end)`` with the breaks between them (not after the last)."""
        return "".join(self.parts[2 * (start - self.base) : 2 * (end - self.base) - 1])

    def total(self, index: int) -> int:
        """Tokens of every unit before ``index`` since the run began."""
        return self.totals[index - self.base]

    def break_after(self, index: int) -> str:
        """The break after unit ``index``."""
        return self.parts[2 * (index - self.base) + 1]

    def around(self, lo: int, start: int, end: int, hi: int, side: int) -> str:
        """Units ``[lo, hi)`` joined, with the context before ``start`` and after ``end`` each cut to
        its ``side`` characters nearest the chunk (at a space when there is one)."""
        base = self.base
        before = "".join(self.parts[2 * (lo - base) : 2 * (start - base)])
        after = "".join(self.parts[2 * (end - base) - 1 : 2 * (hi - base) - 1])
        if len(before) > side:
            cut = before.find(" ", len(before) - side)
            before = before[cut + 1 :] if 0 <= cut < len(before) - 1 else before[-side:]
        if len(after) > side:
            cut = after.rfind(" ", 1, side)
            after = after[:cut] if cut > 0 else after[:side]
        return before + self.join(start, end) + after

    def drop_before(self, index: int) -> None:
        dead = index - self.base
        if dead > 1024 and dead * 2 > len(self.tokens):  # amortised: each unit moves O(1) times
            del self.parts[: 2 * dead], self.tokens[:dead], self.totals[:dead]
            self.base = index


def pack(window: Window, budget: int, overlap: int, context: int) -> Iterator[tuple[int, int, int, int]]:
    """``(lo, start, end, hi)`` unit ranges: ``[start, end)`` greedily filled to ``budget``, then the
    next start backs up by ``overlap`` tokens; ``[lo, hi)`` adds ``context`` units on each side."""
    start = 0
    while window.has(start):
        end = window.fill(start, budget)
        window.has(end + context - 1)
        yield max(0, start - context), start, end, min(end + context, window.stop)
        if not window.has(end):
            return
        # The next chunk repeats trailing units of this one; it must still take unit `end` and move on.
        room = min(overlap, budget - window.tokens[end - window.base])
        start = window.carried(start, end, room)
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
