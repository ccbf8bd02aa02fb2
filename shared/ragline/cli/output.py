"""Terminal rendering for ``search``, ``chat`` and ``eval``."""

from __future__ import annotations

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
from ragline.cli.citation_marks import CitationMarks
from ragline.cli.grounding_view import print_grounding
from ragline.domain.api import ChunkView, HostingSearchResponse, Scores, SearchResponse
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


def stream_chat(events: Iterable[RunEvent], model_name: str) -> RunFinished | None:
    """The run as it streams — the answer once, its citations shown as ``[n]``, with steps, routing,
    warnings and errors with their reasons — then the sources under the answer's numbers; its final
    event (None: the run ended without one)."""
    console.print(f"[dim]model: {escape(model_name)}[/dim]")
    marks = CitationMarks()
    streamed = False
    final: RunFinished | None = None
    sources: list[ChunkView] = []
    removed: list[str] = []
    for ev in events:
        if isinstance(ev, AnswerDelta):
            streamed = True
            console.print(marks.feed(ev.text), end="", highlight=False, markup=False)
            continue
        console.print(marks.flush(), end="", highlight=False, markup=False)
        if isinstance(ev, ToolStarted):
            console.print(f"[dim]→ {escape(ev.tool)}…[/dim]")
        elif isinstance(ev, ToolFinished):
            failed = f" ({ev.error})" if ev.error else ""
            console.print(escape(f"  {ev.label}: {ev.hits} hits{failed}"), style="dim")
        elif isinstance(ev, Warning):
            console.print(escape(f"\nwarning [{ev.code}]: {ev.message}"), style="yellow")
            if ev.code == "unknown_citations":
                removed = [str(i) for i in ev.details.get("ids", [])]
        elif isinstance(ev, RunError):
            console.print(escape(f"\nerror [{ev.code}]: {ev.message}"), style="bold red")
        elif isinstance(ev, Collections):
            console.print(
                escape(f"namespaces: {', '.join(ev.namespaces) or '(none)'} — {ev.reason}"), style="dim"
            )
        elif isinstance(ev, Route):
            console.print(escape(f"agent: {ev.agent} — {ev.reason}"), style="dim")
        elif isinstance(ev, Sources):
            sources = ev.chunks
        elif isinstance(ev, RunFinished):
            final = ev
    if final and final.answer and not streamed:  # a replayed run: its answer comes whole, at the end
        console.print(marks.feed(final.answer) + marks.flush(), end="", highlight=False, markup=False)
    console.print()
    _print_sources(marks.numbers, sources, removed)
    if final:
        print_grounding(console, final.grounding, marks.numbers)
        u = final.usage
        console.print(
            f"[dim]run {final.run_id} · exit {final.exit_reason} · retrievals {u.retrievals}"
            f" · tokens in/out {u.llm_input_tokens}/{u.llm_output_tokens}[/dim]"
        )
    return final


def _print_sources(numbers: dict[str, int], chunks: list[ChunkView], removed: list[str]) -> None:
    """The cited chunks under the numbers the streamed answer gave them; a number whose citation the
    run removed (a chunk it never retrieved) says so rather than pointing at nothing."""
    by_id = {c.id: c for c in chunks}
    for chunk in chunks:  # a source the stream did not number (none expected) still gets one
        numbers.setdefault(chunk.id, len(numbers) + 1)
    if not numbers:
        return
    console.print("[bold]Sources[/bold]")
    for cited, number in sorted(numbers.items(), key=lambda item: item[1]):
        source = by_id.get(cited)
        if source is None:
            why = "not retrieved in this run: citation removed" if cited in removed else "not retrieved"
            console.print(escape(f"  [{number}] {cited} — {why}"), style="dim", highlight=False)
            continue
        where = f", page {source.page}" if source.page else ""
        text = " ".join(source.text.split())[:100]
        console.print(escape(f"  [{number}] {cited} — {source.filename}{where}: {text}"), highlight=False)


EVAL_MODES = ("keyword", "semantic", "hybrid", "hybrid:rrf", "hybrid:convex", "hybrid:adaptive", "accurate")


def run_eval(c: Container, dataset: Path, split: str, modes: list[str]) -> None:
    """``hybrid`` uses the configured fusion; ``hybrid:rrf``/``:convex``/``:adaptive`` force one; ``accurate``
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
    for col in ("mode", "nDCG@10", "Recall@30", "Recall@100", "MRR@10", "ms/query"):
        table.add_column(col)
    for m in modes:
        base, _, fusion = m.partition(":")
        mode: EvalMode = base  # type: ignore[assignment]
        started = time.perf_counter()
        s = c.evaluation.score(scope, data, mode, fusion=fusion or None)  # type: ignore[arg-type]
        per_query = (time.perf_counter() - started) * 1000 / max(s.queries, 1)
        table.add_row(
            m,
            f"{s.ndcg_at_10:.4f}",
            f"{s.recall_at_30:.4f}",
            f"{s.recall_at_100:.4f}",
            f"{s.mrr_at_10:.4f}",
            f"{per_query:.1f}",
        )
    console.print(table)
    if "accurate" in modes:  # chat's default pipeline: say which reranker it ran with
        console.print(f"accurate: rerank {c.retrieval.reranker_name or 'none (fused order)'}")
