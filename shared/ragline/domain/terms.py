"""Content words of a text: what the offline models match on (no stemmer, no model, no I/O)."""

from __future__ import annotations

import re

WORD = re.compile(r"\w+")
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "our",
        "so",
        "such",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
        "about",
    ]
)
STEM = 6
"""Words are compared by their first six letters: a crude stem ("vaccines" ~ "vaccination")."""


def stems(text: str) -> list[str]:
    """The content words of ``text``, lower-cased and cut to :data:`STEM` letters, in order."""
    return [w[:STEM] for w in WORD.findall(text.lower()) if w not in STOP_WORDS]


def content_words(text: str) -> list[str]:
    """The content words of ``text`` as written (lower-cased), each once, in order."""
    return list(dict.fromkeys(w for w in WORD.findall(text.lower()) if w not in STOP_WORDS))


def normalise_query(text: str) -> str:
    """What two queries must share to count as the same: words, case and punctuation aside."""
    return " ".join(WORD.findall(text.lower()))
