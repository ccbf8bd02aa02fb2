"""Platform overhead per agent step: time a chat run spends outside the model and the store.

The model is an in-process scripted model (zero model time: search → expand → answer), the store the
embedded SQLite store with the sample corpus, the embedder a precomputed stand-in; store and embedder
calls are timed and subtracted, so what remains is Ragline's own work per step (tool dispatch,
argument validation, projections, citation checks, usage, events). Also reports the model-facing
tokens per search result against the client's rich chunk JSON.

    .venv/bin/python bench/chat_overhead.py
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragline.adapters.embedded.store import SqliteVectorStoreProvider
from ragline.adapters.local_models.embedder import LocalOnnxEmbedder
from ragline.agents.events import Sources
from ragline.agents.tools import compact
from ragline.config import Settings
from ragline.domain.api import ChatRequest
from ragline.domain.models import TenantScope
from ragline.domain.retrieval import EvidenceTable
from ragline.services.authentication import Principal
from ragline.services.namespaces import new_namespace
from ragline.wiring import Container

sys.path.insert(0, str(Path(__file__).parents[1]))
from tests.support.fakes import ScriptedChatModel

ROOT = Path(__file__).parents[1]
SCOPE = TenantScope(tenant_id="bench", namespace_id="docs")


class Timed:
    """Wraps an object and adds the wall time of its method calls to a shared counter."""

    def __init__(self, inner: Any, clock: list[float]) -> None:
        self._inner = inner
        self._clock = clock

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr):
            return attr

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return attr(*args, **kwargs)
            finally:
                self._clock[0] += time.perf_counter() - t0

        return timed


class TimedStores:
    def __init__(self, inner: SqliteVectorStoreProvider, clock: list[float]) -> None:
        self.inner, self.clock = inner, clock

    def scoped(self, scope: TenantScope, view: Any = None) -> Any:
        return Timed(self.inner.scoped(scope, view), self.clock)

    def close(self) -> None:
        self.inner.close()


class CachedQueryEmbedder:
    def __init__(self, inner: LocalOnnxEmbedder) -> None:
        self.inner = inner
        self.model_id, self.dimension = inner.model_id, inner.dimension
        self.cache: dict[str, NDArray[np.float32]] = {}

    def embed_query(self, text: str) -> NDArray[np.float32]:
        if text not in self.cache:
            self.cache[text] = self.inner.embed_query(text)
        return self.cache[text]

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self.inner.embed_documents(texts)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def main(runs: int = 200) -> int:
    tmp = Path(tempfile.mkdtemp())
    onnx = LocalOnnxEmbedder()
    embedder = CachedQueryEmbedder(onnx)
    base = SqliteVectorStoreProvider(tmp / "s.sqlite", dimension=384)
    loader = Container(Settings(home=tmp), stores=base, local_model=onnx)
    loader.registry.create_namespace(new_namespace("bench", "docs"))
    for path in sorted((ROOT / "samples" / "northwind").iterdir()):
        loader.ingest.ingest(SCOPE, filename=path.name, data=path.read_bytes())
    clock = [0.0]
    stores = TimedStores(base, clock)
    ledger = Timed(loader.ledger, clock)
    request = ChatRequest.model_validate(
        {
            "messages": [{"role": "user", "content": "How often should the chain be lubricated?"}],
            "mode": "fast",
        }
    )
    per_step: list[float] = []
    model_tokens: list[int] = []
    client_tokens: list[int] = []
    for i in range(runs + 10):
        model = ScriptedChatModel(
            [
                [("search", {"query": "chain lubrication interval", "mode": "semantic", "label": "chain"})],
                [("expand", {"documentId": "maintenance-guide.html", "sequenceNumber": 0})],
                ["Every 200 km. ", '<citation ids="maintenance-guide.html#0"/>'],
            ]
        )
        svc = Container(
            Settings(home=tmp),
            registry=loader.registry,
            stores=stores,
            embedder=Timed(embedder, clock),
            ledger=ledger,
            chat_model=model,
            reranker=None,
        ).chat
        clock[0] = 0.0
        t0 = time.perf_counter()
        events = list(svc.answer_chat(Principal.operator("bench"), request, run_id=f"r{i}"))
        total = time.perf_counter() - t0
        if i >= 10:  # warm-up excluded
            per_step.append((total - clock[0]) * 1000 / 3)
        sources = next(e for e in events if isinstance(e, Sources))
        for chunk in sources.chunks:
            client_tokens.append(len(chunk.model_dump_json()) // 4)
        table = EvidenceTable()
        for c in base.scoped(SCOPE).neighbors("maintenance-guide.html", 0, before=0, after=3):
            model_tokens.append(len(json.dumps(compact(table.add(SCOPE, c)))) // 4)
    per_step.sort()
    print("| measurement | p50 | p95 |")
    print("|---|---|---|")
    p95 = per_step[int(0.95 * (len(per_step) - 1))]
    print(f"| platform overhead per agent step (ms) | {statistics.median(per_step):.3f} | {p95:.3f} |")
    ratio = statistics.mean(model_tokens) / statistics.mean(client_tokens)
    print(
        f"\nmodel-facing tokens per result ≈ {statistics.mean(model_tokens):.0f} vs client rich chunk ≈ "
        f"{statistics.mean(client_tokens):.0f} ({(1 - ratio) * 100:.0f}% fewer; tokens ≈ JSON chars / 4)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
