"""``ragline eval DATASET``: index a BEIR dataset and score retrieval per mode (nDCG@10, Recall@30,
Recall@100, MRR@10, time per query). The scores are printed by :func:`ragline.cli.output.print_scores`,
or with ``--json`` as :class:`ragline.cli.views.RetrievalEval`."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from ragline import errors
from ragline.cli.output import ScoreRow, print_json, print_scores
from ragline.cli.views import RetrievalEval
from ragline.domain.models import TenantScope
from ragline.services.evaluation import EvalMode, load_beir
from ragline.wiring import Container

EVAL_MODES = ("keyword", "semantic", "hybrid", "hybrid:rrf", "hybrid:convex", "hybrid:adaptive", "accurate")


def run_eval(c: Container, dataset: Path, split: str, modes: list[str], *, as_json: bool = False) -> None:
    """``hybrid`` uses the configured fusion; ``hybrid:rrf``/``:convex``/``:adaptive`` force one; ``accurate``
    is chat's default pipeline (hybrid → the configured reranker → the chunks one search shows)."""
    for m in modes:
        if m not in EVAL_MODES:
            raise errors.InvalidRequest(f"unknown mode {m!r}; use {', '.join(EVAL_MODES)}")
    data = load_beir(dataset, split)
    scope = TenantScope(tenant_id="eval", namespace_id=f"beir-{dataset.resolve().name}"[:100])
    with Progress(console=Console(stderr=True)) as progress:  # progress on stderr: stdout is the result
        task = progress.add_task("indexing corpus", total=len(data.corpus))
        c.evaluation.index(scope, data, progress=lambda n: progress.advance(task, n))
        progress.update(task, completed=len(data.corpus))
    rows: list[ScoreRow] = []
    for m in modes:
        base, _, fusion = m.partition(":")
        mode: EvalMode = base  # type: ignore[assignment]
        started = time.perf_counter()
        s = c.evaluation.score(scope, data, mode, fusion=fusion or None)  # type: ignore[arg-type]
        rows.append(ScoreRow(m, s, (time.perf_counter() - started) * 1000 / max(s.queries, 1)))
    # accurate is chat's default pipeline: say which reranker it ran with
    reranker = (c.retrieval.reranker_name or "none (fused order)") if "accurate" in modes else None
    if as_json:
        print_json(RetrievalEval.of(dataset.name, split, data, rows, reranker))
        return
    title = f"{dataset.name} ({split}, {len(data.queries)} queries, {len(data.corpus)} docs)"
    print_scores(title, rows, reranker)
