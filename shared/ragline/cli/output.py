"""Terminal rendering of the commands' results: ``search``, ``hosting-search``, ``chat``, ``eval``'s
scores; and ``--json``'s: a response model as the API's JSON, a stream as JSON lines, an error as the
API's error body. The commands' results are printed here, so each
command decides what to show and this module how.

It imports no command module and nothing heavy (no services, no container), so any command module
can use it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

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
from ragline.domain.api import ChunkView, ErrorBody, HostingSearchResponse, Scores, SearchResponse

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ragline.errors import RaglineError
    from ragline.services.evaluation import ModeScore

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


def print_json(view: BaseModel) -> None:
    """A response model as the API answers it (camelCase, JSON-typed values), indented for reading:
    ``--json``'s one document on stdout."""
    typer.echo(json.dumps(view.model_dump(mode="json", by_alias=True), indent=2))


def print_json_lines(items: Iterable[BaseModel]) -> None:
    """Each model on a line of its own as it comes, as a stream's ``data:`` carries it (``chat --json``:
    the SSE events of ``POST /v1/chat``, :func:`ragline.streaming.sse`)."""
    for item in items:
        typer.echo(item.model_dump_json(by_alias=True))


def print_error(exc: RaglineError) -> None:
    """A failure as the API answers it: its one error body, ``{"error": {"code", "message", "details"}}``."""
    print_json(ErrorBody.model_validate(exc.to_dict()))


class ScoreRow(NamedTuple):
    """One line of ``eval``'s table: the mode as asked (``hybrid:rrf``), its scores, ms per query."""

    mode: str
    score: ModeScore
    ms_per_query: float


def print_scores(title: str, rows: list[ScoreRow], reranker: str | None) -> None:
    """``eval``'s table, one row per mode; ``reranker``: the one ``accurate`` ran with (None: not run)."""
    table = Table(title=title)
    for col in ("mode", "nDCG@10", "Recall@30", "Recall@100", "MRR@10", "ms/query"):
        table.add_column(col)
    for mode, s, per_query in rows:
        table.add_row(
            mode,
            f"{s.ndcg_at_10:.4f}",
            f"{s.recall_at_30:.4f}",
            f"{s.recall_at_100:.4f}",
            f"{s.mrr_at_10:.4f}",
            f"{per_query:.1f}",
        )
    console.print(table)
    if reranker is not None:
        console.print(f"accurate: rerank {reranker}")
