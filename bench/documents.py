"""Documents as companies have them, per chunking strategy and per parser path.

The sets (``tests/fixtures``):

- ``long/``: an operations manual (Markdown, 5,300 words, three heading levels), a travel and expense
  policy (HTML, 4,300 words) and an information-security standard (plain text, 3,000 words, no
  headings at all: only the meaning says where a topic ends), with 113 questions, each with the
  passage that answers it;
- ``scans/``: a handbook as text, and its scan at 150 dpi read by the offline OCR and by Amazon
  Textract (its local wire stand-in), 27 questions;
- ``tables/``: a DOCX, an HTML page, a text-layer PDF and a scanned PDF with tables (the scan read by
  the offline OCR), 74 questions about cells (the row is the passage).

Each set is ingested into one namespace of a fresh embedded home (the three long documents together,
so each question is searched among all their chunks; a row per document follows the set's row) with
the offline MiniLM, SQLite and 200-token chunks, once per strategy (``RAGLINE_CHUNKING``: ``fixed``;
``hierarchical`` with 800-token parents; ``semantic``), and each question is asked twice: searched
(hybrid, k = 10), and answered by the offline extractive chat (one search, sentences quoted from the
chunks it found, each cited; graded by the deployment's grounding verifier). A chunk *holds* a
passage when the passage is in it (whitespace and case ignored, up to a character error in 10 for
OCR: rapidfuzz's partial ratio >= 90).

Columns: recall@1, @3 and @10 (a chunk among the first 1, 3, 10 holds the passage), *read@k* (the
passage is in what an agent is shown of one of the first k hits: the chunk and its context, as
``ragline.agents.tools`` shows them — a ``fixed`` chunk's sentence window, a ``hierarchical`` chunk's
parent), the characters shown per hit, MRR, answer grounding (the verifier's mean score), *answered*
(the answer holds the passage), the chunks the namespace holds, the parser path's character error
rate against the source text, and ingest seconds per page (a PDF page; for formats without pages,
3,000 characters of text).

    PYTHONPATH=shared:. .venv/bin/python bench/documents.py [--questions N] [--strategies a,b] [--sets p,q]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from ragline.agents.events import ChatResponse
from ragline.agents.tools import CONTEXT_CHARS, _around
from ragline.cli.ingest import run_ingest
from ragline.config import Settings
from ragline.documents import parse_document
from ragline.domain.api import ChatRequest, SearchRequest
from ragline.services.authentication import Principal
from ragline.wiring import Container

ROOT = Path(__file__).parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SCANS, TABLES, LONG = FIXTURES / "scans", FIXTURES / "tables", FIXTURES / "long"
STRATEGIES = ("fixed", "hierarchical", "semantic")
TABLE_FILES = ("bikes.docx", "service-prices.html", "spare-parts.pdf", "accessories-scan.pdf")
PAGE_CHARS = 3000


def norm(text: str) -> str:
    return " ".join(text.lower().split())


def holds(text: str, passage: str) -> bool:
    return fuzz.partial_ratio(norm(passage), norm(text)) >= 90


@dataclass
class Outcome:
    """Per question, in the order asked (``documents`` names each one's document)."""

    ranks: list[int]
    read: list[int]
    """The first hit whose chunk or shown context holds the passage (0: none of the 10)."""
    shown_chars: list[int]
    grounding: list[float]
    answered: list[bool]
    chunks: int
    per_page: float
    text: str
    documents: list[str] = field(default_factory=list)

    def only(self, document: str) -> Outcome:
        keep = [i for i, d in enumerate(self.documents) if d == document]
        pick = lambda xs: [xs[i] for i in keep]  # noqa: E731
        return Outcome(
            pick(self.ranks), pick(self.read), pick(self.shown_chars), pick(self.grounding),
            pick(self.answered), self.chunks, self.per_page, self.text, pick(self.documents),
        )  # fmt: skip


def run(files: list[Path], ocr: str, strategy: str, questions: list[dict[str, str]]) -> Outcome:
    folder, home = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    for f in files:
        shutil.copy(f, folder / f.name)
    env = {"RAGLINE_OCR": ocr, "RAGLINE_HOME": str(home), "RAGLINE_CHUNKING": strategy}
    c = Container(Settings.from_env(env))
    try:
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):  # its progress table
            run_ingest(c, "local", "bench", [folder], create=True)
        seconds = time.perf_counter() - t0
        pages, texts = 0, []
        for f in files:
            parsed = parse_document(f.name, f.read_bytes(), recognizer=c.text_recognizer)
            text = " ".join(s.text for s in parsed.sections)
            pages += parsed.pages if f.suffix == ".pdf" else max(1, round(len(text) / PAGE_CHARS))
            texts.append(text)
        operator = Principal.operator("local")
        out = Outcome([], [], [], [], [], 0, seconds / max(1, pages), " ".join(texts))
        out.chunks = sum(d.chunk_count for d in c.documents.list("local", "bench"))
        for q in questions:
            request = SearchRequest.model_validate({"query": q["question"], "k": 10})
            hits = c.search.search(operator, "bench", request).hits
            found = [i for i, h in enumerate(hits, 1) if holds(h.text, q["passage"])]
            out.ranks.append(found[0] if found else 0)
            out.documents.append(q.get("document", ""))
            shown = [h.text + "\n" + _shown_context(h.text, h.wider_text) for h in hits]
            read = [i for i, text in enumerate(shown, 1) if holds(text, q["passage"])]
            out.read.append(read[0] if read else 0)
            out.shown_chars.append(round(statistics.fmean(map(len, shown))) if shown else 0)
            chat = ChatRequest.model_validate(
                {"messages": [{"role": "user", "content": q["question"]}], "namespaces": ["bench"]}
            )
            answer = ChatResponse.collect(c.chat.answer_chat(operator, chat))
            score = answer.grounding.score if answer.grounding else None
            out.grounding.append(score or 0.0)
            out.answered.append(holds(answer.answer, q["passage"]))
        return out
    finally:
        c.close()
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


def _shown_context(text: str, wider: str) -> str:
    wider = wider.strip()
    return _around(wider, text.strip(), CONTEXT_CHARS) if wider and wider != text.strip() else ""


def questions_of(path: Path, document: str | None = None) -> list[dict[str, str]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [q for q in rows if document is None or q.get("document") == document]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=0, help="at most this many per set (0: all)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--sets", default="", help="comma-separated set labels' prefixes (default: all)")
    args = parser.parse_args()
    from tests.support.textract_server import TextractServer

    handbook = questions_of(SCANS / "questions.jsonl")
    cells = questions_of(TABLES / "questions.jsonl")
    for q in cells:
        q["passage"] = f"| {q['row']} |"
    source = (SCANS / "handbook.txt").read_text()
    server = TextractServer()
    os.environ |= {"AWS_ENDPOINT_URL_TEXTRACT": server.url, "AWS_ACCESS_KEY_ID": "bench",
                   "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip
    pdf = SCANS / "handbook-150dpi.pdf"
    long_q = questions_of(LONG / "questions.jsonl")
    sets = [
        ("long set", [LONG / "manual.md", LONG / "policy.html", LONG / "security.txt"], "off", long_q),
        ("handbook: text", [SCANS / "handbook.txt"], "off", handbook),
        ("handbook: 150 dpi scan, offline OCR", [pdf], "offline", handbook),
        ("handbook: 150 dpi scan, Textract", [pdf], "textract", handbook),
        ("tables: DOCX, HTML, PDF, scanned PDF", [TABLES / n for n in TABLE_FILES], "offline", cells),
    ]  # fmt: skip
    chosen = [s for s in sets if not args.sets or any(s[0].startswith(p) for p in args.sets.split(","))]
    strategies = args.strategies.split(",")
    print(
        "| documents, parser path | strategy | questions | recall@1 | recall@3 | recall@10 | read@1 | read@3"
        " | read@10 | chars shown/hit | MRR | grounding | answered | chunks | CER | ingest s/page |"
    )
    print("|---|---|" + "---:|" * 14)
    pooled: dict[str, list[Outcome]] = {s: [] for s in strategies}
    try:
        for label, files, ocr, every in chosen:
            questions = every[: args.questions] if args.questions else every
            for strategy in strategies:
                out = run(files, ocr, strategy, questions)
                pooled[strategy].append(out)
                cer = (
                    f"{Levenshtein.distance(norm(out.text), norm(source)) / len(norm(source)):.2%}"
                    if files[0].parent == SCANS
                    else "—"
                )
                parts = [(label, out)]
                if label == "long set":  # one namespace of several documents: a row per document too
                    parts += [(f"{label}: {f.name}", out.only(f.name)) for f in files]
                for name, part in parts:
                    row = f"| {name} | {strategy} | {len(part.ranks)} | {_scores(part)} | {out.chunks}"
                    print(f"{row} | {cer} | {out.per_page:.2f} |", flush=True)
        for strategy, outs in pooled.items():
            whole = Outcome(
                [r for o in outs for r in o.ranks], [r for o in outs for r in o.read],
                [n for o in outs for n in o.shown_chars], [g for o in outs for g in o.grounding],
                [a for o in outs for a in o.answered], sum(o.chunks for o in outs),
                statistics.fmean(o.per_page for o in outs), "",
            )  # fmt: skip
            n = len(whole.ranks)
            print(f"| **all sets** | **{strategy}** | {n} | {_scores(whole)} | {whole.chunks} | — | — |")
    finally:
        server.close()
    return 0


def _scores(o: Outcome) -> str:
    n = len(o.ranks)
    r1 = sum(r == 1 for r in o.ranks) / n
    r3 = sum(0 < r <= 3 for r in o.ranks) / n
    r10 = sum(r > 0 for r in o.ranks) / n
    mrr = sum(1 / r for r in o.ranks if r) / n
    read = [sum(0 < r <= k for r in o.read) / n for k in (1, 3, 10)]
    return (
        f"{r1:.1%} | {r3:.1%} | {r10:.1%} | {read[0]:.1%} | {read[1]:.1%} | {read[2]:.1%}"
        f" | {statistics.fmean(o.shown_chars):,.0f} | {mrr:.3f}"
        f" | {statistics.fmean(o.grounding):.2f} | {sum(o.answered) / n:.1%}"
    )


if __name__ == "__main__":
    sys.exit(main())
