"""Offline OCR: character error rate and seconds per page on scans rendered from known text.

The scans are ``tests/fixtures/scans`` (rendered by its ``render.py`` from the texts beside them): the
handbook typeset in Liberation Serif 11 pt and scanned at 150 dpi (JPEG, no text layer; other
``--scan-dpi`` are rendered the same way into a scratch folder), and a dialog box screenshot in DejaVu
Sans. Each is parsed as ingestion parses it (``parse_document`` with the
offline recogniser) at each ``--dpi`` a scanned page is rendered at, ``--rounds`` times (medians; the
first call's model load is excluded). CER: Levenshtein edits over the source's characters, whitespace
runs collapsed to one space (spaces count), and again without any spaces (what the recogniser reads
of the glyphs alone). Two more rows undo one of the recogniser adapter's two measures each, on the
150 dpi scan and the screenshot: the spaces put back from blank columns, the small image enlarged.

    PYTHONPATH=shared:. .venv/bin/python bench/ocr.py --scan-dpi 150,300 --dpi 150,200,300
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from rapidfuzz.distance import Levenshtein
from tests.fixtures.scans import render

from ragline.adapters.local_models import ocr
from ragline.adapters.local_models.ocr import RapidOcrRecognizer
from ragline.documents import images, parse_document

SCANS = Path(__file__).parents[1] / "tests" / "fixtures" / "scans"


def cer(got: str, source: str, *, spaces: bool = True) -> float:
    got, source = " ".join(got.split()), " ".join(source.split())
    if not spaces:
        got, source = got.replace(" ", ""), source.replace(" ", "")
    return Levenshtein.distance(got, source) / len(source)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dpi", default="150,200,300", help="resolutions a scanned PDF page is rendered at")
    ap.add_argument("--scan-dpi", default="150,300", help="resolutions the handbook is scanned at")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp())
    cases = []
    for scan in [int(d) for d in args.scan_dpi.split(",")]:
        path = SCANS / "handbook-150dpi.pdf" if scan == 150 else scratch / f"handbook-{scan}dpi.pdf"
        if scan != 150:
            render.handbook(scan, path)
        cases.append((path, SCANS / "handbook.txt"))
    cases.append((SCANS / "error-dialog.png", SCANS / "error-dialog.txt"))
    engine, default = RapidOcrRecognizer(), images.OCR_DPI
    parse_document("warm.png", (SCANS / "error-dialog.png").read_bytes(), recognizer=engine)  # model load
    print("| file | rendered at | pages | CER | CER without spaces | seconds per page |")
    print("|---|---:|---:|---:|---:|---:|")
    for path, source in cases:
        name, data, text = path.name, path.read_bytes(), source.read_text()
        for dpi in [int(d) for d in args.dpi.split(",")] if name.endswith(".pdf") else [0]:
            images.OCR_DPI = dpi or default
            seconds, rates = [], []
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                parsed = parse_document(name, data, recognizer=engine)
                seconds.append((time.perf_counter() - t0) / parsed.pages)
                got = "\n".join(s.text for s in parsed.sections)
                rates.append((cer(got, text), cer(got, text, spaces=False)))
            shown = f"{dpi} dpi" if dpi else "as is"
            print(f"| `{name}` | {shown} | {parsed.pages} | {rates[-1][0]:.2%} | {rates[-1][1]:.2%} |"
                  f" {statistics.median(seconds):.2f} |")  # fmt: skip
    images.OCR_DPI = default
    for path, source in (cases[0], cases[-1]):
        for label, undo in (("engine's own spaces", "_spaced"), ("not enlarged", "UPSCALE_BELOW")):
            saved = getattr(ocr, undo)
            setattr(ocr, undo, (lambda text, *_: text) if undo == "_spaced" else 0)
            try:
                parsed = parse_document(path.name, path.read_bytes(), recognizer=RapidOcrRecognizer())
            finally:
                setattr(ocr, undo, saved)
            got, text = "\n".join(s.text for s in parsed.sections), source.read_text()
            print(f"| `{path.name}`, {label} | {images.OCR_DPI} dpi | {parsed.pages} | {cer(got, text):.2%} |"
                  f" {cer(got, text, spaces=False):.2%} | |")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
