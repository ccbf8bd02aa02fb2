"""Grounding: each cited sentence of an answer checked against the chunks it cites.

A :class:`CitedClaim` is one sentence of the final answer with the passages (retrieved chunks) its
``<citation ids>`` name; a :class:`~ragline.ports.GroundingScorer` gives each claim a :class:`Verdict`:
``supported``, ``contradicted`` or ``not_enough_info``, a score in [0, 1] (how strongly the passages
support the sentence: a contradicted sentence scores low) and, when the scorer can tell, which of the
passages' sentences decided. The work is bounded by :class:`GroundingLimits` before any scorer runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from ragline.domain.models import RunUsage

GroundingLabel = Literal["supported", "contradicted", "not_enough_info"]
LABELS: tuple[GroundingLabel, ...] = get_args(GroundingLabel)


@dataclass(frozen=True)
class GroundingLimits:
    """Caps on the work of one answer's check (each cap is a promise the tests hold).

    ``max_sentences``: cited sentences checked, in answer order (the rest are counted as unchecked);
    ``max_passages``: chunks checked per sentence (its first citations); ``max_passage_chars``: the
    characters of each chunk shown to the scorer (whole sentences up to the cap, the first one cut);
    ``max_sentence_chars``: the characters of each answer sentence checked (a longer one is cut: a
    scorer's work grows with the claim's words).
    """

    max_sentences: int = 12
    max_passages: int = 4
    max_passage_chars: int = 2000
    max_sentence_chars: int = 2000

    def __post_init__(self) -> None:
        if min(self.max_sentences, self.max_passages, self.max_passage_chars, self.max_sentence_chars) < 1:
            raise ValueError("grounding limits must be at least 1")


@dataclass(frozen=True)
class Passage:
    """A cited chunk as the scorer sees it: its id and its sentences (already cut to the limits)."""

    chunk_id: str
    sentences: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


@dataclass(frozen=True)
class CitedClaim:
    """One sentence of the answer (citation markers removed) and the passages it cites."""

    text: str
    citations: tuple[str, ...]
    passages: tuple[Passage, ...]


@dataclass(frozen=True)
class EvidenceRef:
    """A sentence of a passage that decided a verdict: the chunk's id and the sentence's index."""

    chunk_id: str
    sentence: int


@dataclass(frozen=True)
class Verdict:
    label: GroundingLabel
    score: float
    """Support in [0, 1]: near 1 for a well-supported sentence, near 0 for a contradicted one."""
    evidence: tuple[EvidenceRef, ...] = ()

    def __post_init__(self) -> None:
        if self.label not in LABELS or not 0.0 <= self.score <= 1.0:
            raise ValueError(f"invalid verdict: {self.label!r} {self.score!r}")


@dataclass
class Checked:
    """A scorer's verdicts, one per claim in order, and what checking them spent (metered once,
    with the run)."""

    verdicts: list[Verdict]
    usage: RunUsage = field(default_factory=RunUsage)


def clip_sentences(sentences: Sequence[str], max_chars: int) -> tuple[str, ...]:
    """Whole sentences while they fit in ``max_chars`` (joined by one space); a first sentence longer
    than that is cut, so a passage always shows the scorer something."""
    kept: list[str] = []
    used = 0
    for sentence in sentences:
        cost = len(sentence) + (1 if kept else 0)
        if used + cost > max_chars:
            if not kept:
                kept.append(sentence[:max_chars])
            break
        kept.append(sentence)
        used += cost
    return tuple(kept)


def answer_score(verdicts: Sequence[Verdict]) -> float | None:
    """The answer's score: the mean support of its checked sentences (None when none was checked)."""
    if not verdicts:
        return None
    return round(sum(v.score for v in verdicts) / len(verdicts), 4)
