"""An evaluation's report (issue 43): per-configuration summaries and the paired B - A comparison, in
results ordered by question then configuration, rendered as one HTML page that fetches nothing, escapes
every text from a run and shows each configuration's worst answers first."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from ragline.domain.evaluations import (
    METRICS,
    AnswerResult,
    AnswerScores,
    EvaluationReport,
    EvaluationView,
    SourceRef,
)
from ragline.domain.plans import PlannedRetrieval, QueryPlan
from ragline.services.eval_report import build_report, render_html, worst_answers

pytestmark = pytest.mark.unit

HOSTILE = '<script>alert("x")</script>'
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "table", "tr", "th", "td", "span", "code",
    "div", "p", "b", "details", "summary", "ul", "ol", "li", "svg", "text", "line", "rect", "circle", "g",
}  # fmt: skip
"""Everything the page may contain: no script, image, link, iframe, object or form."""


def view(configs: list[str], *, name: str = "nightly", questions: int = 12) -> EvaluationView:
    return EvaluationView(
        evaluation_id="ev_1",
        name=name,
        status="completed",
        created_at=1_750_000_000.0,
        updated_at=1_750_000_100.0,
        questions=questions,
        configs=configs,
        answers=questions * len(configs),
        done=questions * len(configs),
    )


def scored(value: float | None) -> AnswerScores:
    return AnswerScores(**{m: value for m in METRICS})


def result(qid: str, config: str, value: float | None, **fields: object) -> AnswerResult:
    base: dict[str, object] = {
        "question_id": qid,
        "config": config,
        "question": f"What about {qid}?",
        "answer": f"Answer to {qid} [{qid}#0].",
        "scores": scored(value),
    }
    return AnswerResult.model_validate(base | fields)


def ab_results(n: int = 12) -> list[AnswerResult]:
    """A scores question ``i`` at ``i / 20``, B 0.2 more; both answer every question."""
    return [result(f"q{i:02d}", c, i / 20 + (0.2 if c == "B" else 0.0)) for i in range(n) for c in ("A", "B")]


class Tags(HTMLParser):
    """Every start tag and its attributes, and the text of ``<style>``."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data


def parsed(html: str) -> Tags:
    tags = Tags()
    tags.feed(html)
    return tags


def assert_fetches_nothing(html: str) -> None:
    tags = parsed(html)
    assert {tag for tag, _ in tags.tags} <= ALLOWED_TAGS
    names = {name for _, attrs in tags.tags for name, _ in attrs}
    assert not names & {"src", "href", "xlink:href", "srcset", "action", "data", "poster"}
    assert not [n for n in names if n.startswith("on")]
    assert "url(" not in tags.style and "@import" not in tags.style


def worst_ids(html: str, label: str) -> list[str]:
    """The question ids of a configuration's worst answers, in page order."""
    section = html.split(f"<h2>Worst answers: {label}</h2>", 1)[1].split("<h2>", 1)[0]
    return re.findall(r"<summary><code>([^<]*)</code>", section)


# build_report


def test_a_report_summarises_every_metric_per_configuration_in_order() -> None:
    report = build_report(view(["A", "B"]), ab_results(), "judge-model")
    assert list(report.summaries) == ["A", "B"]
    for label in ("A", "B"):
        assert [s.metric for s in report.summaries[label]] == list(METRICS)
        assert all(s.n == 12 for s in report.summaries[label])
    assert report.summaries["A"][0].mean == pytest.approx(sum(i / 20 for i in range(12)) / 12)
    assert report.summaries["B"][0].mean == pytest.approx(report.summaries["A"][0].mean + 0.2)
    assert report.judge == "judge-model"


def test_two_configurations_are_compared_b_minus_a_per_metric() -> None:
    report = build_report(view(["A", "B"]), ab_results(), "judge")
    assert [d.metric for d in report.comparison] == list(METRICS)
    for d in report.comparison:
        assert d.n == 12
        assert d.difference == pytest.approx(0.2)
        assert d.significant


def test_the_comparison_follows_the_views_order_not_the_results() -> None:
    # Given B listed first by the view: A is then the "B" of the comparison
    report = build_report(view(["B", "A"]), ab_results(), "judge")
    assert list(report.summaries) == ["B", "A"]
    assert report.comparison[0].difference == pytest.approx(-0.2)


def test_one_configuration_has_no_comparison() -> None:
    results = [result(f"q{i}", "A", 0.5) for i in range(5)]
    report = build_report(view(["A"], questions=5), results, "judge")
    assert list(report.summaries) == ["A"]
    assert report.comparison == []


def test_the_comparison_pairs_by_question_and_leaves_out_one_sided_scores() -> None:
    results = ab_results(6)
    results[1] = result("q00", "B", None)  # q00 scored by A only
    report = build_report(view(["A", "B"], questions=6), results, "judge")
    assert all(d.n == 5 for d in report.comparison)
    assert report.summaries["A"][0].n == 6
    assert report.summaries["B"][0].n == 5


def test_results_are_kept_in_question_order_then_configuration_order() -> None:
    results = ab_results(4)
    shuffled = [results[i] for i in (3, 0, 6, 5, 1, 2, 7, 4)]  # q01-B, q00-A, q03-A, q02-B, ...
    report = build_report(view(["A", "B"], questions=4), shuffled, "judge")
    assert [(r.question_id, r.config) for r in report.results] == [
        ("q01", "A"), ("q01", "B"), ("q00", "A"), ("q00", "B"),
        ("q03", "A"), ("q03", "B"), ("q02", "A"), ("q02", "B"),
    ]  # fmt: skip


def test_a_configuration_only_the_results_name_is_summarised_after_the_views() -> None:
    results = [result("q0", "C", 0.1), result("q0", "A", 0.3)]
    report = build_report(view(["A"], questions=1), results, "judge")
    assert list(report.summaries) == ["A", "C"]
    assert [r.config for r in report.results] == ["A", "C"]


# worst answers


def worst_case_results() -> list[AnswerResult]:
    """Config A: q00..q10 scored with means falling then rising, one failed, one unscored."""
    means = [0.9, 0.3, 0.5, 0.1, 0.7, 0.2, 0.8, 0.4, 0.6, 0.95, 0.05]
    results = [result(f"q{i:02d}", "A", m) for i, m in enumerate(means)]
    results.append(result("q11", "A", None, error="timeout"))
    results.append(result("q12", "A", None))
    # Partly scored: its mean is over the scores it has (0.0 and 1.0: 0.5)
    partial = AnswerScores(faithfulness=0.0, citation_precision=1.0)
    results.append(result("q13", "A", None, scores=partial))
    return results


def test_the_worst_answers_are_failures_then_unscored_then_by_ascending_mean() -> None:
    worst = worst_answers(worst_case_results(), "A")
    assert [r.question_id for r in worst] == [
        "q11", "q12", "q10", "q03", "q05", "q01", "q07", "q02", "q13", "q08",
    ]  # fmt: skip


def test_the_page_lists_each_configurations_worst_answers_in_that_order() -> None:
    results = worst_case_results() + [result(f"q{i:02d}", "B", 1.0 - i / 20) for i in range(14)]
    html = render_html(build_report(view(["A", "B"], questions=14), results, "judge"))
    assert worst_ids(html, "A") == ["q11", "q12", "q10", "q03", "q05", "q01", "q07", "q02", "q13", "q08"]
    assert worst_ids(html, "B") == [f"q{i:02d}" for i in range(13, 3, -1)]


# render_html


def rich_result(text: str = "plain") -> AnswerResult:
    """An answer with everything a report shows: reference, citations, sources (one gold), a plan."""
    plan = QueryPlan(
        agent="agentic",
        retrievals=[
            PlannedRetrieval(
                step=1, issued_by="tool_loop", query=f"query {text}", mode="hybrid", namespaces=["docs"],
                k=5, candidates=20, hits=5, ms=12.0,
            )
        ],
    )  # fmt: skip
    return result(
        "q00",
        "A",
        0.25,
        question=f"question {text}",
        reference=f"reference {text}",
        answer=f"answer {text}",
        citations=["doc1#0"],
        sources=[
            SourceRef(
                id="doc1#0", namespace="docs", document_id="doc1", filename=f"file {text}.pdf", gold=True
            ),
            SourceRef(id="doc2#3", namespace="docs", document_id="doc2", excerpt=f"excerpt {text}"),
        ],
        plan=plan,
        judge_reason=f"reason {text}",
    )


def test_the_page_is_self_contained() -> None:
    html = render_html(build_report(view(["A", "B"]), [rich_result(), *ab_results()[1:]], "judge"))
    assert html.startswith("<!DOCTYPE html>")
    assert "http://" not in html and "https://" not in html
    assert "src=" not in html and "href=" not in html
    assert "<svg" in html
    assert_fetches_nothing(html)


def test_hostile_text_is_escaped_everywhere() -> None:
    # Given a job, labels and an answer whose every text is markup
    hostile = rich_result(HOSTILE)
    report = build_report(view([f"A{HOSTILE}", "B"], name=HOSTILE), [], "judge")
    report = report.model_copy(
        update={"results": [hostile.model_copy(update={"config": f"A{HOSTILE}"})], "judge": HOSTILE}
    )
    html = render_html(report)
    # Then none of it is markup: the page holds only its own tags, and the text reads as written
    assert "<script" not in html.lower()
    assert_fetches_nothing(html)
    for field in ("question", "reference", "answer", "file", "excerpt", "query", "reason"):
        assert f"{field} &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "<h1>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</h1>" in html


def test_a_hostile_image_in_an_answer_is_text_not_a_tag() -> None:
    bad = result("q0", "A", 0.0, answer='<img src="https://evil.example/x.png" onerror="alert(1)">')
    html = render_html(build_report(view(["A"], questions=1), [bad], "judge"))
    assert "<img" not in html
    assert "&lt;img src=&quot;https://evil.example/x.png&quot;" in html
    assert_fetches_nothing(html)


def test_the_page_names_every_metric_and_both_configurations() -> None:
    html = render_html(build_report(view(["baseline", "convex"]), [], "judge"))
    for metric in METRICS:
        assert metric in html
    assert "baseline" in html and "convex" in html


def test_the_comparison_is_shown_only_for_two_configurations() -> None:
    two = render_html(build_report(view(["A", "B"]), ab_results(), "judge"))
    one = render_html(build_report(view(["A"]), [r for r in ab_results() if r.config == "A"], "judge"))
    assert "<h2>Comparison: B − A</h2>" in two
    assert "Comparison" not in one
    # A significant row is marked, with its interval to three decimals
    assert '<span class="sig">yes</span>' in two
    assert "0.200" in two


def test_numbers_have_three_decimals_and_missing_ones_read_as_a_dash() -> None:
    results = [result("q0", "A", 1 / 3), result("q1", "A", None)]
    html = render_html(build_report(view(["A"], questions=2), results, "judge"))
    assert "0.333 [0.333, 0.333]" in html
    assert "0.3333" not in html
    assert "—" in html


def test_a_worst_answer_shows_its_question_sources_plan_and_scores() -> None:
    html = render_html(build_report(view(["A"], questions=1), [rich_result()], "judge"))
    section = html.split("<h2>Worst answers: A</h2>", 1)[1]
    for text in ("question plain", "reference plain", "answer plain", "reason plain", "excerpt plain"):
        assert text in section
    assert "file plain.pdf" in section and '<span class="gold">gold</span>' in section
    assert "doc1#0" in section and "doc2" in section
    assert "query plain" in section and "hybrid" in section
    assert section.count("0.250") >= len(METRICS)


def test_the_page_renders_the_report_it_is_given() -> None:
    report = build_report(view(["A", "B"]), ab_results(), "judge")
    again = EvaluationReport.model_validate_json(report.model_dump_json())
    assert render_html(again) == render_html(report)
