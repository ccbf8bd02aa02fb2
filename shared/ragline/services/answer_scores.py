"""The scores of an evaluated answer that need no judge (see :mod:`ragline.domain.evaluations`): from
its grounding, its citations and the chunks it was shown."""

from __future__ import annotations

from ragline.agents.events import Grounding
from ragline.domain.evaluations import AnswerScores, EvalQuestion, SourceRef


def score_answer(
    grounding: Grounding | None, sources: list[SourceRef], question: EvalQuestion
) -> AnswerScores:
    """The metrics that need no judge (see :mod:`ragline.domain.evaluations`)."""
    scores = AnswerScores()
    if question.gold:
        found = {g for g in question.gold for s in sources if is_gold({g}, s.id, s.document_id, s.filename)}
        scores.gold_recall = len(found) / len(set(question.gold))
    if grounding is None or grounding.status in ("off", "unavailable"):
        return scores
    cited = len(grounding.sentences) + grounding.unchecked
    if cited + grounding.uncited:
        scores.citation_coverage = cited / (cited + grounding.uncited)
    if grounding.status != "scored" or not grounding.sentences:
        return scores
    scores.faithfulness = grounding.score
    precise = total = 0
    for sentence in grounding.sentences:
        total += len(sentence.citations)
        if sentence.label == "supported":
            evidence = {e.chunk_id for e in sentence.evidence}
            precise += sum(1 for c in sentence.citations if not evidence or c in evidence)
    scores.citation_precision = precise / total if total else None
    return scores


def is_gold(gold: set[str], chunk_id: str, document_id: str, filename: str) -> bool:
    """Whether a chunk is one of the gold passages: by chunk id, document id, file name or its last part."""
    return bool(gold & {chunk_id, document_id, filename, filename.rsplit("/", 1)[-1]} - {""})
