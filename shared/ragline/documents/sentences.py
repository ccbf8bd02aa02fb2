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
"""

from __future__ import annotations

import re

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


_SENTENCE_END = re.compile(
    r"([.!?][.!?\"'”’»)\]]*)"  # the terminal punctuation run stays with the sentence (captured)
    + _lookbehinds(_ABBREVIATIONS)
    + r"(?<!\b[A-Z]\.)(?<!^\d\.)(?<!^\d\d\.)"
    + r"[ \t]+(?![a-z])"
)
_LINES = re.compile(r"(\n\s*)")


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
    parts = _LINES.split(text)
    last = len(parts) - 1
    for i in range(0, len(parts), 2):
        line = parts[i].strip()
        if not line:
            continue
        pieces = _SENTENCE_END.split(line)
        if len(pieces) > 1:
            sentences.extend(map(str.__add__, pieces[0:-1:2], pieces[1::2]))
            breaks.extend([SENTENCE_BREAK] * (len(pieces) // 2))
        sentences.append(pieces[-1])
        if i < last:
            breaks.append(PARAGRAPH_BREAK if parts[i + 1].count("\n") > 1 else LINE_BREAK)
        else:
            breaks.append("")
    if breaks:
        breaks[-1] = ""
    return sentences, breaks
