"""The local 3-node OpenSearch cluster, started for the tests of this directory only (a session
fixture: the rest of the suite never waits for it) and stopped at the end whatever happens."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

RUN = Path(__file__).resolve().parents[2] / "infra" / "opensearch-local" / "run"
NODES = 3


@dataclass(frozen=True)
class Cluster:
    """The nodes' HTTP URLs (node ``i`` is ``urls[i]``, named ``ragline-node-<i>``) and its controls."""

    urls: tuple[str, ...]

    @property
    def url(self) -> str:
        """Every node, as ``RAGLINE_OPENSEARCH_URL`` names them."""
        return ",".join(self.urls)

    def kill(self, node: int) -> None:
        """``kill -9`` the node's JVM: no shutdown, no goodbye to the cluster."""
        _run("node-kill", str(node))

    def start(self, node: int) -> None:
        """Start the node again on its home and ports; returns once it has joined."""
        _run("node-start", str(node))

    def get(self, path: str, *, via: int | None = None) -> Any:
        """GET ``path`` as JSON from node ``via`` (default: the first node that answers)."""
        order = range(len(self.urls)) if via is None else [via]
        last: Exception | None = None
        for i in order:
            try:
                with urllib.request.urlopen(self.urls[i] + path, timeout=30) as resp:
                    return json.loads(resp.read())
            except OSError as exc:
                last = exc
        raise AssertionError(f"no node answered {path}: {last}")

    def wait(self, query: str, *, timeout: float = 90.0) -> dict[str, Any]:
        """``_cluster/health`` once it satisfies ``query`` (e.g. ``wait_for_status=green``)."""
        deadline = time.monotonic() + timeout
        while True:
            health: dict[str, Any] = self.get(f"/_cluster/health?{query}&timeout=5s")
            if not health["timed_out"] or time.monotonic() > deadline:
                assert not health["timed_out"], f"cluster never reached {query}: {health}"
                return health


def _run(*args: str) -> str:
    done = subprocess.run([str(RUN), *args], check=False, capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise AssertionError(f"run {' '.join(args)} failed: {done.stderr[-2000:]}")
    return done.stdout


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    try:
        out = _run("cluster-start", str(NODES))
        line = next(ln for ln in out.splitlines() if ln.startswith("OPENSEARCH_URL="))
        yield Cluster(tuple(line.removeprefix("OPENSEARCH_URL=").split(",")))
    finally:
        subprocess.run([str(RUN), "cluster-stop"], check=False, capture_output=True, timeout=120)
