"""Chat against a real model endpoint: tool calls, grounding and citations of a small open model.

When ``OPENAI_BASE_URL`` is set (a local llama.cpp ``llama-server``, see ``bench/llama_server.sh``),
``samples/northwind`` and a SciFact handful (the first ``--scifact`` train claims, their gold abstracts
and four times as many other abstracts, ingested as ``bench/tool_results.py`` does) go into a fresh
embedded home (SQLite store, offline MiniLM embedder), one per ``--layout``; then every question runs
through ``ChatService.answer_chat`` -- what ``ragline chat`` and the API run -- once per layout,
interleaved question by question. Northwind's questions are ``bench/data/multihop.jsonl`` (two gold
documents each); a SciFact question is the claim, asked as "Is this claim true? ...", whose gold is the
claim's qrels abstract(s). Per run, and summed per corpus and layout:

- tool call: the run's first model turn offered tools answered with a structured tool call (the
  endpoint's ``tool_calls``, not a call written as text -- those the tool loop still runs, with a
  ``text_tool_calls`` warning; counted apart), and tool calls per run (``tool_start`` events);
- grounded: the run ended ``answered`` with at least one verified citation and no ``ungrounded_answer``
  warning (the sources event carries only citations checked against what the run retrieved);
- gold cited: the share of the question's gold documents among the cited sources ("verified citation
  rate"); facts: Northwind's ``answer_facts`` found in the answer (as ``bench/agents.py`` scores them);
- exit reasons, model calls ("turns": every round trip to the endpoint, planner calls included),
  prompt/completion tokens (``est.`` when the endpoint reported none), and wall time per run.

The chat model is the container's, wrapped to watch each call (the only change to the service). The
settings come from the environment (``Settings.from_env``), with home, store and embedder pinned and
``tool_results`` set per layout; CPU inference is slow, so cap the output
(``RAGLINE_TURN_OUTPUT_TOKENS``, ``RAGLINE_MAX_OUTPUT_TOKENS``) and consider ``RAGLINE_RERANKER=none``
(``auto`` reranks every accurate search with the same model). See docs/benchmarks.md, "A real small
model", for a run and the commands.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=local \\
        .venv/bin/python bench/real_model.py --layout compact,json --limit 6 --scifact 6
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ragline.agents.events import ChatResponse, RunEvent, ToolFinished, ToolStarted
from ragline.config import Settings
from ragline.domain.api import ChatRequest
from ragline.domain.chat import ChatMessage, ChatOptions, ModelEvent, TokenUsage, ToolCallsReady, ToolSpec
from ragline.domain.citations import CITATION
from ragline.ports import ChatModel
from ragline.services.authentication import Principal
from ragline.wiring import Container

ROOT = Path(__file__).parents[1]
sys.path.insert(0, str(ROOT))
from bench.agents import NAMESPACE, TENANT, fact_found, ingest, load_questions, pct  # noqa: E402
from bench.tool_results import scifact  # noqa: E402

LAYOUTS = ("compact", "json")
CLAIM_PROMPT = "Is this claim true? {claim}"


@dataclass(frozen=True)
class Case:
    id: str
    corpus: str
    namespace: str
    question: str
    gold: tuple[str, ...]
    facts: tuple[str, ...] = ()


# -- watching the model -------------------------------------------------------------------------------


@dataclass
class ModelCall:
    tools: int
    """Tools offered to this call (0: a planner, reranker or tool-less answer turn)."""
    tool_choice: str
    structured_calls: int
    input_tokens: int
    output_tokens: int
    reported: bool
    seconds: float


@dataclass
class Watch:
    calls: list[ModelCall] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class WatchedModel:
    """The container's chat model, unchanged, noting each call (the ``ChatModel`` protocol)."""

    def __init__(self, inner: ChatModel) -> None:
        self._inner = inner
        self.name = inner.name
        self.watch = Watch()

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]:
        started = time.perf_counter()
        call = ModelCall(len(tools), options.tool_choice or "", 0, 0, 0, True, 0.0)
        try:
            for event in self._inner.stream(messages, tools, options):
                if isinstance(event, ToolCallsReady):
                    call.structured_calls = len(event.calls)
                elif isinstance(event, TokenUsage):
                    call.input_tokens, call.output_tokens = event.input_tokens, event.output_tokens
                    call.reported = event.reported
                yield event
        finally:
            call.seconds = time.perf_counter() - started
            with self.watch.lock:
                self.watch.calls.append(call)


def watched(c: Container) -> WatchedModel:
    """Put the wrapper in the container before anything (chat, reranker, planner) takes the model."""
    model = WatchedModel(c.chat_model)
    c.__dict__["chat_model"] = model  # a cached_property: the instance attribute wins from now on
    return model


# -- one run ------------------------------------------------------------------------------------------


@dataclass
class RunResult:
    case: str
    corpus: str
    layout: str
    first_turn_tool_call: bool | None
    """None: no call of the run offered tools (a planned agent's rounds)."""
    tool_calls: int
    text_tool_calls: int
    grounded: bool
    gold_cited: float
    facts: float | None
    exit_reason: str
    error: str
    warnings: list[str]
    tool_errors: list[str]
    """What each failed tool call told the model (e.g. arguments it could not read)."""
    model_calls: int
    tokens_in: int
    tokens_out: int
    estimated: bool
    seconds: float
    model_seconds: float
    cited: list[str]
    answer: str


def until(events: Iterator[RunEvent], deadline: float, late: list[bool]) -> Iterator[RunEvent]:
    """The run's events until the deadline passes (checked between events: a model call in progress
    is bounded by the endpoint's read timeout, ``RAGLINE_LLM_TIMEOUT_S``)."""
    for event in events:
        yield event
        if time.perf_counter() > deadline:
            late.append(True)
            return


def run_case(
    c: Container, model: WatchedModel, case: Case, layout: str, args: argparse.Namespace
) -> RunResult:
    request = ChatRequest.model_validate(
        {"messages": [{"role": "user", "content": case.question}], "namespaces": [case.namespace],
         "mode": args.mode, "agent": args.agent}
    )  # fmt: skip
    model.watch = watch = Watch()
    late: list[bool] = []
    started = time.perf_counter()
    events = c.chat.answer_chat(Principal.operator(TENANT), request)
    resp = ChatResponse.collect(until(iter(events), started + args.timeout, late))
    seconds = time.perf_counter() - started
    calls = list(watch.calls)
    offered = [m for m in calls if m.tools]
    starts = [s for s in resp.steps if isinstance(s, ToolStarted)]
    codes = [w.code for w in resp.warnings]
    cited = list(dict.fromkeys(s.document_id for s in resp.sources))
    answer = CITATION.sub("", resp.answer)
    return RunResult(
        case=case.id,
        corpus=case.corpus,
        layout=layout,
        first_turn_tool_call=(offered[0].structured_calls > 0) if offered else None,
        tool_calls=len(starts),
        text_tool_calls=sum(s.call_id.startswith("text_call_") for s in starts),
        grounded=resp.exit_reason == "answered" and bool(cited) and "ungrounded_answer" not in codes,
        gold_cited=len(set(case.gold) & set(cited)) / len(case.gold),
        facts=sum(fact_found(f, answer) for f in case.facts) / len(case.facts) if case.facts else None,
        exit_reason="bench_timeout" if late else resp.exit_reason or "none",
        error=resp.error.code if resp.error else "",
        warnings=codes,
        tool_errors=[f"{s.label}: {s.error}" for s in resp.steps if isinstance(s, ToolFinished) and s.error],
        model_calls=len(calls),
        tokens_in=resp.usage.llm_input_tokens,
        tokens_out=resp.usage.llm_output_tokens,
        estimated="usage_estimated" in codes or any(not m.reported for m in calls),
        seconds=seconds,
        model_seconds=sum(m.seconds for m in calls),
        cited=cited,
        answer=resp.answer,
    )


# -- the corpora -----------------------------------------------------------------------------------------


def prepare(c: Container, args: argparse.Namespace) -> list[Case]:
    """Ingest both corpora into the container's home; the cases, Northwind first."""
    ingest(c, args.corpus)
    cases = [
        Case(q.id, "northwind", NAMESPACE, q.question, q.gold, q.answer_facts)
        for q in load_questions(args.data)[: args.limit or None]
    ]
    if args.scifact:
        scope, claims = scifact(c, args.beir, args.scifact)
        from ragline.services.evaluation import load_beir

        qrels = load_beir(args.beir, "train").qrels
        for qid, claim in zip(list(qrels)[: args.scifact], claims, strict=True):
            gold = tuple(f"{doc}.txt" for doc in qrels[qid])  # scifact() names each abstract <id>.txt
            question = CLAIM_PROMPT.format(claim=claim)
            cases.append(Case(f"sf-{qid}", "scifact", scope.namespace_id, question, gold))
    return cases


# -- reporting -------------------------------------------------------------------------------------------


def summarise(runs: Sequence[RunResult]) -> dict[str, Any]:
    n = len(runs)
    offered = [r.first_turn_tool_call for r in runs if r.first_turn_tool_call is not None]
    facts = [r.facts for r in runs if r.facts is not None]
    return {
        "runs": n,
        "first_turn_tool_call": sum(offered) / len(offered) if offered else None,
        "tool_calls": sum(r.tool_calls for r in runs) / n,
        "text_tool_calls": sum(r.text_tool_calls for r in runs),
        "grounded": sum(r.grounded for r in runs) / n,
        "gold_cited": sum(r.gold_cited for r in runs) / n,
        "facts": sum(facts) / len(facts) if facts else None,
        "model_calls": sum(r.model_calls for r in runs) / n,
        "tokens_in": sum(r.tokens_in for r in runs) / n,
        "tokens_out": sum(r.tokens_out for r in runs) / n,
        "estimated": any(r.estimated for r in runs),
        "mean_s": statistics.mean(r.seconds for r in runs),
        "max_s": max(r.seconds for r in runs),
        "exit_reasons": dict(Counter(r.exit_reason for r in runs).most_common()),
        "errors": dict(Counter(r.error for r in runs if r.error).most_common()),
        "warnings": dict(Counter(w for r in runs for w in r.warnings).most_common()),
    }


def print_tables(runs: Sequence[RunResult], layouts: Sequence[str]) -> None:
    print(
        "| corpus | layout | runs | 1st-turn tool call | tool calls/run (as text) | grounded | gold cited"
        " | facts | model calls/run | tokens in / out per run | mean / max s | exits | warnings |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for corpus in ("northwind", "scifact", "all"):
        for layout in layouts:
            group = [r for r in runs if r.layout == layout and corpus in (r.corpus, "all")]
            if not group:
                continue
            s = summarise(group)
            est = " (est.)" if s["estimated"] else ""
            exits = ", ".join(f"{k} {v}" for k, v in s["exit_reasons"].items())
            errors = ", ".join(f"{k} {v}" for k, v in s["errors"].items())
            warnings = ", ".join(f"{k} {v}" for k, v in s["warnings"].items()) or "—"
            print(
                f"| {corpus} | {layout} | {s['runs']} | {pct(s['first_turn_tool_call'])}"
                f" | {s['tool_calls']:.1f} ({s['text_tool_calls']}) | {pct(s['grounded'])}"
                f" | {pct(s['gold_cited'])} | {pct(s['facts'])} | {s['model_calls']:.1f}"
                f" | {s['tokens_in']:,.0f} / {s['tokens_out']:,.0f}{est}"
                f" | {s['mean_s']:.0f} / {s['max_s']:.0f} | {exits}{f' ({errors})' if errors else ''}"
                f" | {warnings} |"
            )
    print("\nPer question: tool call in the first turn, tool calls, grounded, gold cited, exit, s\n")
    print("| question | " + " | ".join(layouts) + " |")
    print("|---|" + "---|" * len(layouts))
    for case in dict.fromkeys(r.case for r in runs):
        cells = []
        for layout in layouts:
            (r,) = [r for r in runs if r.case == case and r.layout == layout]
            first = {True: "call", False: "no call", None: "—"}[r.first_turn_tool_call]
            cells.append(
                f"{first}, {r.tool_calls}, {'grounded' if r.grounded else 'ungrounded'},"
                f" {r.gold_cited:.1f}, {r.exit_reason}{f' ({r.error})' if r.error else ''}, {r.seconds:.0f}"
            )
        print(f"| {case} | " + " | ".join(cells) + " |")


def served(base_url: str) -> str:
    """The endpoint's first model id (what ``RAGLINE_CHAT_MODEL`` empty resolves to), or why not."""
    try:
        r = httpx.get(base_url.rstrip("/") + "/models", timeout=10)
        r.raise_for_status()
        return str(r.json()["data"][0]["id"])
    except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
        return f"unreachable ({exc})"


def main() -> int:  # noqa: PLR0915
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agent", choices=("agentic", "deep_search", "chain_of_rag"), default="agentic")
    ap.add_argument("--mode", choices=("accurate", "fast"), default="accurate")
    ap.add_argument("--limit", type=int, default=6, help="first N Northwind questions (0: all 15)")
    ap.add_argument("--scifact", type=int, default=6, help="first N SciFact train claims (0: none)")
    ap.add_argument(
        "--layout", default="compact", help="RAGLINE_TOOL_RESULTS per run: compact, json or compact,json"
    )
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds one run may take")
    ap.add_argument("--data", type=Path, default=ROOT / "bench" / "data" / "multihop.jsonl")
    ap.add_argument("--corpus", type=Path, default=ROOT / "samples" / "northwind")
    ap.add_argument("--beir", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    ap.add_argument("--json", type=Path, help="also write every run here")
    ap.add_argument("--verbose", action="store_true", help="print every run to stderr")
    args = ap.parse_args()
    layouts = [x.strip() for x in args.layout.split(",") if x.strip()]
    if not set(layouts) <= set(LAYOUTS):
        ap.error(f"--layout: {args.layout!r} (choose from {', '.join(LAYOUTS)})")

    base_url = os.environ.get("OPENAI_BASE_URL", "")
    if not base_url:
        print(
            "OPENAI_BASE_URL is not set: nothing to measure. Start a local server (bench/llama_server.sh"
            " install; bench/llama_server.sh model; bench/llama_server.sh start) and run\n"
            "  OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=local .venv/bin/python"
            " bench/real_model.py"
        )
        return 0
    served_model = served(base_url)
    print(f"endpoint {base_url}: {served_model}", file=sys.stderr)

    homes = {x: tempfile.TemporaryDirectory(prefix=f"ragline-bench-real-{x}-") for x in layouts}
    containers: dict[str, Container] = {}
    models: dict[str, WatchedModel] = {}
    runs: list[RunResult] = []
    started = time.perf_counter()
    try:
        cases: list[Case] = []
        for layout in layouts:
            settings = Settings.from_env(
                home=Path(homes[layout].name), backend="embedded", store="sqlite",
                embedding_provider="local", tool_results=layout,
            )  # fmt: skip
            containers[layout] = c = Container(settings)
            models[layout] = watched(c)
            cases = prepare(c, args)
        settings = containers[layouts[0]].settings
        for case in cases:  # interleaved: each layout sees the same moments of machine noise
            for layout in layouts:
                r = run_case(containers[layout], models[layout], case, layout, args)
                runs.append(r)
                if args.verbose:
                    print(
                        f"[{case.id} {layout}] first-turn call {r.first_turn_tool_call} tools {r.tool_calls}"
                        f" grounded {r.grounded} gold {r.gold_cited:.1f} cited {r.cited} exit"
                        f" {r.exit_reason} {r.error} {r.seconds:.0f}s warnings {r.warnings}\n"
                        f"  tool errors: {r.tool_errors}\n"
                        f"  answer: {r.answer[:300]!r}",
                        file=sys.stderr,
                    )
    finally:
        for c in containers.values():
            c.close()
        for home in homes.values():
            home.cleanup()
    took = time.perf_counter() - started

    command = " ".join([".venv/bin/python", "bench/real_model.py", *sys.argv[1:]])
    north = sum(case.corpus == "northwind" for case in cases)
    print(f"\n`{command}`")
    print(
        f"model {served_model} at {base_url}; agent {args.agent}, mode {args.mode}; {north} Northwind"
        f" multi-hop questions, {len(cases) - north} SciFact claims; turn/run output caps"
        f" {settings.turn_output_tokens}/{settings.max_output_tokens} tokens, tool choice"
        f" {settings.tool_choice}, reranker {settings.reranker}, {settings.chunks_per_search} chunks per"
        f" search; {len(runs)} runs in {took / 60:.1f} min (ingest included)\n"
    )
    if runs:
        print_tables(runs, layouts)
    if args.json:
        payload = {"command": command, "model": served_model, "runs": [asdict(r) for r in runs]}
        args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
