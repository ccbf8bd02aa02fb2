"""Chat agents on a multi-hop set: what each agent retrieves, cites and answers over the Northwind sample.

``samples/northwind`` is ingested into a fresh home under /tmp (the default Container: embedded SQLite
store, offline MiniLM embedder), then every question of ``bench/data/multihop.jsonl`` (each needs two
documents: a bridge from one to the other, or a comparison across them) runs through
``ChatService.answer_chat`` once per agent — ``agentic``, ``deep_search``, ``chain_of_rag``, ``auto`` —
interleaved question by question, the events gathered with ``ChatResponse.collect``. Per agent:

- gold retrieved: the share of a question's gold documents among the documents of every chunk the run
  retrieved (each ``search`` and ``expand`` of the run, seen by wrapping the run's retriever), and the
  share of questions with both gold documents retrieved;
- gold in top-N: the same over the first ``--top`` hits of each search only (default 1: the documents
  some search of the run ranked first). The corpus is 13 chunks and a search keeps 10, so "retrieved at
  all" is nearly always true; what each query puts first is what tells the agents' queries apart;
- gold cited: the share of gold documents among the cited sources, and questions with both cited;
- supported: of the answer's sentences carrying ``<citation ids>``, the share whose claim is lexically
  supported by a chunk it cites — at least half of the sentence's distinct content stems
  (:func:`ragline.domain.terms.stems`: stop words out, words cut to six letters) occur in that chunk's
  text or sentence window. A claim is the last sentence of the text before its marker;
- facts: the share of a question's ``answer_facts`` found in the answer (citations removed): the fact as
  a case-insensitive substring, or, for a fact with letters in it, all its content stems present;
- steps (``tool_start`` events), searches (``tool_start`` of ``search``), LLM tokens in/out (offline
  the extractive model's own estimate: characters/4 in, words out), latency of the whole run (mean and
  p95, nearest rank), exit reasons, warnings (codes in ``--json``), and for ``auto`` the agent the router
  chose. A second table splits the recall columns and facts by kind of question.

Settings come from the environment (``Settings.from_env``) with the home, store and embedder pinned, so
with ``OPENAI_BASE_URL`` (or ``OPENAI_API_KEY``) set the endpoint's model writes, plans and routes —
and, as in any deployment with an endpoint, reranks (``reranker: auto``); the header says which model
ran. Without it the extractive model answers and the agents plan with their offline heuristics.

    .venv/bin/python bench/agents.py
    .venv/bin/python bench/agents.py --json /tmp/agents.json --verbose
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ragline.agents.events import ChatResponse, ToolStarted
from ragline.agents.tools import Retriever
from ragline.config import Settings
from ragline.documents.sentences import split_sentences
from ragline.domain.api import ChatRequest, ChunkView
from ragline.domain.citations import CITATION
from ragline.domain.models import Chunk, RunUsage, SearchMode, TenantScope
from ragline.domain.retrieval import RetrievalResult
from ragline.domain.terms import stems
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container

ROOT = Path(__file__).parents[1]
TENANT = "local"
NAMESPACE = "northwind"
AGENTS = ("agentic", "deep_search", "chain_of_rag", "auto")
SUPPORT_SHARE = 0.5
"""A cited sentence is supported when this share of its distinct content stems is in a cited chunk."""


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    gold: tuple[str, ...]
    answer_facts: tuple[str, ...]
    kind: str


def load_questions(path: Path) -> list[Question]:
    out: list[Question] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            d = json.loads(line)
            gold, facts = tuple(d["gold"]), tuple(d["answer_facts"])
            out.append(Question(d["id"], d["question"], gold, facts, d["kind"]))
    return out


# -- what a run retrieved ---------------------------------------------------------------------------


@dataclass
class RunLog:
    """Every search of one run (its query and the document of each hit, in rank order) and every
    chunk an ``expand`` read."""

    searches: list[tuple[str, list[str]]] = field(default_factory=list)
    expanded: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    """The planned agents search concurrently."""


class RecordingRetriever:
    """The run's retriever, unchanged, noting the documents it returns (the ``Retriever`` protocol the
    agents' tools use)."""

    def __init__(self, inner: Retriever, log: RunLog) -> None:
        self._inner = inner
        self._log = log
        self.usage: RunUsage = inner.usage  # the same object: the run's usage

    @property
    def can_expand(self) -> bool:
        return self._inner.can_expand

    def search(
        self,
        text: str,
        *,
        mode: SearchMode = "hybrid",
        candidates: int = 10,
        keep: int = 10,
        rerank: bool = False,
    ) -> RetrievalResult:
        result = self._inner.search(text, mode=mode, candidates=candidates, keep=keep, rerank=rerank)
        with self._log.lock:
            self._log.searches.append((text, [h.hit.chunk.document_id for h in result.hits]))
        return result

    def neighbors(
        self, scope: TenantScope, document_id: str, sequence_number: int, *, before: int = 5, after: int = 5
    ) -> list[Chunk]:
        chunks = self._inner.neighbors(scope, document_id, sequence_number, before=before, after=after)
        with self._log.lock:
            self._log.expanded += [c.document_id for c in chunks]
        return chunks


class Recorder:
    """Wraps ``RetrievalService.bind`` of one container (the bench's only change to it): each run's
    retriever records into the :class:`RunLog` that is current when the run binds it."""

    def __init__(self, c: Container) -> None:
        self.current = RunLog()
        original: Callable[..., Retriever] = c.retrieval.bind

        def bind(scopes: Sequence[TenantScope], usage: RunUsage | None = None) -> Retriever:
            return RecordingRetriever(original(scopes, usage), self.current)

        c.retrieval.bind = bind  # type: ignore[assignment,method-assign]


# -- scoring ------------------------------------------------------------------------------------------


def cited_claims(answer: str) -> list[tuple[str, list[str]]]:
    """(claim, cited ids) per citation marker: the claim is the last sentence of the text since the
    previous marker; a marker right after another one cites the same claim."""
    claims: list[tuple[str, list[str]]] = []
    start = 0
    for m in CITATION.finditer(answer):
        ids = [i.strip() for i in m.group(1).split(",") if i.strip()]
        segment = answer[start : m.start()].strip()
        start = m.end()
        sentences = split_sentences(segment) if segment else []
        if sentences:
            claims.append((sentences[-1], ids))
        elif claims:
            claims[-1] = (claims[-1][0], claims[-1][1] + ids)
    return claims


def supported(claim: str, chunks: Sequence[ChunkView]) -> bool | None:
    """Whether one cited chunk holds at least :data:`SUPPORT_SHARE` of the claim's content stems; None
    for a claim without content words (not counted)."""
    wanted = set(stems(claim))
    if not wanted:
        return None
    shares = [len(wanted & set(stems(f"{c.text}\n{c.wider_text}"))) / len(wanted) for c in chunks]
    return max(shares, default=0.0) >= SUPPORT_SHARE


def fact_found(fact: str, answer: str) -> bool:
    if fact.lower() in answer.lower():
        return True
    fact_stems = set(stems(fact))
    return any(ch.isalpha() for ch in fact) and bool(fact_stems) and fact_stems <= set(stems(answer))


@dataclass
class RunResult:
    question: str
    agent: str
    kind: str
    routed: str
    retrieved: list[str]
    top: list[str]
    cited: list[str]
    gold_retrieved: float
    gold_top: float
    gold_cited: float
    claims: int
    supported_claims: int
    facts: float
    steps: int
    searches: int
    tokens_in: int
    tokens_out: int
    ms: float
    exit_reason: str
    warnings: list[str]
    error: str
    answer: str


def score(q: Question, agent: str, resp: ChatResponse, log: RunLog, ms: float, top_n: int) -> RunResult:
    retrieved = {d for _, docs in log.searches for d in docs} | set(log.expanded)
    top = {d for _, docs in log.searches for d in docs[:top_n]}
    cited = list(dict.fromkeys(s.document_id for s in resp.sources))
    gold = set(q.gold)
    by_id = {s.id: s for s in resp.sources}
    verdicts = [
        supported(claim, [by_id[i] for i in ids if i in by_id]) for claim, ids in cited_claims(resp.answer)
    ]
    counted = [v for v in verdicts if v is not None]
    plain = CITATION.sub("", resp.answer)
    starts = [s for s in resp.steps if isinstance(s, ToolStarted)]
    return RunResult(
        question=q.id,
        agent=agent,
        kind=q.kind,
        routed=resp.route.agent if resp.route else "",
        retrieved=sorted(retrieved),
        top=sorted(top),
        cited=cited,
        gold_retrieved=len(gold & retrieved) / len(gold),
        gold_top=len(gold & top) / len(gold),
        gold_cited=len(gold & set(cited)) / len(gold),
        claims=len(counted),
        supported_claims=sum(counted),
        facts=sum(fact_found(f, plain) for f in q.answer_facts) / len(q.answer_facts),
        steps=len(starts),
        searches=sum(s.tool == "search" for s in starts),
        tokens_in=resp.usage.llm_input_tokens,
        tokens_out=resp.usage.llm_output_tokens,
        ms=ms,
        exit_reason=resp.exit_reason,
        warnings=[w.code for w in resp.warnings],
        error=resp.error.code if resp.error else "",
        answer=resp.answer,
    )


def summarise(runs: Sequence[RunResult]) -> dict[str, Any]:
    n = len(runs)
    lat = sorted(r.ms for r in runs)
    claims = sum(r.claims for r in runs)
    return {
        "runs": n,
        "gold_retrieved": sum(r.gold_retrieved for r in runs) / n,
        "both_retrieved": sum(r.gold_retrieved == 1 for r in runs) / n,
        "gold_top": sum(r.gold_top for r in runs) / n,
        "gold_cited": sum(r.gold_cited for r in runs) / n,
        "both_cited": sum(r.gold_cited == 1 for r in runs) / n,
        "cited_sentences": claims,
        "supported": sum(r.supported_claims for r in runs) / claims if claims else None,
        "facts": sum(r.facts for r in runs) / n,
        "steps": sum(r.steps for r in runs) / n,
        "searches": sum(r.searches for r in runs) / n,
        "tokens_in": sum(r.tokens_in for r in runs) / n,
        "tokens_out": sum(r.tokens_out for r in runs) / n,
        "mean_ms": statistics.mean(lat),
        "p95_ms": lat[math.ceil(0.95 * n) - 1],  # nearest rank
        "exit_reasons": dict(Counter(r.exit_reason for r in runs).most_common()),
        "warnings": sum(len(r.warnings) for r in runs),
        "warning_codes": dict(Counter(c for r in runs for c in r.warnings).most_common()),
        "errors": sum(bool(r.error) for r in runs),
        "error_codes": dict(Counter(r.error for r in runs if r.error).most_common()),
        "routed": dict(Counter(r.routed for r in runs if r.routed).most_common()),
    }


# -- the run ------------------------------------------------------------------------------------------


def ingest(c: Container, folder: Path) -> list[str]:
    """Every file of ``folder`` as ``ragline ingest <folder> -n northwind --create`` names it."""
    c.registry.create_namespace(new_namespace(TENANT, NAMESPACE))
    scope = TenantScope(tenant_id=TENANT, namespace_id=NAMESPACE)
    ids = []
    for path in sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")):
        r = c.ingest.ingest(scope, filename=path.name, data=path.read_bytes(), source=str(path))
        ids.append(r.document_id)
    return ids


def model_line(c: Container) -> str:
    s = c.settings
    if not s.llm_configured:
        return f"model: {c.chat_model.name}; planning and routing: offline heuristics; reranker: none"
    where = s.openai_base_url or "the OpenAI API"
    return (
        f"model: {c.chat_model.name} at {where} (writes, plans and routes);"
        f" reranker: {c.retrieval.reranker_name or 'none'}"
    )


def pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def run_all(
    c: Container, questions: Sequence[Question], agents: Sequence[str], args: argparse.Namespace
) -> dict[str, list[RunResult]]:
    """Every question through every agent, interleaved (each agent sees the same moments of machine
    noise)."""
    recorder = Recorder(c)
    principal = Principal.operator(TENANT)
    # warm-up (unscored): the embedder's first query loads the model
    c.retrieval.bind([TenantScope(tenant_id=TENANT, namespace_id=NAMESPACE)]).search("warm up")
    results: dict[str, list[RunResult]] = {a: [] for a in agents}
    for q in questions:
        for agent in agents:
            request = ChatRequest.model_validate(
                {"messages": [{"role": "user", "content": q.question}], "namespaces": [NAMESPACE],
                 "mode": args.mode, "agent": agent}
            )  # fmt: skip
            recorder.current = log = RunLog()
            started = time.perf_counter()
            resp = ChatResponse.collect(c.chat.answer_chat(principal, request))
            ms = (time.perf_counter() - started) * 1000
            r = score(q, agent, resp, log, ms, args.top)
            results[agent].append(r)
            if args.verbose:
                routed = f" → {r.routed}" if r.routed else ""
                queries = " | ".join(text[:60] for text, _ in log.searches)
                print(
                    f"[{q.id} {agent}{routed}] retrieved {r.gold_retrieved:.1f} top {r.gold_top:.1f}"
                    f" cited {r.cited} facts {r.facts:.2f} exit {r.exit_reason} {r.error}"
                    f" warnings {r.warnings}\n  searches: {queries}\n  answer: {r.answer[:300]}",
                    file=sys.stderr,
                )
    return results


def print_tables(summaries: dict[str, dict[str, Any]], by_kind: dict[str, dict[str, Any]], top: int) -> None:
    columns = [
        "agent",
        "gold retrieved",
        "both retrieved",
        f"gold in top-{top}",
        "gold cited",
        "both cited",
        "cited sentences supported",
        "facts",
        "steps",
        "searches",
        "tokens in/out",
        "mean ms",
        "p95 ms",
        "exit reasons",
        "warnings",
    ]
    print("| " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * (len(columns) - 3) + "---|---:|")
    for agent, s in summaries.items():
        exits = ", ".join(f"{r} {k}" for r, k in s["exit_reasons"].items())
        errors = ", ".join(f"{code} {k}" for code, k in s["error_codes"].items())
        routed = ", ".join(f"{a} {k}" for a, k in s["routed"].items())
        cells = [
            agent + (f" (→ {routed})" if routed else ""),
            pct(s["gold_retrieved"]),
            pct(s["both_retrieved"]),
            pct(s["gold_top"]),
            pct(s["gold_cited"]),
            pct(s["both_cited"]),
            f"{pct(s['supported'])} of {s['cited_sentences']}",
            pct(s["facts"]),
            f"{s['steps']:.2f}",
            f"{s['searches']:.2f}",
            f"{s['tokens_in']:.0f} / {s['tokens_out']:.0f}",
            f"{s['mean_ms']:.0f}",
            f"{s['p95_ms']:.0f}",
            exits + (f" ({errors})" if errors else ""),
            str(s["warnings"]),
        ]
        print("| " + " | ".join(cells) + " |")
    print(f"\nBy kind of question: both gold retrieved / gold in top-{top} / gold cited / facts\n")
    kinds = sorted({k for per_kind in by_kind.values() for k in per_kind})
    print("| agent | " + " | ".join(kinds) + " |")
    print("|---|" + "---|" * len(kinds))
    for agent, per_kind in by_kind.items():
        cells = [
            " / ".join(pct(per_kind[k][m]) for m in ("both_retrieved", "gold_top", "gold_cited", "facts"))
            for k in kinds
        ]
        print(f"| {agent} | " + " | ".join(cells) + " |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT / "bench" / "data" / "multihop.jsonl")
    ap.add_argument("--corpus", type=Path, default=ROOT / "samples" / "northwind")
    ap.add_argument("--agents", default=",".join(AGENTS), help="comma-separated, in table order")
    ap.add_argument("--mode", choices=("accurate", "fast"), default="accurate", help="the chat mode")
    ap.add_argument("--top", type=int, default=1, help="hits of each search for 'gold in top-N'")
    ap.add_argument("--questions", type=int, default=0, help="first N questions (0: all)")
    ap.add_argument("--json", type=Path, help="also write the summary and every run here")
    ap.add_argument("--verbose", action="store_true", help="print every run to stderr")
    args = ap.parse_args()

    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    questions = load_questions(args.data)[: args.questions or None]
    tmp = tempfile.TemporaryDirectory(prefix="ragline-bench-agents-")
    settings = Settings.from_env(
        home=Path(tmp.name), backend="embedded", store="sqlite", embedding_provider="local"
    )
    c = Container(settings)
    try:
        t0 = time.perf_counter()
        doc_ids = ingest(c, args.corpus)
        print(f"ingested {len(doc_ids)} documents in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        missing = {g for q in questions for g in q.gold} - set(doc_ids)
        if missing:
            print(f"gold documents not in the corpus: {sorted(missing)}", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        results = run_all(c, questions, agents, args)
        took = time.perf_counter() - t0
        model = model_line(c)
    finally:
        c.close()
        tmp.cleanup()

    kinds = sorted({q.kind for q in questions})
    summaries = {a: summarise(rs) for a, rs in results.items()}
    by_kind = {a: {k: summarise([r for r in rs if r.kind == k]) for k in kinds} for a, rs in results.items()}
    command = " ".join([".venv/bin/python", "bench/agents.py", *sys.argv[1:]])
    counts = Counter(q.kind for q in questions)
    print(f"\n`{command}`")
    print(
        f"{len(questions)} questions ({', '.join(f'{counts[k]} {k}' for k in kinds)}), two gold documents"
        f" each, over samples/northwind ({len(doc_ids)} documents); mode {args.mode}; embedded SQLite"
        f" store, offline MiniLM embedder; {model}\n"
    )
    print_tables(summaries, by_kind, args.top)
    print(
        f"\nRates are means over questions; {len(agents) * len(questions)} runs in {took:.1f} s"
        " (ingest not included)."
    )
    if args.json:
        payload = {
            "command": command,
            "model": model,
            "mode": args.mode,
            "top": args.top,
            "support_share": SUPPORT_SHARE,
            "agents": summaries,
            "by_kind": by_kind,
            "runs": [asdict(r) for rs in results.values() for r in rs],
        }
        args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
