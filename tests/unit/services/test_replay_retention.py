"""What a replay may serve of a recorded result: within ``RESULT_RETENTION`` of the run's reading,
the result with the documents it quotes re-checked; after it, or for a result recorded before the
documents were kept with it, nothing (the replay then carries only the charge)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ragline.adapters.embedded.documents import SqliteDocumentRegistry
from ragline.agents.events import RunFinished
from ragline.domain.api import Usage
from ragline.services.replays import RESULT_RETENTION, opened, sealed
from tests.support.clock import ManualClock

pytestmark = pytest.mark.unit
T0 = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)


def test_a_result_is_served_within_retention_and_not_after(tmp_path: Path) -> None:
    clock = ManualClock(T0 - timedelta(minutes=1))
    documents = SqliteDocumentRegistry(tmp_path / "d.sqlite", clock=clock)
    claim = documents.claim("acme", "docs", "a.txt", None)
    documents.complete(claim.record.model_copy(update={"status": "ready"}))
    final = RunFinished(run_id="r", exit_reason="answered", answer="It is.", usage=Usage())
    text = sealed(final, [("docs", "a.txt")], T0)

    within = opened(documents, "acme", text, T0 + RESULT_RETENTION - timedelta(seconds=1))
    assert within is not None and not within.masked and within.result["answer"] == "It is."
    assert opened(documents, "acme", text, T0 + RESULT_RETENTION) is None
    assert opened(documents, "acme", final.model_dump_json(), T0) is None  # recorded before the rule


def test_a_document_rewritten_after_the_run_is_masked(tmp_path: Path) -> None:
    clock = ManualClock(T0 - timedelta(minutes=1))
    documents = SqliteDocumentRegistry(tmp_path / "d.sqlite", clock=clock)
    claim = documents.claim("acme", "docs", "a.txt", None)
    documents.complete(claim.record.model_copy(update={"status": "ready"}))
    text = sealed(
        RunFinished(run_id="r", exit_reason="answered", answer="x", usage=Usage()), [("docs", "a.txt")], T0
    )

    clock.advance(120)  # the document is claimed again (a new version) after the run read it
    documents.claim("acme", "docs", "a.txt", None)

    again = opened(documents, "acme", text, T0 + timedelta(minutes=5))
    assert again is not None and again.masked and again.kept == frozenset()
