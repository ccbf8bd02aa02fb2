"""Documents as companies have them, per parser path: the same handbook as text, scanned and read by the
offline OCR, and scanned and read by Amazon Textract (its local wire stand-in), then 27 questions
about it; beside them the table set (52 cell questions).

``tests/fixtures/scans``: ``handbook.txt`` (12 sections written for this), its scan at 150 dpi
(``handbook-150dpi.pdf``, no text layer) and ``questions.jsonl`` (a question and the passage that
answers it). ``tests/fixtures/tables``: a DOCX and an HTML page with tables and ``questions.jsonl``
(bench/tables.py has their per-mode table). Each path is ingested into a fresh embedded home (offline
MiniLM, SQLite, 200-token chunks, the ``fixed`` chunker) and each question searched (hybrid, k = 10).
A question is answered at rank r when the r-th chunk holds its passage (whitespace and case ignored,
up to a character error in 10 for OCR: rapidfuzz's partial ratio ≥ 90). Columns: recall@1 and @10, MRR,
the path's character error rate against the source text, and ingest seconds per page (parse, chunk,
embed, write).

    PYTHONPATH=shared:. .venv/bin/python bench/documents.py
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from ragline.cli.ingest import run_ingest
from ragline.config import Settings
from ragline.documents import parse_document
from ragline.domain.api import SearchRequest
from ragline.services.authentication import Principal
from ragline.wiring import Container

ROOT = Path(__file__).parents[1]
SCANS, TABLES = ROOT / "tests" / "fixtures" / "scans", ROOT / "tests" / "fixtures" / "tables"


def norm(text: str) -> str:
    return " ".join(text.lower().split())


def holds(chunk: str, passage: str) -> bool:
    return fuzz.partial_ratio(norm(passage), norm(chunk)) >= 90


def run(files: list[Path], ocr: str, questions: list[dict[str, str]], key: str) -> dict[str, float | str]:
    folder, home = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    for f in files:
        shutil.copy(f, folder / f.name)
    c = Container(Settings.from_env({"RAGLINE_OCR": ocr, "RAGLINE_HOME": str(home)}))
    t0 = time.perf_counter()
    run_ingest(c, "local", "bench", [folder], create=True)
    seconds = time.perf_counter() - t0
    pages, texts = 0, []
    for f in files:
        parsed = parse_document(f.name, f.read_bytes(), recognizer=c.text_recognizer)
        pages += parsed.pages
        texts += [s.text for s in parsed.sections]
    ranks = []
    for q in questions:
        request = SearchRequest.model_validate({"query": q["question"], "k": 10})
        hits = c.search.search(Principal.operator("local"), "bench", request).hits
        found = [i for i, h in enumerate(hits, 1) if holds(h.text, q[key])]
        ranks.append(found[0] if found else 0)
    n = len(questions)
    return {
        "r1": sum(r == 1 for r in ranks) / n,
        "r10": sum(r > 0 for r in ranks) / n,
        "mrr": sum(1 / r for r in ranks if r) / n,
        "per_page": seconds / max(1, pages),
        "text": " ".join(texts),
    }


def main() -> int:
    from tests.support.textract_server import TextractServer

    handbook = [json.loads(line) for line in (SCANS / "questions.jsonl").read_text().splitlines()]
    cells = [json.loads(line) for line in (TABLES / "questions.jsonl").read_text().splitlines()]
    for q in cells:
        q["passage"] = f"| {q['row']} |"
    source = (SCANS / "handbook.txt").read_text()
    server = TextractServer()
    os.environ |= {"AWS_ENDPOINT_URL_TEXTRACT": server.url, "AWS_ACCESS_KEY_ID": "bench",
                   "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip
    rows = [
        ("handbook: text (.txt)", [SCANS / "handbook.txt"], "off", handbook),
        ("handbook: scan at 150 dpi, offline OCR", [SCANS / "handbook-150dpi.pdf"], "offline", handbook),
        (
            "handbook: scan at 150 dpi, Textract (stand-in)",
            [SCANS / "handbook-150dpi.pdf"],
            "textract",
            handbook,
        ),
        ("tables: DOCX + HTML", [TABLES / "bikes.docx", TABLES / "service-prices.html"], "off", cells),
    ]
    print("| documents, parser path | questions | recall@1 | recall@10 | MRR | CER | ingest s/page |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    try:
        for label, files, ocr, questions in rows:
            out = run(files, ocr, questions, "passage")
            text = str(out["text"])
            cer = (
                f"{Levenshtein.distance(norm(text), norm(source)) / len(norm(source)):.2%}"
                if files[0].parent == SCANS
                else "—"
            )
            scores = f"{out['r1']:.1%} | {out['r10']:.1%} | {out['mrr']:.3f}"
            print(f"| {label} | {len(questions)} | {scores} | {cer} | {out['per_page']:.2f} |")
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
