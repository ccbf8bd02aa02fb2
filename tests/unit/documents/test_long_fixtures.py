"""The long-document set behind bench/documents.py (``tests/fixtures/long``): every question's passage
is in its document's parsed text exactly once, so a chunk that holds it is the one that answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.documents import parse_document

LONG = Path(__file__).parents[2] / "fixtures" / "long"
QUESTIONS = [json.loads(line) for line in (LONG / "questions.jsonl").read_text().splitlines()]


def flat(text: str) -> str:
    return " ".join(text.split())


def test_the_set_has_at_least_60_questions_over_three_long_documents() -> None:
    by_document = {q["document"] for q in QUESTIONS}
    assert len(QUESTIONS) >= 60 and by_document == {"manual.md", "policy.html", "security.txt"}
    for name in by_document:
        assert len((LONG / name).read_text().split()) >= 2500


@pytest.mark.parametrize("name", ["manual.md", "policy.html", "security.txt"])
def test_every_passage_is_in_its_parsed_document_exactly_once(name: str) -> None:
    parsed = parse_document(name, (LONG / name).read_bytes())
    text = flat(" ".join(s.text for s in parsed.sections))
    for q in QUESTIONS:
        if q["document"] == name:
            assert text.count(flat(q["passage"])) == 1, q
