"""``ragline eval``: retrieval scores on a BEIR dataset (:mod:`ragline.cli.beir_eval`), or, as ``eval
answers QUESTIONS``, a question set answered through chat and every answer scored
(:mod:`ragline.cli.eval_answers`). Both are heavy; they are imported when the command runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragline.cli.context import build_container, fail, invalid
from ragline.cli.options import Home, Json, Tenant


def evaluate(
    dataset: Annotated[
        str,
        typer.Argument(
            help="A BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv): retrieval scores; or"
            " `answers` followed by a question file: answer evaluation."
        ),
    ],
    questions: Annotated[
        Path | None, typer.Argument(help="With `answers`: the questions, JSON lines (evals/README.md).")
    ] = None,
    split: Annotated[str, typer.Option(help="train | test | dev")] = "test",
    modes: Annotated[
        str,
        typer.Option(
            help="Comma-separated: keyword, semantic, hybrid (configured fusion), hybrid:rrf, hybrid:convex,"
            " hybrid:adaptive, accurate (chat's default: hybrid → rerank → the chunks one search shows)."
        ),
    ] = "keyword,semantic,hybrid:rrf,hybrid:convex,hybrid:adaptive,accurate",
    config: Annotated[
        list[str] | None,
        typer.Option(
            "--config",
            help="answers: a configuration, KEY=VALUE,… with keys label, agent, mode, fusion, alpha,"
            " namespaces (a+b); give two for an A/B.",
        ),
    ] = None,
    beir: Annotated[
        list[str] | None,
        typer.Option(
            "--beir", help="answers: NAMESPACE=FOLDER: index a BEIR corpus into the namespace first."
        ),
    ] = None,
    judge: Annotated[
        bool, typer.Option("--judge/--no-judge", help="answers: grade against the references.")
    ] = True,
    report: Annotated[Path | None, typer.Option(help="answers: also write the HTML report here.")] = None,
    limit: Annotated[int | None, typer.Option(help="answers: the first N questions only.")] = None,
    as_json: Json = False,
    home: Home = None,
    tenant: Tenant = "local",
) -> None:
    """Index a BEIR dataset and print nDCG@10, Recall@100 and MRR@10 per mode; or, as ``eval answers
    QUESTIONS``, answer a question set through chat and score every answer (table + HTML report).
    ``--json``: the scores per mode, or the answers' evaluation report, as JSON."""
    from ragline.errors import RaglineError

    try:
        if dataset == "answers":
            from ragline.cli.eval_answers import run_answers

            if questions is None:
                raise invalid("eval answers needs a question file")
            run_answers(
                build_container(home), tenant, questions, configs=config or [], beir=beir or [],
                judge=judge, report=report, limit=limit, as_json=as_json,
            )  # fmt: skip
            return
        from ragline.cli.beir_eval import run_eval

        chosen = [m.strip() for m in modes.split(",") if m.strip()]
        run_eval(build_container(home), Path(dataset), split, chosen, as_json=as_json)
    except RaglineError as exc:
        raise fail(exc) from exc
