"""Every function of the stack runs numpy with one BLAS thread (template.yaml's environment, read by
OpenBLAS when numpy loads at init): the same variables the CLI sets (ragline.environment)."""

from __future__ import annotations

from typing import Any

import pytest

from ragline.environment import BLAS_THREADS
from tests.deploy.modes import functions

pytestmark = pytest.mark.deploy


def test_every_function_has_one_blas_thread(translated: dict[str, Any]) -> None:
    names = functions(translated)
    assert len(names) >= 7
    for name in names:
        env = translated["Resources"][name]["Properties"]["Environment"]["Variables"]
        assert {v: env.get(v) for v in BLAS_THREADS} == dict.fromkeys(BLAS_THREADS, "1"), name
