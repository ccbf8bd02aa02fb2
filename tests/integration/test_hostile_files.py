"""Hostile files end ``ready`` or ``failed`` inside the ingestion function's limits.

Given the generated corpus (``tests/support/hostile_files.py``, scaled down: cases that must exceed
a limit to be hostile keep that size), when each file is ingested in its own process under the
function's ``Timeout`` and ``MemorySize`` from ``template.yaml``, then every record ends as its case
expects — ``failed`` ones with their error code and a reason — and no process runs out of time or
memory. The full-size run is ``bench/hostile_files.py`` (its table is in ``docs/benchmarks.md``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.hostile_files import (
    CASES,
    Case,
    FunctionLimits,
    Outcome,
    ingestion_limits,
    run_case,
    run_corpus,
)

pytestmark = pytest.mark.integration
SCALE = 0.1
LIMITS = ingestion_limits()


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    ran = run_corpus(tmp_path_factory.mktemp("hostile"), LIMITS, scale=SCALE, workers=2)
    return {outcome.case.filename: outcome for outcome in ran}


def test_the_limits_are_the_ingestion_functions() -> None:
    assert FunctionLimits(seconds=300.0, memory_mib=2048) == LIMITS


@pytest.mark.parametrize("case", CASES, ids=[case.filename for case in CASES])
def test_given_a_hostile_file_when_ingested_then_it_ends_ready_or_failed_within_the_limits(
    case: Case, outcomes: dict[str, Outcome]
) -> None:
    outcome = outcomes[case.filename]

    assert outcome.finished, f"{case.name}: {outcome.status}: {outcome.reason}"
    assert (outcome.status, outcome.code) == (case.expect, case.code), outcome.reason
    assert bool(outcome.reason) == (case.expect == "failed")
    assert outcome.seconds < LIMITS.seconds
    assert outcome.peak_rss_mib < LIMITS.memory_mib


def test_given_a_process_over_its_memory_limit_when_run_then_it_is_reported_unfinished(
    tmp_path: Path,
) -> None:
    tiny = next(case for case in CASES if case.filename == "tiny.txt")

    outcome = run_case(tiny, tmp_path, FunctionLimits(seconds=LIMITS.seconds, memory_mib=64), scale=SCALE)

    assert not outcome.finished  # the limit is really applied: the process cannot even load numpy
    assert outcome.status.startswith(("exit", "killed")), outcome.status
