"""Reading scans in the deployed template: off by default (no engine, no permission); with
``DocumentOcr=textract`` the ingestion function alone reads pages with Textract and may call it
(issue 40). What the function then does is the rehearsal's ``read_a_scan`` step."""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.test_grounding import FUNCTIONS
from tests.deploy.translated import StandInStack
from tests.rehearsal.iam import iam_calls

pytestmark = pytest.mark.deploy


def may_read(stack: StandInStack, function: str) -> bool:
    calls = iam_calls(function, "textract", "DetectDocumentText", {"Document": {"Bytes": b"..."}}, {})
    spec = stack.function(function)
    return all(spec.allows(c.action, c.resource, c.context) for c in calls)


def test_by_default_no_function_reads_scans_or_may_call_textract(translated: dict[str, Any]) -> None:
    stack = StandInStack(translated, {})
    assert stack.values["DocumentOcr"] == "off"
    assert stack.function("IngestionFunction").environment["RAGLINE_OCR"] == "off"
    for fn in FUNCTIONS:
        assert not may_read(stack, fn), fn


def test_with_textract_only_the_ingestion_function_reads_scans_and_may_call_it(
    translated: dict[str, Any],
) -> None:
    stack = StandInStack(translated, {"DocumentOcr": "textract"})
    assert stack.function("IngestionFunction").environment["RAGLINE_OCR"] == "textract"
    assert may_read(stack, "IngestionFunction")
    for fn in set(FUNCTIONS) - {"IngestionFunction"}:
        assert not may_read(stack, fn), fn
        assert stack.function(fn).environment.get("RAGLINE_OCR") is None, fn  # "auto": no engine there
    assert translated["Parameters"]["DocumentOcr"]["AllowedValues"] == ["off", "textract"]
