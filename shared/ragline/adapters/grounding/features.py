"""Lexical features of a cited claim, for the learned verifier (pure Python: it runs in the AWS layer).

Two kinds, both computed from the claim and its cited passages alone (no corpus statistics, no model):

- :func:`score_claim`: one vector per claim — how much of it the best passage sentence and the
  passages as a whole state (plain and rarity-weighted shares, bigrams), how strongly each
  contradiction cue of :mod:`~ragline.adapters.grounding.overlap` fires (the best share among the
  sentences it fires on), and the claim's own shape (negated, hedged, directional, numeric, long);
- :func:`sentence_features`: one vector per top passage sentence, to choose evidence.

The names (:data:`CLAIM_FEATURES`, :data:`SENTENCE_FEATURES`) are the weights' keys, so a weight file
fitted for other features cannot be loaded silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from ragline.adapters.grounding.overlap import contradiction_cue, negated_terms, terms
from ragline.domain.grounding import CitedClaim

_HEDGES = "may might could possibly associated association correlated linked risk suggest"
_DIRECTIONS = (
    "increase increases increased decrease decreases decreased reduce reduces reduced higher lower more"
    " less greater smaller improve improves worsen promote promotes inhibit inhibits activate activates"
    " suppress suppresses enhance enhances raise raises"
)
_UP = (
    "increase raise elevate higher high more greater enhance promote improve stimulate activate induce"
    " upregulate accelerate gain rise positive positively benefit beneficial protect protective"
    " overexpression excess hyperactivity faster longer stronger"
)
_DOWN = (
    "decrease reduce lower low less fewer diminish decline impair inhibit suppress prevent block attenuate"
    " downregulate slow slower delay loss fall negative negatively harm harmful worsen damage deficient"
    " deficiency deplete lack shorter weaker"
)


@dataclass(frozen=True)
class Lexicon:
    """Stemmed word families: hedges, direction words, and the two directions (up, down)."""

    hedges: frozenset[str]
    directions: frozenset[str]
    up: frozenset[str]
    down: frozenset[str]


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """Built on first use, as overlap's antonyms are: the stemmer is imported then, not with this module."""
    up = frozenset(terms(_UP))
    return Lexicon(frozenset(terms(_HEDGES)), frozenset(terms(_DIRECTIONS)), up, frozenset(terms(_DOWN)) - up)


CLAIM_FEATURES = (
    "best", "second", "coverage", "weighted_best", "weighted_coverage", "bigram_best", "bigram_coverage",
    "negation", "antonym", "number", "claim_negated", "claim_hedged", "claim_directional",
    "claim_numeric", "unstated_numbers", "log_terms", "flip",
    "same_direction", "negated_best",
)  # fmt: skip
SENTENCE_FEATURES = ("share", "weighted", "bigrams", "gap", "rank0", "rank1", "cue")


@dataclass(frozen=True)
class Row:
    """One passage sentence: its place (chunk id, index), text and stemmed terms."""

    chunk_id: str
    index: int
    text: str
    terms: frozenset[str]
    bigrams: frozenset[tuple[str, str]]


@dataclass(frozen=True)
class Scored:
    """A claim's rows, best first by :attr:`shares`, and the claim-level feature vector."""

    rows: list[Row]
    shares: list[float]
    weighted: list[float]
    bigram_shares: list[float]
    cues: list[str | None]
    vector: list[float]


def _bigrams(words: list[str]) -> frozenset[tuple[str, str]]:
    return frozenset(pairwise(words))


def score_claim(claim: CitedClaim, cue_min: float = 0.2) -> Scored | None:
    """The claim's rows and features; None when the claim or its passages have no content word."""
    words = terms(claim.text)
    wanted = set(words)
    rows = []
    for p in claim.passages:
        for n, s in enumerate(p.sentences):
            t = terms(s)
            rows.append(Row(p.chunk_id, n, s, frozenset(t), _bigrams(t)))
    if not wanted or not rows:
        return None
    df = {w: sum(1 for r in rows if w in r.terms) for w in wanted}
    weight = {w: math.log(1 + len(rows) / (1 + df[w])) for w in wanted}
    total = sum(weight.values())
    pairs = _bigrams(words)
    shares = [len(wanted & r.terms) / len(wanted) for r in rows]
    order = sorted(range(len(rows)), key=lambda i: -shares[i])
    rows = [rows[i] for i in order]
    shares = [shares[i] for i in order]
    weighted = [sum(weight[w] for w in wanted & r.terms) / total for r in rows]
    bigram_shares = [len(pairs & r.bigrams) / len(pairs) if pairs else 0.0 for r in rows]
    everywhere = frozenset().union(*(r.terms for r in rows))
    cues = [
        contradiction_cue(claim.text, r.text, set(everywhere)) if share >= cue_min else None
        for r, share in zip(rows, shares, strict=True)
    ]
    cue_share = {
        kind: max((s for s, c in zip(shares, cues, strict=True) if c == kind), default=0.0)
        for kind in ("negation", "antonym", "number")
    }
    flip = same = 0.0
    words_of = lexicon()
    claim_up, claim_down = bool(wanted & words_of.up), bool(wanted & words_of.down)
    for r, share in zip(rows, shares, strict=True):
        up, down = bool(r.terms & words_of.up), bool(r.terms & words_of.down)
        if share < cue_min or claim_up == claim_down or up == down:
            continue
        if claim_up == up:
            same = max(same, share)
        else:
            flip = max(flip, share)
    negated = 1.0 if negated_terms(claim.text) & everywhere else 0.0
    numbers = {w for w in wanted if w[:1].isdigit()}
    everywhere_pairs = frozenset().union(*(r.bigrams for r in rows))
    vector = [
        shares[0],
        shares[1] if len(shares) > 1 else 0.0,
        len(wanted & everywhere) / len(wanted),
        max(weighted),
        sum(weight[w] for w in wanted & everywhere) / total,
        max(bigram_shares),
        len(pairs & everywhere_pairs) / len(pairs) if pairs else 0.0,
        cue_share["negation"],
        cue_share["antonym"],
        cue_share["number"],
        negated,
        1.0 if wanted & words_of.hedges else 0.0,
        1.0 if wanted & words_of.directions else 0.0,
        1.0 if numbers else 0.0,
        1.0 if numbers - everywhere else 0.0,
        math.log(len(wanted)),
        flip,
        same,
        negated * shares[0],
    ]
    return Scored(rows, shares, weighted, bigram_shares, cues, vector)


def sentence_features(scored: Scored, rank: int) -> list[float]:
    """The features of ``scored.rows[rank]`` as evidence for its claim."""
    best = scored.shares[0]
    return [
        scored.shares[rank],
        scored.weighted[rank],
        scored.bigram_shares[rank],
        best - scored.shares[rank],
        1.0 if rank == 0 else 0.0,
        1.0 if rank == 1 else 0.0,
        1.0 if scored.cues[rank] else 0.0,
    ]
