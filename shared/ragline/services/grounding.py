"""Grounding scores: the final answer's cited sentences checked against the chunks they cite.

:func:`cited_claims` splits the verified answer into sentences, gives each the chunk ids of the
citation markers in it (or right after it) and applies :class:`~ragline.domain.grounding.GroundingLimits`;
:class:`GroundingService` asks the deployment's :class:`~ragline.ports.GroundingScorer` for verdicts,
adds what the scorer spent to the run's usage (so the run is still metered once, at its end), and turns
the verdicts into the ``grounding`` of the ``final`` event plus a ``contradicted_citation`` warning. A
scorer that fails never fails the answer: the grounding is ``unavailable`` with a warning saying why.
"""

from __future__ import annotations

import logging
import re
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field

from ragline import errors
from ragline.agents.events import Grounding, GroundingEvidence, SentenceGrounding, Warning
from ragline.documents.sentences import split_sentences
from ragline.domain.citations import CITATION
from ragline.domain.grounding import (
    CitedClaim,
    GroundingLimits,
    Passage,
    Verdict,
    answer_score,
    clip_sentences,
)
from ragline.domain.models import RunUsage
from ragline.ports import GroundingScorer

logger = logging.getLogger(__name__)

_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class ClaimSet:
    claims: list[CitedClaim]
    unchecked: int = 0
    """Cited sentences past ``max_sentences``."""
    uncited: int = 0


def answer_sentences(answer: str) -> list[tuple[str, list[str]]]:
    """The answer's sentences (markers removed) with the ids of the markers inside each or right after
    it (before the next sentence starts), in order of first citation."""
    plain: list[str] = []
    marks: list[tuple[int, list[str]]] = []
    length, last = 0, 0
    for match in CITATION.finditer(answer):
        piece = answer[last : match.start()]
        plain.append(piece)
        length += len(piece)
        marks.append((length, [i.strip() for i in match.group(1).split(",") if i.strip()]))
        last = match.end()
    plain.append(answer[last:])
    text = "".join(plain)
    spans: list[tuple[int, str]] = []
    cursor = 0
    for sentence in split_sentences(text):
        start = text.find(sentence, cursor)
        start = cursor if start < 0 else start
        spans.append((start, sentence))
        cursor = start + len(sentence)
    ids: list[dict[str, None]] = [{} for _ in spans]
    starts = [start for start, _ in spans]  # nondecreasing: a bisection, not a scan per marker
    for position, cited in marks:
        if not spans:
            break
        owner = max(bisect_left(starts, position) - 1, 0)  # the last sentence starting before it
        for i in cited:
            ids[owner].setdefault(i, None)
    return [(sentence, list(found)) for (_, sentence), found in zip(spans, ids, strict=True)]


def cited_claims(answer: str, chunks: Mapping[str, str], limits: GroundingLimits) -> ClaimSet:
    """The claims to check, within ``limits``; ``chunks``: the retrieved chunks' texts by id (ids the
    answer cites that are not there are left out of the sentence's passages)."""
    passages: dict[str, Passage] = {}
    claims: list[CitedClaim] = []
    unchecked = uncited = 0
    for sentence, ids in answer_sentences(answer):
        known = [i for i in ids if i in chunks][: limits.max_passages]
        if not known:
            uncited += 1 if _WORD.search(sentence) else 0
            continue
        if len(claims) >= limits.max_sentences:
            unchecked += 1
            continue
        for i in known:
            if i not in passages:
                passages[i] = Passage(i, clip_sentences(split_sentences(chunks[i]), limits.max_passage_chars))
        claim = sentence[: limits.max_sentence_chars]
        claims.append(CitedClaim(claim, tuple(ids), tuple(passages[i] for i in known)))
    return ClaimSet(claims, unchecked, uncited)


@dataclass
class Assessment:
    grounding: Grounding
    warnings: list[Warning] = field(default_factory=list)


class GroundingService:
    """Scores an answer's grounding with the deployment's scorer (None: grounding is turned off)."""

    def __init__(self, scorer: GroundingScorer | None, limits: GroundingLimits | None = None) -> None:
        self._scorer = scorer
        self.limits = limits or GroundingLimits()

    @property
    def scorer_name(self) -> str:
        return self._scorer.name if self._scorer is not None else "none"

    def assess(self, answer: str, chunks: Mapping[str, str], usage: RunUsage) -> Assessment:
        """The answer's grounding and its warnings; what the scorer spent is added to ``usage``."""
        if self._scorer is None:
            return Assessment(Grounding(status="off", scorer="none"))
        found = cited_claims(answer, chunks, self.limits)
        base = Grounding(
            status="no_citations", scorer=self._scorer.name, unchecked=found.unchecked, uncited=found.uncited
        )
        if not found.claims:
            return Assessment(base)
        try:
            checked = self._scorer.check(found.claims)
            if len(checked.verdicts) != len(found.claims):
                raise errors.GroundingFailed(
                    f"the scorer gave {len(checked.verdicts)} verdicts for {len(found.claims)} sentences",
                    usage=checked.usage,
                )
        except errors.RaglineError as exc:
            return self._unavailable(exc, usage, base)
        except Exception as exc:  # a scorer bug must not cost the caller the answer
            logger.exception("grounding scorer failed", extra={"scorer": self._scorer.name})
            return self._unavailable(exc, usage, base)
        usage.add(checked.usage)
        sentences = [_view(c, v) for c, v in zip(found.claims, checked.verdicts, strict=True)]
        scored = {"status": "scored", "score": answer_score(checked.verdicts), "sentences": sentences}
        return Assessment(base.model_copy(update=scored), _contradictions(sentences))

    def _unavailable(self, exc: Exception, usage: RunUsage, base: Grounding) -> Assessment:
        spent = getattr(exc, "usage", None)
        if isinstance(spent, RunUsage):
            usage.add(spent)
        reason = exc.message if isinstance(exc, errors.RaglineError) else "internal error"
        code = exc.code if isinstance(exc, errors.RaglineError) else "internal_error"
        warning = Warning(
            code="grounding_unavailable",
            message=f"the answer's grounding could not be checked: {reason}",
            details={"scorer": base.scorer, "cause": code},
        )
        return Assessment(base.model_copy(update={"status": "unavailable"}), [warning])


def _view(claim: CitedClaim, verdict: Verdict) -> SentenceGrounding:
    texts = {p.chunk_id: p.sentences for p in claim.passages}
    evidence = [
        GroundingEvidence(chunk_id=e.chunk_id, sentence=e.sentence, text=texts[e.chunk_id][e.sentence])
        for e in verdict.evidence
        if e.chunk_id in texts and 0 <= e.sentence < len(texts[e.chunk_id])
    ]
    return SentenceGrounding(
        text=claim.text,
        citations=list(claim.citations),
        label=verdict.label,
        score=round(verdict.score, 4),
        evidence=evidence,
    )


def _contradictions(sentences: list[SentenceGrounding]) -> list[Warning]:
    contradicted = [n for n, s in enumerate(sentences) if s.label == "contradicted"]
    if not contradicted:
        return []
    cited = list(dict.fromkeys(i for n in contradicted for i in sentences[n].citations))
    return [
        Warning(
            code="contradicted_citation",
            message=f"{len(contradicted)} sentence(s) of the answer say the opposite of the chunks they cite",
            details={"sentences": contradicted, "citations": cited},
        )
    ]
