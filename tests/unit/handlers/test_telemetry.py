"""Run and ingest metrics leave as CloudWatch embedded-metric-format lines on stdout."""

from __future__ import annotations

import json
import time
from collections.abc import Generator

import pytest

from ragline import telemetry
from ragline.agents.events import AnswerDelta, RunEvent, RunFinished, ToolStarted
from ragline.domain.api import Usage

pytestmark = pytest.mark.unit


def emf(out: str) -> list[dict[str, object]]:
    """Each EMF line, with single-value metric lists unwrapped."""
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{") and "_aws" in line]
    return [
        {k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in line.items()} for line in lines
    ]


def test_a_chat_run_is_recorded_once_when_its_final_event_passes(capsys: pytest.CaptureFixture[str]) -> None:
    def run() -> Generator[RunEvent, None, None]:
        yield ToolStarted(call_id="c1", tool="search", label="x")
        yield AnswerDelta(text="hi")
        yield RunFinished(
            run_id="r1", exit_reason="answered", answer="hi", usage=Usage(retrievals=2, llm_output_tokens=7)
        )

    events = list(telemetry.observe_chat(run()))

    assert [e.type for e in events] == ["tool_start", "text", "final"]
    (line,) = emf(capsys.readouterr().out)
    assert line["Kind"] == "chat" and line["Runs"] == 1 and line["Steps"] == 1
    assert line["Retrievals"] == 2 and line["LlmOutputTokens"] == 7 and line["Exit_answered"] == 1
    assert line["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Ragline"  # type: ignore[index]


def test_a_search_and_an_ingest_batch_are_recorded(capsys: pytest.CaptureFixture[str]) -> None:
    telemetry.record_run("search", Usage(retrievals=1, reranks=1), "answered", time.perf_counter())
    telemetry.record_ingest([("indexed", 12), ("duplicate", 0)], failures=1)

    search, batch = emf(capsys.readouterr().out)
    assert search["Kind"] == "search" and search["Reranks"] == 1 and search["LatencyMs"] >= 0  # type: ignore[operator]
    counts = [batch[name] for name in ("IngestDocuments", "IngestChunks", "IngestSkipped", "IngestFailures")]
    assert counts == [2, 12, 1, 1]
