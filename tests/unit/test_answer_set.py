"""The committed answer-evaluation question set (``evals/answers.jsonl``, issue 43) is well formed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragline.domain.evaluations import MAX_QUESTIONS, EvalQuestion

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "evals" / "answers.jsonl"
NORTHWIND = ROOT / "evals" / "northwind.jsonl"
SAMPLES = ROOT / "samples" / "northwind"
MULTIHOP = ROOT / "bench" / "data" / "multihop.jsonl"


def _load(path: Path) -> list[EvalQuestion]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [EvalQuestion.model_validate_json(line) for line in lines]


@pytest.fixture(scope="module")
def questions() -> list[EvalQuestion]:
    return _load(ANSWERS)


def _part(questions: list[EvalQuestion], namespace: str) -> list[EvalQuestion]:
    return [q for q in questions if q.namespaces == [namespace]]


def test_the_set_is_big_enough_and_ids_are_unique(questions: list[EvalQuestion]) -> None:
    assert 50 <= len(questions) <= MAX_QUESTIONS
    ids = [q.id for q in questions]
    assert len(set(ids)) == len(ids)


def test_every_question_has_a_reference_and_gold(questions: list[EvalQuestion]) -> None:
    for q in questions:
        assert q.reference and q.reference.strip(), q.id
        assert len(q.gold) >= 1, q.id


def test_it_is_northwind_then_scifact(questions: list[EvalQuestion]) -> None:
    northwind, scifact = _part(questions, "northwind"), _part(questions, "scifact")
    assert len(northwind) >= 20
    assert len(scifact) >= 30
    assert questions == northwind + scifact


def test_northwind_gold_files_exist(questions: list[EvalQuestion]) -> None:
    for q in _part(questions, "northwind"):
        for name in q.gold:
            assert (SAMPLES / name).is_file(), f"{q.id}: {name}"


def test_northwind_part_is_the_hand_written_file(questions: list[EvalQuestion]) -> None:
    assert _part(questions, "northwind") == _load(NORTHWIND)


def test_every_multihop_question_is_in_the_set(questions: list[EvalQuestion]) -> None:
    by_id = {q.id: q for q in questions}
    multihop = [json.loads(line) for line in MULTIHOP.read_text(encoding="utf-8").splitlines() if line]
    assert len(multihop) == 15
    for item in multihop:
        q = by_id[item["id"]]
        assert q.question == item["question"]
        assert q.gold == item["gold"]


def test_refusal_questions_say_the_documents_do_not_say(questions: list[EvalQuestion]) -> None:
    refusals = [q for q in questions if q.id.startswith("nw-none-")]
    assert len(refusals) >= 2
    for q in refusals:
        assert q.reference is not None
        assert q.reference.startswith("The documents do not say")


def test_scifact_questions_are_claims_with_a_verdict_and_one_abstract(questions: list[EvalQuestion]) -> None:
    for q in _part(questions, "scifact"):
        assert q.id.startswith("scifact-")
        assert q.question.startswith("Is it true that ")
        assert q.question.endswith("?")
        assert q.reference is not None
        assert q.reference.startswith(("Yes. ", "No. "))
        assert len(q.gold) == 1
        assert q.gold[0].isdigit()
