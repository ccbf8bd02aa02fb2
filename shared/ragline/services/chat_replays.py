"""What a chat run records for a replay, and the replay of it.

A chat run records its final event with the documents of every chunk it retrieved (the answer may
quote any of them, cited or not) and when it read them (see :mod:`ragline.services.replays`). A
replay streams that final event again, flagged ``replayed`` — without its answer, its grounding
(which quotes the answer and the chunks) and its query plan (a planned agent's later queries and
``chain_of_rag``'s intermediate answers are written from the chunks) when any of those documents was
deleted or changed since (an answer's text cannot be split by source).
"""

from __future__ import annotations

from collections.abc import Generator
from datetime import datetime

from ragline.agents.events import RunEvent, RunFinished, Warning
from ragline.domain.api import Usage
from ragline.domain.billing import MAX_RESULT_BYTES, CompletedRun
from ragline.domain.retrieval import EvidenceTable
from ragline.services.metering import Metering
from ragline.services.replays import MASKED, MASKED_MESSAGE, DocumentRef, sealed

WITHOUT_PLAN = {"plan": None}
WITHOUT_TEXT = {"answer": "", "grounding": None, **WITHOUT_PLAN}
"""A final event stripped of every text it quotes: the answer, its grounding (the answer's sentences
and the chunks' evidence sentences) and its query plan (queries and intermediate answers written
from the chunks)."""


def recorded(final: RunFinished, evidence: EvidenceTable, read_at: datetime) -> str:
    """What a replay gets: the final event (without its plan, then also without its answer, when the
    whole would be too large) with the documents of the run's evidence."""
    documents: set[DocumentRef] = set()
    for alias in evidence:
        item = evidence.get(alias)
        if item is not None:
            documents.add((item.scope.namespace_id, item.chunk.document_id))
    for update in ({}, WITHOUT_PLAN):
        text = sealed(final.model_copy(update=update), documents, read_at)
        if len(text.encode()) <= MAX_RESULT_BYTES:
            return text
    return sealed(final.model_copy(update=WITHOUT_TEXT), documents, read_at)


def replayed(
    metering: Metering,
    tenant_id: str,
    replay: CompletedRun,
    run_id: str,
    readers: frozenset[str] | None = None,
) -> Generator[RunEvent, None, None]:
    """The run's recorded final event again, flagged; without its answer, grounding and plan when a
    document it drew on is gone or changed; a run with nothing to serve ends ``replayed_without_result``."""
    recorded = metering.opened(tenant_id, replay, readers)
    if recorded is None:
        final = RunFinished(run_id=run_id, exit_reason="replayed_without_result", answer="", usage=Usage())
    else:
        final = RunFinished.model_validate(recorded.result)
        if recorded.masked and (final.answer or final.grounding or final.plan):
            yield Warning(code=MASKED, message=MASKED_MESSAGE)
            final = final.model_copy(update=WITHOUT_TEXT)
    yield final.model_copy(update={"usage": Usage.of(replay.usage), "replayed": True})
