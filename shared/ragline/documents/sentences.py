"""A small, fast, regex sentence splitter (no models, no I/O).

Rules, in order:

- a line break always ends a sentence; a blank line (paragraph break) too. Parsers join soft-wrapped
  prose lines before this runs (see :func:`ragline.documents.formats.unwrap_lines`), so the lines
  that reach here are real units: paragraphs, list items, table rows, ``key: value`` records;
- inside a line, ``.``, ``!`` or ``?`` (optionally followed by more of them and by closing quotes or
  brackets) then spaces ends a sentence, unless
  - the next character is a lowercase ASCII letter (``approx. five``),
  - the word before the period is a known abbreviation (``e.g.``, ``Dr.``, ``vs.``),
  - it is a single capital initial (``J. Smith``, ``U.S.``), or
  - the line starts with a 1–2 digit list number (``1. First``).

Decimals (``3.5``) and dotted names (``example.com``) never split: no space follows the period.

Linear time on any input: the boundary pattern starts at the *last* terminal of a punctuation run
and its quantifiers are possessive, so a run of ``!!!…`` or of spaces is scanned once, not once per
starting position; sentences come in blocks (:func:`sentence_blocks`), so a 20 MB line is never
split into one list.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import repeat

SENTENCE_BREAK = " "
LINE_BREAK = "\n"
PARAGRAPH_BREAK = "\n\n"

_ABBREVIATIONS = (
    "Mr", "Mrs", "Ms", "Mx", "Dr", "Prof", "Sr", "Jr", "St", "Mt", "Ft", "Gen", "Col", "Lt", "Sgt",
    "Capt", "Cmdr", "Rev", "Hon", "Gov", "Sen", "Rep", "Pres", "Supt", "Fr",
    "vs", "etc", "e.g", "i.e", "cf", "al", "approx", "ca", "esp", "resp", "viz", "incl",
    "Fig", "fig", "Figs", "Eq", "eq", "Vol", "vol", "Ch", "ch", "Sec", "sec", "pp", "Nos", "nos",
    "Inc", "Ltd", "Co", "Corp", "Bros", "Dept", "dept", "Univ", "Assn", "Ave", "Blvd", "Rd",
    "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
)  # fmt: skip


def _lookbehinds(abbreviations: tuple[str, ...]) -> str:
    """One negative lookbehind per abbreviation length (Python's must be fixed-width).

    Grouping by length keeps it to a handful of lookbehinds (one per abbreviation is ~3x slower);
    they only run at a candidate boundary, after the punctuation matched.
    """
    by_length: dict[int, list[str]] = {}
    for word in abbreviations:
        by_length.setdefault(len(word), []).append(re.escape(word))
    return "".join(rf"(?<!\b(?:{'|'.join(words)})\.)" for _, words in sorted(by_length.items()))


# The run's last terminal and its closing quotes/brackets end the sentence (group 1); the lookbehinds
# then look at the run's end, just before the spaces.
_SENTENCE_END = re.compile(
    r"([.!?][\"'”’»)\]]*+)(?=[ \t])"  # the space first: most periods fail here, cheaply
    + _lookbehinds(_ABBREVIATIONS)
    + r"(?<!\b[A-Z]\.)(?<!^\d\.)(?<!^\d\d\.)"
    + r"[ \t]++(?![a-z])"
)
_LINES = re.compile(r"\n\s*")


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, in order; empty input gives ``[]``."""
    return split_with_breaks(text)[0]


def split_with_breaks(text: str) -> tuple[list[str], list[str]]:
    """Sentences plus, for each, the break that follows it.

    A break is :data:`SENTENCE_BREAK`, :data:`LINE_BREAK`, :data:`PARAGRAPH_BREAK`, or ``""`` after the
    last sentence, so ``"".join(s + b for s, b in zip(*split_with_breaks(t)))`` is ``t`` with its
    whitespace between sentences normalized.
    """
    sentences: list[str] = []
    breaks: list[str] = []
    for block, block_breaks in sentence_blocks(text):
        sentences += block
        breaks += block_breaks
    return sentences, breaks


def sentence_blocks(text: str) -> Iterator[tuple[list[str], list[str]]]:
    """:func:`split_with_breaks` lazily, in blocks of whole lines of about :data:`BLOCK` sentences
    (at most :data:`BLOCK` sentences of a long line), so a 20 MB text never becomes one list."""
    held: tuple[list[str], list[str]] | None = None
    for block in _blocks_of_lines(text):
        if held is not None:
            yield held
        held = block
    if held is not None:
        held[1][-1] = ""
        yield held


BLOCK = 4096
_LONG_LINE = 65536


def _blocks_of_lines(text: str) -> Iterator[tuple[list[str], list[str]]]:
    sentences: list[str] = []
    breaks: list[str] = []
    for raw, separator in _lines(text):
        line = raw.strip()
        if not line:
            continue
        line_break = PARAGRAPH_BREAK if separator.count("\n") > 1 else LINE_BREAK
        if len(line) > _LONG_LINE:
            if sentences:
                yield sentences, breaks
                sentences, breaks = [], []
            yield from _long_line_blocks(line, line_break)
            continue
        pieces = _SENTENCE_END.split(line)  # the common case, split in C
        sentences += map(str.__add__, pieces[0:-1:2], pieces[1::2])
        sentences.append(pieces[-1])
        breaks += repeat(SENTENCE_BREAK, len(pieces) // 2)
        breaks.append(line_break)
        if len(sentences) >= BLOCK:
            yield sentences, breaks
            sentences, breaks = [], []
    if sentences:
        yield sentences, breaks


def _long_line_blocks(line: str, line_break: str) -> Iterator[tuple[list[str], list[str]]]:
    sentences = []
    start = 0
    for m in _SENTENCE_END.finditer(line):
        sentences.append(line[start : m.end(1)])
        start = m.end()
        if len(sentences) == BLOCK:
            yield sentences, [SENTENCE_BREAK] * BLOCK
            sentences = []
    sentences.append(line[start:])
    yield sentences, [SENTENCE_BREAK] * (len(sentences) - 1) + [line_break]


def _lines(text: str) -> Iterator[tuple[str, str]]:
    """Each line with the whitespace run (starting at its line break) that follows it."""
    pos = 0
    for m in _LINES.finditer(text):
        yield text[pos : m.start()], m.group()
        pos = m.end()
    yield text[pos:], ""
