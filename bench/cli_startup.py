"""``ragline --help`` start-up time next to a bare interpreter, measured side by side in one run.

.venv/bin/python bench/cli_startup.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "ragline --help": [str(BIN / "ragline"), "--help"],
    "import search handler": [
        sys.executable,
        "-c",
        "import runpy; runpy.run_path('functions/search/app.py')",
    ],
}


def main(rounds: int = 15) -> None:
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(rounds):  # interleaved, so machine noise hits every command alike
        for name, cmd in COMMANDS.items():
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            times[name].append((time.perf_counter() - t0) * 1000)
    base = statistics.median(times["python -c pass"])
    print("| command | median ms | p90 ms | median minus bare python ms |")
    print("|---|---|---|---|")
    for name, ts in times.items():
        ts.sort()
        med = statistics.median(ts)
        print(f"| {name} | {med:.0f} | {ts[int(0.9 * (len(ts) - 1))]:.0f} | {med - base:.0f} |")


if __name__ == "__main__":
    main()
