"""Questions about table cells: how often the chunk at rank 1 holds the cell's row.

``tests/fixtures/tables`` (written by its ``make.py``): a DOCX catalogue with a captioned table of 40
e-bikes × 5 columns, an HTML price list (12 services × 3), a text-layer PDF of 24 spare parts × 4 and
a scanned PDF of 16 accessories × 3 (read by the offline OCR), 74 questions of one cell each. All are
ingested into a fresh embedded home (the offline default: MiniLM, SQLite, chunks of 200 tokens) and
each question searched (k = 10) by mode; a hit counts when its chunk holds ``| <row's first cell> |``.
Today's chunks (every chunk of a table led by its caption and header row, its rows filling an eighth
of the budget: ``chunker.TABLE_ROWS_SHARE``) beside the same with the rows filling the budget, and
with the header kept only once, at the table's start (what a flattened table gives).

    PYTHONPATH=shared:. .venv/bin/python bench/tables.py
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from ragline.cli.ingest import run_ingest
from ragline.config import Settings
from ragline.documents import chunker
from ragline.domain.api import SearchRequest
from ragline.services.authentication import Principal
from ragline.wiring import Container

TABLES = Path(__file__).parents[1] / "tests" / "fixtures" / "tables"


def rates(share: int, header_once: bool) -> dict[str, tuple[float, float]]:
    """mode → (share at rank 1, share within the top 3)."""
    saved = chunker._repeated_headers, chunker.TABLE_ROWS_SHARE
    chunker.TABLE_ROWS_SHARE = share
    if header_once:
        chunker._repeated_headers = lambda *_: {}  # type: ignore[assignment]
    try:
        folder, home = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
        for name in ("bikes.docx", "service-prices.html", "spare-parts.pdf", "accessories-scan.pdf"):
            shutil.copy(TABLES / name, folder / name)
        c = Container(Settings(home=home))
        run_ingest(c, "local", "tables", [folder], create=True)
    finally:
        chunker._repeated_headers, chunker.TABLE_ROWS_SHARE = saved
    questions = [json.loads(line) for line in (TABLES / "questions.jsonl").read_text().splitlines()]
    out = {}
    for mode in ("keyword", "semantic", "hybrid"):
        first = top3 = 0
        for q in questions:
            request = SearchRequest.model_validate({"query": q["question"], "mode": mode, "k": 10})
            hits = c.search.search(Principal.operator("local"), "tables", request).hits
            found = [h.document_id == q["document"] and f"| {q['row']} |" in h.text for h in hits]
            first += found[:1] == [True]
            top3 += any(found[:3])
        out[mode] = (first / len(questions), top3 / len(questions))
    return out


def main() -> int:
    print("| chunks of a table | mode | row at rank 1 | row in the top 3 |")
    print("|---|---|---:|---:|")
    variants = [
        ("caption + header in every chunk, rows an eighth of the budget", chunker.TABLE_ROWS_SHARE, False),
        ("caption + header in every chunk, rows fill the budget", 1, False),
        ("header once, at the table's start", 1, True),
    ]
    for label, share, header_once in variants:
        for mode, (first, top3) in rates(share, header_once).items():
            print(f"| {label} | {mode} | {first:.1%} | {top3:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
