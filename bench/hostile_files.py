"""Hostile files at full size: each ingested in its own process under the ingestion function's limits.

Run: ``.venv/bin/python bench/hostile_files.py [--scale 1] [--workers 1] [--only NAME ...] [--write]``

The corpus and the runner are ``tests/support/hostile_files.py`` (the integration test runs the same
cases scaled down). Prints a Markdown table (case, size, outcome, reason, seconds, peak RSS); with
``--write`` it replaces the "Hostile files" section of ``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "shared")]

from tests.support.hostile_files import CASES, FunctionLimits, ingestion_limits, markdown_table, run_corpus  # noqa: E402

BENCHMARKS = REPO / "docs" / "benchmarks.md"
TITLE = "## Hostile files"


def section(table: str, limits: FunctionLimits, command: str) -> str:
    return f"""{TITLE}

```
{command}
```

Generated files (nothing large is committed: the cases are in `tests/support/hostile_files.py`), each
ingested through `IngestService.ingest` (embedded SQLite stores, the tests' bag-of-words embedder) in
its own process under the ingestion function's limits from `template.yaml`: {limits.seconds:g} s of
wall clock and of CPU, {limits.memory_mib} MiB of address space (stricter than Lambda, which counts RSS).
Seconds are the whole process, about 1 s of it interpreter start and imports; peak RSS is the
process's own high-water mark (`VmHWM`: `wait4`'s `ru_maxrss` would start from the runner's peak,
which Linux carries over fork and exec). Every case ends `ready` or `failed` with its reason, well
inside the limits; `tests/integration/test_hostile_files.py` runs the same cases with sizes × 0.1
(bombs keep the size that makes them bombs) in `make test`, in about 30 s.

Before these bounds (issue 11): a 100 KB run of `!!!` took minutes (1.3 s, 4.7 s, 19 s for 2.5k, 5k,
10k characters), a Markdown heading of 160k spaces over 5 minutes, 300k empty DOCX paragraphs 6
minutes (a style scan per paragraph), and a 1 GB DOCX text node 2.1 GB of RSS. The bounds now: a zip's
members may unpack to 256 MiB in all (declared sizes checked before reading, members inflated 4 MiB at
a time), a member over 16 MiB to at most 100:1; extracted text to 64 Mi characters; parsing and
chunking one document to a 120 s deadline (`DocumentDeadlineExceeded`).

{table}
"""


def replace_section(text: str, new: str) -> str:
    """``text`` with its ``## Hostile files`` section (up to the next ``## ``) replaced, or appended."""
    pattern = re.compile(rf"^{re.escape(TITLE)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    if pattern.search(text):
        return pattern.sub(lambda _: new + "\n", text, count=1).rstrip("\n") + "\n"
    return text.rstrip("\n") + "\n\n" + new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=1, help="cases run side by side (1: clean timings)")
    parser.add_argument("--only", nargs="*", default=[], help="file names (or parts) to run")
    parser.add_argument("--write", action="store_true", help=f"replace the section in {BENCHMARKS.name}")
    args = parser.parse_args()
    cases = [c for c in CASES if not args.only or any(part in c.filename for part in args.only)]
    limits = ingestion_limits()
    with tempfile.TemporaryDirectory(prefix="hostile-") as workdir:
        outcomes = run_corpus(Path(workdir), limits, scale=args.scale, workers=args.workers, cases=cases)
    table = markdown_table(outcomes)
    print(table)
    unexpected = [o for o in outcomes if o.status != o.case.expect or (o.case.code and o.code != o.case.code)]
    for o in unexpected:
        print(f"UNEXPECTED {o.case.name}: {o.status} {o.code} {o.reason}", file=sys.stderr)
    if args.write:
        command = ".venv/bin/python bench/hostile_files.py --write"
        if args.scale != 1.0:
            command += f" --scale {args.scale:g}"
        BENCHMARKS.write_text(replace_section(BENCHMARKS.read_text(), section(table, limits, command)))
    sys.exit(1 if unexpected else 0)


if __name__ == "__main__":
    main()
