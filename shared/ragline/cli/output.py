"""Terminal rendering for ``search``, ``chat`` and ``eval``."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from ragline import errors
from ragline.agents.events import (
    AnswerDelta,
    Collections,
    Route,
    RunError,
    RunEvent,
    RunFinished,
    Sources,
    ToolFinished,
    ToolStarted,
    Warning,
)
from ragline.domain.api import HostingSearchResponse, Scores, SearchResponse
from ragline.domain.citations import CITATION
from ragline.domain.models import TenantScope
from ragline.services.evaluation import EvalMode, load_beir
from ragline.wiring import Container

console = Console()


def _fmt(x: float | int | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4f}" if isinstance(x, float) else str(x)


def print_hits(response: SearchResponse) -> None:
    for w in response.warnings:
        console.print(f"[yellow]warning {escape(f'[{w.code}]')}: {escape(w.message)}[/yellow]")
    table = Table()
    for col in ("#", "chunk", "score", "sem rank", "kw rank"):
        table.add_column(col, overflow="fold")
    table.add_column("text", ratio=1)
    for i, h in enumerate(response.hits, start=1):
        b = h.scores or Scores()
        text = " ".join(h.text.split())
        table.add_row(str(i), h.id, _fmt(h.score), _fmt(b.semantic_rank), _fmt(b.keyword_rank), text[:90])
    console.print(table)


def print_hosting_search(response: HostingSearchResponse) -> None:
    """The rounds (queries, new chunks, verdict), then the chunks kept."""
    console.print(f"[dim]model: {response.model}[/dim]")
    for w in response.warnings:
        console.print(f"[yellow]warning {escape(f'[{w.code}]')}: {escape(w.message)}[/yellow]")
    for r in response.rounds:
        verdict = {True: "can answer", False: "cannot answer yet", None: "not evaluated"}[r.can_answer]
        console.print(
            f"[bold]round {r.round}[/bold]: {r.new_chunks} new chunks, {verdict}, {r.tokens} tokens"
        )
        for q in (q for q in response.queries if q.round == r.round):
            console.print(f"  {q.type:<8} {q.hits:>3} hits  {q.query}")
    console.print(f"exit: {response.exit_reason} after {response.total_queries} queries")
    table = Table()
    for col in ("#", "namespace", "chunk", "score", "rerank"):
        table.add_column(col, overflow="fold")
    table.add_column("text", ratio=1)
    for i, c in enumerate(response.chunks, start=1):
        rerank = c.scores.rerank_score if c.scores else None
        table.add_row(str(i), c.namespace, c.id, _fmt(c.score), _fmt(rerank), " ".join(c.text.split())[:90])
    console.print(table)


def stream_chat(events: Iterable[RunEvent], model_name: str) -> None:
    """The run as it streams (text, steps, routing, warnings and errors with their reasons), then the
    verified answer — invented citations removed, the rest numbered — and its numbered sources."""
    console.print(f"[dim]model: {escape(model_name)}[/dim]")
    final: RunFinished | None = None
    sources: Sources | None = None
    for ev in events:
        if isinstance(ev, AnswerDelta):
            console.print(ev.text, end="", highlight=False, markup=False)
        elif isinstance(ev, ToolStarted):
            console.print(f"[dim]→ {escape(ev.tool)}…[/dim]")
        elif isinstance(ev, ToolFinished):
            failed = f" ({ev.error})" if ev.error else ""
            console.print(escape(f"  {ev.label}: {ev.hits} hits{failed}"), style="dim")
        elif isinstance(ev, Warning):
            console.print(escape(f"\nwarning [{ev.code}]: {ev.message}"), style="yellow")
        elif isinstance(ev, RunError):
            console.print(escape(f"\nerror [{ev.code}]: {ev.message}"), style="bold red")
        elif isinstance(ev, Collections):
            console.print(
                escape(f"namespaces: {', '.join(ev.namespaces) or '(none)'} — {ev.reason}"), style="dim"
            )
        elif isinstance(ev, Route):
            console.print(escape(f"agent: {ev.agent} — {ev.reason}"), style="dim")
        elif isinstance(ev, Sources):
            sources = ev
        elif isinstance(ev, RunFinished):
            final = ev
    console.print()
    chunks = sources.chunks if sources else []
    if final and final.answer:
        number = {c.id: i for i, c in enumerate(chunks, start=1)}

        def marks(m: re.Match[str]) -> str:
            return " " + "".join(f"[{number[i]}]" for i in m.group(1).split(",") if i in number)

        console.print("[bold]Answer[/bold] (citations verified)")
        console.print(escape(CITATION.sub(marks, final.answer).strip()), highlight=False)
    if chunks:
        console.print("[bold]Sources[/bold]")
        for i, s in enumerate(chunks, start=1):
            where = f", page {s.page}" if s.page else ""
            text = " ".join(s.text.split())[:100]
            console.print(escape(f"  [{i}] {s.id} — {s.filename}{where}: {text}"), highlight=False)
    if final:
        u = final.usage
        console.print(
            f"[dim]run {final.run_id} · exit {final.exit_reason} · retrievals {u.retrievals}"
            f" · tokens in/out {u.llm_input_tokens}/{u.llm_output_tokens}[/dim]"
        )


EVAL_MODES = ("keyword", "semantic", "hybrid", "hybrid:rrf", "hybrid:convex", "accurate")


def run_eval(c: Container, dataset: Path, split: str, modes: list[str]) -> None:
    """``hybrid`` uses the configured fusion; ``hybrid:rrf``/``hybrid:convex`` force one; ``accurate``
    is chat's default pipeline (hybrid → the configured reranker → the chunks one search shows)."""
    for m in modes:
        if m not in EVAL_MODES:
            raise errors.InvalidRequest(f"unknown mode {m!r}; use {', '.join(EVAL_MODES)}")
    data = load_beir(dataset, split)
    scope = TenantScope(tenant_id="eval", namespace_id=f"beir-{dataset.resolve().name}"[:100])
    with Progress(console=Console(stderr=True)) as progress:
        task = progress.add_task("indexing corpus", total=len(data.corpus))
        c.evaluation.index(scope, data, progress=lambda n: progress.advance(task, n))
        progress.update(task, completed=len(data.corpus))
    table = Table(title=f"{dataset.name} ({split}, {len(data.queries)} queries, {len(data.corpus)} docs)")
    for col in ("mode", "nDCG@10", "Recall@100", "MRR@10", "ms/query"):
        table.add_column(col)
    for m in modes:
        base, _, fusion = m.partition(":")
        mode: EvalMode = base  # type: ignore[assignment]
        started = time.perf_counter()
        s = c.evaluation.score(scope, data, mode, fusion=fusion or None)  # type: ignore[arg-type]
        per_query = (time.perf_counter() - started) * 1000 / max(s.queries, 1)
        table.add_row(
            m, f"{s.ndcg_at_10:.4f}", f"{s.recall_at_100:.4f}", f"{s.mrr_at_10:.4f}", f"{per_query:.1f}"
        )
    console.print(table)
    if "accurate" in modes:  # chat's default pipeline: say which reranker it ran with
        console.print(f"accurate: rerank {c.retrieval.reranker_name or 'none (fused order)'}")
