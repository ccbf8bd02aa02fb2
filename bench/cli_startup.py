"""Start-up: ``ragline --help`` and each handler's cold import, next to a bare interpreter, in one run.

Bytecode is precompiled (``compileall``) first, as it is in a Lambda layer.

.venv/bin/python bench/cli_startup.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def import_of(path: str) -> list[str]:
    return [sys.executable, "-c", f"import runpy; runpy.run_path({path!r})"]


COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "ragline --help": [str(BIN / "ragline"), "--help"],
    "import search handler": import_of("functions/search/app.py"),
    "import hosting search handler": import_of("functions/hosting_search/app.py"),
    "import ingestion handler": import_of("functions/ingestion/app.py"),
    "import documents handler": import_of("functions/documents/app.py"),
    "import chat app": import_of("functions/chat/app.py"),
    "import authorizer": import_of("functions/authorizer/app.py"),
    "import namespaces handler": import_of("functions/namespaces/app.py"),
    "import keys handler": import_of("functions/keys/app.py"),
}


def main(rounds: int = 15) -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", "shared", "functions"], check=True)
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
