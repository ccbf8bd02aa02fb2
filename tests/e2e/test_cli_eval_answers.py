"""``ragline eval answers``: the committed northwind questions through chat, offline, an A/B of two
fusion settings with its confidence intervals, the HTML report written; a BEIR corpus indexed first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_cli import ROOT, cli, home  # noqa: F401  (the fixture)

pytestmark = pytest.mark.e2e
NORTHWIND = ROOT / "evals" / "northwind.jsonl"


def test_an_ab_of_two_fusions_prints_both_and_their_difference(home: Path, tmp_path: Path) -> None:  # noqa: F811
    report = tmp_path / "report.html"
    code, out = cli(
        "eval", "answers", str(NORTHWIND), "--home", str(home), "--limit", "8",
        "--config", "label=convex,fusion=convex", "--config", "label=rrf,fusion=rrf", "--report", str(report),
    )  # fmt: skip
    assert code == 0, out
    assert "northwind.jsonl: 8 questions, judge reference-overlap" in out
    for metric in ("faithfulness", "citationPrecision", "citationCoverage", "goldRecall", "correctness"):
        assert out.count(metric) == 2, out  # a row in the summary and one in the A/B table
    assert "rrf − convex (paired bootstrap 95% CI)" in out
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "rrf" in page
    assert "https://" not in page and "http://" not in page


def test_json_is_the_report_and_a_beir_corpus_is_indexed_first(home: Path, tmp_path: Path) -> None:  # noqa: F811
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    docs = [
        {"_id": "d1", "title": "Tides", "text": "The moon's gravity raises the tides twice a day."},
        {"_id": "d2", "title": "Volcanoes", "text": "Basalt forms when lava cools quickly at the surface."},
    ]
    (beir / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    (beir / "queries.jsonl").write_text(json.dumps({"_id": "x", "text": "tides"}), encoding="utf-8")
    (beir / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nx\td1\t1\n", encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"id": "t1", "question": "What raises the tides?", "reference": "The moon's gravity.",
                    "gold": ["d1"], "namespaces": ["science"]}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    code, out = cli(
        "eval", "answers", str(questions), "--home", str(home), "--beir", f"science={beir}", "--json"
    )
    assert code == 0, out
    report = json.loads(out)
    (result,) = report["results"]
    assert result["questionId"] == "t1" and result["scores"]["goldRecall"] == 1.0
    assert "moon" in result["answer"].lower() and result["citations"]
    assert report["evaluation"]["status"] == "completed" and report["comparison"] == []


def test_a_bad_question_file_names_its_line(home: Path, tmp_path: Path) -> None:  # noqa: F811
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "a", "question": "ok?"}\n\n{"id": "b"}\n', encoding="utf-8")
    code, out = cli("eval", "answers", str(questions), "--home", str(home))
    assert code == 2 and f"{questions}:3: question: Field required" in out, out
    questions.write_text('{"id": "a", "question": "ok?"}\n', encoding="utf-8")
    code, out = cli("eval", "answers", str(questions), "--home", str(home), "--config", "colour=red")
    assert code == 2 and "use KEY=VALUE" in out, out
    code, out = cli("eval", "answers", "--home", str(home))
    assert code == 2 and "needs a question file" in out, out
