"""The offline grounding scorer: lexical overlap plus contradiction cues (no model, no I/O).

No NLI or claim-verification cross-encoder is carried by any PyPI wheel (see docs/decisions.md,
"Grounding (issue 30)"), so the default scorer is a transparent baseline rather than a model:

- a sentence's content words (lowercased, Porter-stemmed, stop words dropped, number words as digits)
  are looked up in each cited passage sentence; ``overlap`` is the share found in the best sentence,
  ``coverage`` the share found anywhere in the cited passages, and support is their mean;
- the best-matching sentence decides contradiction: a negation on one side only, an antonym pair
  (``increases``/``decreases``, ``higher``/``lower``, ...) or a number the sentence states that the
  passages never do while the evidence states another;
- ``contradicted`` when a cue fires on a passage sentence that overlaps at least ``contradict_min``,
  else ``supported`` when support reaches ``support_min``, else ``not_enough_info``.

The default thresholds were tuned on the even-id half of SciFact train and measured on the odd-id half
(bench/grounding.py, docs/benchmarks.md).
It judges words, not meaning: a paraphrase scores low and a negation it has no cue for passes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ragline.domain.grounding import Checked, CitedClaim, EvidenceRef, GroundingLabel, Verdict

STOPWORDS = frozenset(
    "a an and are as at be been being but by for from has have had if in into is it its of on or such"
    " that the their then there these they this those to was were will with which who whom whose what"
    " when where while than also can could may might should would do does did our we you your he she"
    " his her them i me my".split()
)
NEGATIONS = frozenset("not no never none without nor neither cannot lack lacks absent fail fails".split())
_ANTONYMS = (
    ("increase", "decrease"), ("increase", "reduce"), ("higher", "lower"), ("more", "less"),
    ("more", "fewer"), ("greater", "smaller"), ("larger", "smaller"), ("positive", "negative"),
    ("improve", "worsen"), ("promote", "inhibit"), ("activate", "inhibit"), ("enhance", "suppress"),
    ("up", "down"), ("longer", "shorter"), ("before", "after"), ("include", "exclude"),
    ("allow", "forbid"), ("safe", "unsafe"), ("benefit", "harm"), ("rise", "fall"), ("gain", "loss"),
    ("maximum", "minimum"), ("above", "below"), ("always", "never"), ("accept", "reject"),
)  # fmt: skip
_NUMBER_WORDS = {
    w: str(n)
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
        " sixteen seventeen eighteen nineteen twenty".split()
    )
} | {w: str(10 * n) for n, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split(), start=3)}
_NUMBER_WORDS |= {"hundred": "100", "thousand": "1000", "million": "1000000"}
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|\w+")
_NUMBER = re.compile(r"^\d")
_CLAUSE = re.compile(r"[,;:()\[\]]|[.!?](?:\s|$)")


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("porter")


@lru_cache(maxsize=100_000)
def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


@lru_cache(maxsize=1)
def _opposites() -> dict[str, frozenset[str]]:
    """Each stemmed word of :data:`_ANTONYMS` → its stemmed opposites (built on first use: the stemmer
    is imported then, not when this module is)."""
    found: dict[str, set[str]] = {}
    for a, b in _ANTONYMS:
        found.setdefault(_stem(a), set()).add(_stem(b))
        found.setdefault(_stem(b), set()).add(_stem(a))
    return {word: frozenset(others) for word, others in found.items()}


def terms(text: str) -> list[str]:
    """Stemmed tokens, stop words kept out, ``n't`` read as ``not``, number words as digits."""
    words = _TOKEN.findall(text.lower().replace("n't", " not"))
    return [_NUMBER_WORDS.get(w, w if _NUMBER.match(w) else _stem(w)) for w in words if w not in STOPWORDS]


def negated_terms(text: str, window: int = 3) -> set[str]:
    """The terms a negation governs: up to ``window`` terms after each negation word, within its clause
    (a comma, colon, semicolon, bracket or sentence end closes the scope)."""
    scoped: set[str] = set()
    for clause in _CLAUSE.split(text):
        words = terms(clause)
        for n, word in enumerate(words):
            if word in NEGATIONS:
                scoped.update(w for w in words[n + 1 : n + 1 + window] if w not in NEGATIONS)
    return scoped


def contradiction_cue(claim: str, sentence: str, passage: set[str]) -> str | None:
    """Why ``claim`` and a passage sentence disagree (``negation``, ``antonym``, ``number``) or None.

    ``negation``: one side negates something the other side states, and the other side does not
    negate it; ``antonym``: the claim says a word whose opposite the sentence says instead;
    ``number``: the claim states a number no cited passage states, where the sentence states another.
    """
    wanted, said = set(terms(claim)), set(terms(sentence))
    if (negated_terms(claim) & said) - negated_terms(sentence) or (negated_terms(sentence) & wanted) - (
        negated_terms(claim)
    ):
        return "negation"
    return _opposed(wanted, said, passage)


def _opposed(claim: set[str], sentence: set[str], passage: set[str]) -> str | None:
    for word in claim - sentence:
        if _opposites().get(word, frozenset()) & (sentence - claim):
            return "antonym"
    stated = {w for w in claim if _NUMBER.match(w)}
    others = {w for w in sentence if _NUMBER.match(w)}
    if stated - passage and others - claim:
        return "number"
    return None


class OverlapGroundingScorer:
    """See the module docstring. ``evidence_min``: the overlap a passage sentence needs to be named
    as evidence (at most ``max_evidence`` of them, best first)."""

    name = "overlap"

    def __init__(
        self,
        *,
        support_min: float = 0.5,
        contradict_min: float = 0.4,
        evidence_min: float = 0.3,
        max_evidence: int = 2,
    ) -> None:
        self.support_min, self.contradict_min = support_min, contradict_min
        self.evidence_min, self.max_evidence = evidence_min, max_evidence

    def check(self, claims: Sequence[CitedClaim]) -> Checked:
        return Checked(verdicts=[self.verdict(c) for c in claims])

    def verdict(self, claim: CitedClaim) -> Verdict:
        wanted = set(terms(claim.text))
        texts = {(p.chunk_id, n): s for p in claim.passages for n, s in enumerate(p.sentences)}
        rows = [(cid, n, set(terms(s))) for (cid, n), s in texts.items()]
        if not wanted or not rows:
            return Verdict("not_enough_info", 0.0)
        everywhere = set().union(*(r[2] for r in rows))
        scored = sorted(
            ((len(wanted & words) / len(wanted), cid, n, words) for cid, n, words in rows),
            key=lambda row: -row[0],
        )
        best = scored[0][0]
        support = (best + len(wanted & everywhere) / len(wanted)) / 2
        evidence = tuple(
            EvidenceRef(cid, n)
            for share, cid, n, _ in scored[: self.max_evidence]
            if share >= self.evidence_min
        )
        for share, cid, n, _words in scored:
            if share < self.contradict_min:
                break
            if contradiction_cue(claim.text, texts[(cid, n)], everywhere) is not None:
                return Verdict("contradicted", round(support * 0.25, 4), (EvidenceRef(cid, n),))
        label: GroundingLabel = "supported" if support >= self.support_min else "not_enough_info"
        return Verdict(label, round(min(support, 1.0), 4), evidence)
