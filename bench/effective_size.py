"""How large a document one ingestion run can take (issue 37): the upload limit is 50 MiB, but a
document must also be parsed, chunked and embedded within one invocation (the ingestion function's
300 s, less the 10 s reserve), at the rate the worker measures its embedder at (see
``ragline.services.embedding_run``: a document no single run could embed fails as
``embedding_time_exceeded``).

Measured here: prose (SciFact abstracts, repeated to ``--mib``) parsed and chunked with the
deployment's defaults (200-token chunks, 32 overlap) in the offline model's WordPiece tokens — the
texts one MiB of prose makes and the seconds its parse and chunking take. Printed: the largest
document of that prose one run can take at several embedder rates (texts/s).

    .venv/bin/python bench/effective_size.py [--mib 4]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from ragline.config import Settings
from ragline.documents.chunker import chunk_document
from ragline.documents.parsers import parse_document
from ragline.wiring import Container

CORPUS = Path(__file__).parents[2] / "shared" / "data" / "scifact" / "corpus.jsonl"
RUN_SECONDS = 300.0 - 10.0
"""The ingestion function's timeout less the reserve for the last write, the publish and the record."""
UPLOAD_LIMIT_MIB = 50
RATES = (15, 50, 100, 145, 200, 400)


def prose(mib: float) -> bytes:
    paragraphs = [json.loads(line)["text"] for line in CORPUS.read_text().splitlines() if line.strip()]
    out: list[str] = []
    size = 0
    while size < mib * 1024 * 1024:
        for p in paragraphs:
            out.append(p)
            size += len(p.encode()) + 2
            if size >= mib * 1024 * 1024:
                break
    return "\n\n".join(out).encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=float, default=4.0)
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as home:
        settings = Settings(home=Path(home))
        tokenizer = Container(settings).tokenizer
        data = prose(args.mib)
        began = time.perf_counter()
        parsed = parse_document("manual.txt", data, max_bytes=len(data) + 1)
        chunks = chunk_document(
            parsed,
            document_id="manual.txt",
            tokenizer=tokenizer,
            chunk_tokens=settings.chunk_tokens,
            overlap_tokens=settings.chunk_overlap_tokens,
            filename="manual.txt",
            source="manual.txt",
        )
        seconds = time.perf_counter() - began
    mib = len(data) / 1024 / 1024
    texts_per_mib = len(chunks) / mib
    parse_per_mib = seconds / mib
    print(f"prose: {mib:.2f} MiB → {len(chunks):,} chunks ({texts_per_mib:,.0f} texts per MiB), ")
    print(f"parse + chunk {seconds:.1f} s ({parse_per_mib:.2f} s per MiB)\n")
    print("| embedder texts/s | embedding s per MiB | largest prose document per run |")
    print("|---|---|---|")
    for rate in RATES:
        per_mib = parse_per_mib + texts_per_mib / rate
        largest = min(RUN_SECONDS / per_mib, UPLOAD_LIMIT_MIB)
        capped = " (the upload limit)" if largest == UPLOAD_LIMIT_MIB else ""
        print(f"| {rate} | {texts_per_mib / rate:.1f} | {largest:.1f} MiB{capped} |")


if __name__ == "__main__":
    main()
