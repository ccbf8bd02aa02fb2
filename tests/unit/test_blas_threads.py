"""One BLAS thread per process where Ragline starts one: the CLI (``serve`` runs under it) sets the
BLAS libraries' thread variables before numpy is first imported, unless the operator chose a number.
Read back in a fresh process from the BLAS library itself (threadpoolctl), not from our own code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragline.environment import BLAS_THREADS, one_blas_thread

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import json, os, sys
from ragline.cli import app as cli
sys.argv = ["ragline", "--help"]
try:
    cli.main()
except SystemExit:
    pass
import numpy, threadpoolctl
blas = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
print(json.dumps({"threads": blas, "env": os.environ.get("OPENBLAS_NUM_THREADS")}))
"""


def run_cli(**env: str) -> dict[str, object]:
    base = {k: v for k, v in os.environ.items() if k not in BLAS_THREADS}
    base["PYTHONPATH"] = os.pathsep.join([str(ROOT / "shared"), str(ROOT)])
    out = subprocess.run(
        [sys.executable, "-c", CHILD],
        env={**base, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_the_cli_runs_numpy_with_one_blas_thread() -> None:
    """Red if ``main`` stops setting the variables, or if importing the CLI starts importing numpy
    (then the variables come too late, and OpenBLAS starts one thread per core)."""
    assert run_cli() == {"threads": [1], "env": "1"}


def test_an_operators_choice_is_kept() -> None:
    if (os.cpu_count() or 1) < 2:
        pytest.fail("needs a host with at least 2 cores to tell 2 threads from the default of 1")
    assert run_cli(OPENBLAS_NUM_THREADS="2") == {"threads": [2], "env": "2"}


def test_every_blas_variable_is_set_and_none_overwritten() -> None:
    env = {"MKL_NUM_THREADS": "3"}
    one_blas_thread(env)
    assert env == {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "3", "VECLIB_MAXIMUM_THREADS": "1"}
