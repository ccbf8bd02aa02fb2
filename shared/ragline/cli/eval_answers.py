"""``ragline eval answers QUESTIONS``: a question set through the chat pipeline, each answer scored,
a table printed and the job's HTML report written (see :mod:`ragline.services.answer_evals`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from ragline import errors
from ragline.cli.output import print_json
from ragline.domain.evaluations import EvalQuestion, EvaluationReport, EvaluationRequest
from ragline.domain.models import TenantScope
from ragline.services.authentication import Principal
from ragline.services.evaluation import load_beir
from ragline.wiring import Container

CONFIG_KEYS = ("label", "agent", "mode", "fusion", "alpha", "namespaces")


def load_questions(path: Path, limit: int | None = None) -> list[EvalQuestion]:
    """The questions of a JSON-lines file (blank lines skipped); a bad line is an invalid request
    naming its line number."""
    if not path.is_file():
        raise errors.InvalidRequest(f"no question file {path}", path=str(path))
    questions: list[EvalQuestion] = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                questions.append(EvalQuestion.model_validate_json(line))
            except ValidationError as exc:
                problem = exc.errors()[0]
                where = ".".join(map(str, problem["loc"]))
                raise errors.InvalidRequest(f"{path}:{number}: {where}: {problem['msg']}") from exc
            if limit is not None and len(questions) >= limit:
                break
    return questions


def parse_config(text: str, default_label: str) -> dict[str, Any]:
    """``KEY=VALUE,…`` (keys: :data:`CONFIG_KEYS`; ``namespaces=a+b``) as an ``EvalConfig`` body."""
    body: dict[str, Any] = {"label": default_label}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in CONFIG_KEYS:
            raise errors.InvalidRequest(
                f"--config {text!r}: use KEY=VALUE with KEY one of {', '.join(CONFIG_KEYS)}"
            )
        body[key] = [n for n in value.split("+") if n] if key == "namespaces" else value
    return body


def index_beir(c: Container, tenant: str, spec: str) -> None:
    """``NAMESPACE=FOLDER``: the BEIR corpus indexed into the namespace (once; reused after)."""
    namespace, sep, folder = spec.partition("=")
    if not sep or not namespace or not folder:
        raise errors.InvalidRequest(f"--beir {spec!r}: use NAMESPACE=FOLDER")
    data = load_beir(Path(folder), "train")
    c.evaluation.index(TenantScope(tenant_id=tenant, namespace_id=namespace), data)


def run_answers(
    c: Container,
    tenant: str,
    questions_file: Path,
    *,
    configs: list[str],
    beir: list[str],
    judge: bool,
    report: Path | None,
    limit: int | None,
    as_json: bool,
    name: str = "",
) -> EvaluationReport:
    questions = load_questions(questions_file, limit)
    if not questions:
        raise errors.InvalidRequest(f"{questions_file} holds no question")
    bodies = [parse_config(text, "AB"[i] if i < 2 else str(i)) for i, text in enumerate(configs or [""])]
    try:
        request = EvaluationRequest.model_validate(
            {
                "name": name or questions_file.name,
                "questions": [q.model_dump(by_alias=True) for q in questions],
                "configs": bodies,
                "judge": judge,
            }
        )
    except ValidationError as exc:
        problem = exc.errors()[0]
        raise errors.InvalidRequest(f"{'.'.join(map(str, problem['loc']))}: {problem['msg']}") from exc
    for spec in beir:
        index_beir(c, tenant, spec)
    caller = Principal.operator(tenant)
    answers = len(questions) * len(request.configs)
    with Progress(console=Console(stderr=True), disable=as_json) as progress:
        task = progress.add_task("answering", total=answers)
        result = c.evaluations.run(caller, request, progress=lambda n: progress.update(task, completed=n))
    html = c.evaluations.report(caller, result.evaluation.evaluation_id, "html")
    if report is None:  # the embedded store's own file (the AWS backend's is in its bucket)
        stored = c.settings.home / "evaluations" / tenant / result.evaluation.evaluation_id / "report.html"
        report = stored if stored.is_file() else None
    else:
        report.write_bytes(html)
    if as_json:
        print_json(result)
    else:
        print_report(result, report)
    return result


def print_report(result: EvaluationReport, report: Path | None) -> None:
    console = Console()
    view = result.evaluation
    table = Table(title=f"{view.name}: {view.questions} questions, judge {result.judge or 'off'}")
    table.add_column("metric")
    for label in view.configs:
        table.add_column(f"{label} mean [95% CI] (n)")
    by_label = {label: {s.metric: s for s in result.summaries.get(label, [])} for label in view.configs}
    metrics = [s.metric for s in next(iter(result.summaries.values()), [])]
    for metric in metrics:
        cells = []
        for label in view.configs:
            s = by_label[label].get(metric)
            cells.append(
                "—"
                if s is None or s.mean is None
                else f"{s.mean:.3f} [{s.ci_low:.3f}, {s.ci_high:.3f}] ({s.n})"
            )
        table.add_row(metric, *cells)
    console.print(table)
    if result.comparison:
        ab = Table(title=f"{view.configs[1]} − {view.configs[0]} (paired bootstrap 95% CI)")
        for col in ("metric", "difference", "95% CI", "n", "significant"):
            ab.add_column(col)
        for d in result.comparison:
            if d.difference is None:
                ab.add_row(d.metric, "—", "—", str(d.n), "")
            else:
                ab.add_row(d.metric, f"{d.difference:+.3f}", f"[{d.ci_low:+.3f}, {d.ci_high:+.3f}]", str(d.n),
                           "yes" if d.significant else "no")  # fmt: skip
        console.print(ab)
    failed = sum(1 for r in result.results if r.error)
    if failed:
        console.print(f"{failed} answer(s) failed; the report lists their errors")
    where = str(report) if report is not None else f"GET /v1/evaluations/{view.evaluation_id}/report"
    console.print(f"evaluation {view.evaluation_id}; report: {where}")
