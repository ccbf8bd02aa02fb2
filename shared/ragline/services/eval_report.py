"""An evaluation's report: its statistics (:func:`build_report`) and one self-contained HTML page of
them (:func:`render_html`).

The report summarises each metric per configuration (mean, bootstrap 95 % interval, histogram) and,
for an A/B, the paired difference B - A per metric (:mod:`ragline.domain.eval_stats`). The HTML page
renders exactly the report: a header, the summary table, a histogram per metric, the comparison with
its forest plot, and each configuration's worst answers in full. It fetches nothing (inline CSS and
SVG, no script, no link) and escapes every text that came from a run, a question set or a job's name.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from html import escape

from ragline.domain.eval_stats import paired_difference, summarise_metric
from ragline.domain.evaluations import (
    METRICS,
    AnswerResult,
    EvaluationReport,
    EvaluationView,
    MetricDifference,
    MetricSummary,
)
from ragline.domain.plans import QueryPlan
from ragline.services.eval_plots import colour, forest_svg, histogram_svg

WORST = 10
"""Answers shown in full per configuration: the worst scored."""
NONE = "—"
"""How a missing number reads."""
SIGNIFICANT = '<span class="sig">yes</span>'
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#222}
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
.meta{color:#555}.plots{display:flex;flex-wrap:wrap;gap:12px}.plot text{font-size:10px;fill:#333}
.plot text.t{font-size:12px;font-weight:600}.key{display:inline-block;width:10px;height:10px;
margin:0 4px 0 12px}.sig{color:#c0392b;font-weight:600}.text{white-space:pre-wrap;background:#fafafa;
border:1px solid #eee;padding:6px;margin:4px 0}details{margin:6px 0;border:1px solid #ddd;padding:4px 8px}
summary{cursor:pointer}.err{color:#c0392b}.gold{color:#1e7e34;font-weight:600}code{font-size:12px}
"""


def build_report(view: EvaluationView, results: list[AnswerResult], judge: str) -> EvaluationReport:
    """The report of a job and its scored answers: per configuration (the view's order, then any other
    in order of first appearance) one :class:`MetricSummary` per metric of :data:`METRICS`; with
    exactly two configurations, B - A per metric paired by question (A, B: the view's first and
    second); the results in question order (first appearance), then configuration order."""
    labels = config_labels(view, results)
    summaries = {
        label: [summarise_metric(m, [r.scores.get(m) for r in results if r.config == label]) for m in METRICS]
        for label in labels
    }
    comparison: list[MetricDifference] = []
    if len(view.configs) == 2:
        a, b = view.configs
        comparison = [
            paired_difference(m, scores_by_question(results, a, m), scores_by_question(results, b, m))
            for m in METRICS
        ]
    return EvaluationReport(
        evaluation=view,
        judge=judge,
        summaries=summaries,
        comparison=comparison,
        results=ordered_results(results, labels),
    )


def config_labels(view: EvaluationView, results: Iterable[AnswerResult]) -> list[str]:
    """The view's configurations, then any other a result names, in order of first appearance."""
    labels = list(dict.fromkeys(view.configs))
    return list(dict.fromkeys([*labels, *(r.config for r in results)]))


def scores_by_question(results: Iterable[AnswerResult], label: str, metric: str) -> dict[str, float | None]:
    """One configuration's score on one metric, by question id."""
    return {r.question_id: r.scores.get(metric) for r in results if r.config == label}


def ordered_results(results: list[AnswerResult], labels: list[str]) -> list[AnswerResult]:
    """Question order (first appearance), then configuration order (``labels``); stable otherwise."""
    first: dict[str, int] = {}
    for r in results:
        first.setdefault(r.question_id, len(first))
    rank = {label: i for i, label in enumerate(labels)}
    return sorted(results, key=lambda r: (first[r.question_id], rank.get(r.config, len(rank))))


def mean_score(result: AnswerResult) -> float | None:
    """The mean of an answer's available scores (``None``: it has none)."""
    scores = [v for v in (result.scores.get(m) for m in METRICS) if v is not None]
    return sum(scores) / len(scores) if scores else None


def worst_answers(results: list[AnswerResult], label: str, limit: int = WORST) -> list[AnswerResult]:
    """A configuration's ``limit`` worst answers: those that failed first, then those with no score,
    then by ascending mean score; ties in result order."""

    def badness(indexed: tuple[int, AnswerResult]) -> tuple[int, float, int]:
        i, r = indexed
        mean = mean_score(r)
        if r.error is not None:
            return 0, 0.0, i
        return (1, 0.0, i) if mean is None else (2, mean, i)

    mine = [r for r in results if r.config == label]
    return [r for _, r in sorted(enumerate(mine), key=badness)[:limit]]


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def num(x: float | None) -> str:
    """Three decimals; a missing number reads ``—``."""
    return NONE if x is None else f"{x:.3f}"


def interval(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f" [{num(low)}, {num(high)}]"


def render_html(report: EvaluationReport) -> str:
    """The report as one self-contained HTML page (UTF-8): nothing it shows is fetched, every text
    from a run, a question set or the job is escaped, numbers have three decimals."""
    labels = list(report.summaries) or list(report.evaluation.configs)
    title = report.evaluation.name or report.evaluation.evaluation_id
    sections = [
        _header(report, labels),
        _summary_table(report, labels),
        _distributions(report, labels),
        _comparison(report) if report.comparison else "",
        *(_worst(report, label) for label in labels),
    ]
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Evaluation {_e(title)}</title><style>{STYLE}</style></head><body>"
        + "".join(sections)
        + "</body></html>\n"
    )


def _header(report: EvaluationReport, labels: list[str]) -> str:
    view = report.evaluation
    created = datetime.fromtimestamp(view.created_at, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    usage = ", ".join(f"{_e(k)} {v}" for k, v in view.usage.model_dump(by_alias=True).items())
    keys = "".join(
        f'<span class="key" style="background:{colour(i)}"></span>{_e(label)}'
        for i, label in enumerate(labels)
    )
    rows = [
        ("Evaluation", f"<code>{_e(view.evaluation_id)}</code>"),
        ("Status", _e(view.status) + (f' <span class="err">{_e(view.error)}</span>' if view.error else "")),
        ("Created", created),
        ("Questions", f"{view.questions} ({view.done} of {view.answers} answers scored)"),
        ("Configurations", keys),
        ("Judge", _e(report.judge or view.judge) or NONE),
        ("Usage", usage),
    ]
    table = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<h1>{_e(view.name or "Evaluation")}</h1><table class="meta">{table}</table>'


def _summary_table(report: EvaluationReport, labels: list[str]) -> str:
    head = "".join(f"<th>{_e(label)}: mean [95% CI]</th><th>n</th>" for label in labels)
    rows = []
    for metric in METRICS:
        cells = ""
        for label in labels:
            s = _summary_of(report, label, metric)
            cells += (
                f'<td class="n">{num(s.mean)}{interval(s.ci_low, s.ci_high)}</td><td class="n">{s.n}</td>'
            )
        rows.append(f"<tr><th>{_e(metric)}</th>{cells}</tr>")
    return f"<h2>Summary</h2><table><tr><th>Metric</th>{head}</tr>{''.join(rows)}</table>"


def _summary_of(report: EvaluationReport, label: str, metric: str) -> MetricSummary:
    """A configuration's summary of a metric (found by name; an empty one when the report has none)."""
    found = [s for s in report.summaries.get(label, []) if s.metric == metric]
    return found[0] if found else MetricSummary(metric=metric, n=0, histogram=[0] * 10)


def _distributions(report: EvaluationReport, labels: list[str]) -> str:
    plots = []
    for metric in METRICS:
        series = [(label, _summary_of(report, label, metric).histogram) for label in labels]
        plots.append(histogram_svg(metric, series))
    return f'<h2>Distributions</h2><div class="plots">{"".join(plots)}</div>'


def _comparison(report: EvaluationReport) -> str:
    configs = report.evaluation.configs
    a, b = (configs[0], configs[1]) if len(configs) == 2 else ("A", "B")
    rows = "".join(
        f'<tr><th>{_e(d.metric)}</th><td class="n">{d.n}</td><td class="n">{num(d.a_mean)}</td>'
        f'<td class="n">{num(d.b_mean)}</td><td class="n">{num(d.difference)}</td>'
        f'<td class="n">{interval(d.ci_low, d.ci_high).strip() or NONE}</td>'
        f"<td>{SIGNIFICANT if d.significant else 'no'}</td></tr>"
        for d in report.comparison
    )
    head = (
        f"<tr><th>Metric</th><th>n (paired)</th><th>{_e(a)}</th><th>{_e(b)}</th><th>{_e(b)} − {_e(a)}</th>"
        "<th>95% CI</th><th>Significant</th></tr>"
    )
    return f"<h2>Comparison: {_e(b)} − {_e(a)}</h2><table>{head}{rows}</table>{forest_svg(report.comparison)}"


def _worst(report: EvaluationReport, label: str) -> str:
    answers = worst_answers(report.results, label)
    body = "".join(_answer(r) for r in answers) or "<p>No answers.</p>"
    return f"<h2>Worst answers: {_e(label)}</h2>{body}"


def _answer(r: AnswerResult) -> str:
    mean = mean_score(r)
    flag = ' <span class="err">error</span>' if r.error is not None else ""
    summary = f"<code>{_e(r.question_id)}</code> mean {num(mean)}{flag}: {_e(r.question[:200])}"
    scores = "".join(f'<th>{_e(m)}</th><td class="n">{num(r.scores.get(m))}</td>' for m in METRICS)
    parts = [
        f'<p><b>Question</b></p><div class="text">{_e(r.question)}</div>',
        f'<p><b>Reference</b></p><div class="text">{_e(r.reference)}</div>' if r.reference else "",
        f'<p class="err">Error: {_e(r.error)}</p>' if r.error is not None else "",
        f'<p><b>Answer</b> <span class="meta">({_e(r.exit_reason or NONE)}, run <code>{_e(r.run_id or NONE)}'
        f'</code>)</span></p><div class="text">{_e(r.answer)}</div>',
        f"<table><tr>{scores}</tr></table>",
        f"<p><b>Judge</b>: {_e(r.judge_reason)}</p>" if r.judge_reason else "",
        _citations(r),
        _sources(r),
        _plan(r.plan) if r.plan is not None else "",
    ]
    return f"<details><summary>{summary}</summary>{''.join(parts)}</details>"


def _citations(r: AnswerResult) -> str:
    if not r.citations:
        return "<p><b>Citations</b>: none</p>"
    return "<p><b>Citations</b>: " + ", ".join(f"<code>{_e(c)}</code>" for c in r.citations) + "</p>"


def _sources(r: AnswerResult) -> str:
    if not r.sources:
        return "<p><b>Sources</b>: none</p>"
    cited = set(r.citations)
    items = []
    for s in r.sources:
        marks = (' <span class="gold">gold</span>' if s.gold else "") + (" cited" if s.id in cited else "")
        where = f"{_e(s.filename or s.document_id)} <code>{_e(s.id)}</code> in {_e(s.namespace)}{marks}"
        excerpt = f'<div class="text">{_e(s.excerpt)}</div>' if s.excerpt else ""
        items.append(f"<li>{where}{excerpt}</li>")
    return f"<p><b>Sources</b></p><ol>{''.join(items)}</ol>"


def _plan(plan: QueryPlan) -> str:
    """A plan, compact: the agent and its routing, its sub-questions, rounds and hops, and each
    retrieval's step, mode, query, hits and error."""
    lines = [f"agent {_e(plan.agent)}"]
    if plan.route is not None:
        lines.append(f"routed to {_e(plan.route.agent)}: {_e(plan.route.reason)}")
    if plan.collections is not None:
        lines.append(
            f"collections {_e(', '.join(plan.collections.namespaces))}: {_e(plan.collections.reason)}"
        )
    lines += [f"sub-question: {_e(q)}" for q in plan.sub_questions]
    lines += [f"round {r.round}: {_e(' | '.join(r.queries))}" for r in plan.rounds]
    lines += [f"hop {h.hop}: {_e(h.question)} → {_e(h.answer or NONE)}" for h in plan.hops]
    for s in plan.retrievals:
        error = f' <span class="err">{_e(s.error)}</span>' if s.error else ""
        lines.append(
            f"step {s.step} {_e(s.issued_by)} {_e(s.mode)} in {_e(', '.join(s.namespaces))}: "
            f"<code>{_e(s.query)}</code> → {s.hits} hits{error}"
        )
    return "<p><b>Plan</b></p><ul>" + "".join(f"<li>{line}</li>" for line in lines) + "</ul>"
