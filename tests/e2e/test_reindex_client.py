"""``RaglineClient.reindex_namespace`` against ``ragline serve`` over real HTTP: the route answers 202
with the rebuild recorded, a local server runs it on its background thread, and the namespace then
serves the new chunking — with a 409 for a second request while the first builds."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragline import errors
from ragline.adapters.embedded.step_queue import ThreadStepQueue
from ragline.client import RaglineClient
from tests.e2e.test_client import Server

pytestmark = pytest.mark.e2e


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path)
    yield s
    s.stop()


def test_a_reindex_through_the_api_rebuilds_and_switches(served: Server) -> None:
    queue = served.container.step_queue
    assert isinstance(queue, ThreadStepQueue)
    gate = threading.Event()
    run = queue._run
    queue._run = lambda step: (gate.wait(60), run(step))[1]  # hold the build until the 409 is seen
    with RaglineClient(served.url, served.admin, backoff_s=0.01) as rl:
        rl.create_namespace("docs", default=True)
        text = "The frame warranty lasts ten years. Returns are accepted within thirty days of purchase."
        rl.add_text("docs", "warranty.md", text)
        started = rl.reindex_namespace("docs", chunk_tokens=8)
        assert started.rebuild is not None and started.rebuild.state == "building"
        assert (started.generation, started.rebuild.documents_total) == (1, 1)
        with pytest.raises(errors.Conflict):
            rl.reindex_namespace("docs", chunk_tokens=16)
        gate.set()
        view = rl.get_namespace("docs")
        for _ in range(2400):  # the background thread builds and switches
            if view.rebuild is not None and view.rebuild.state != "building":
                break
            threading.Event().wait(0.05)
            view = rl.get_namespace("docs")
        assert (view.generation, view.chunk_tokens) == (2, 8)
        assert view.rebuild is not None and view.rebuild.state == "ready"
        assert (view.rebuild.documents_done, view.rebuild.documents_total) == (1, 1)
        hits = rl.search("docs", "warranty frame", k=5).hits
        assert hits and all(len(h.text.split()) <= 8 for h in hits)  # the new chunking serves


def test_the_chunking_strategy_is_switched_through_the_api_and_a_bad_one_refused(served: Server) -> None:
    with RaglineClient(served.url, served.admin, backoff_s=0.01) as rl:
        rl.create_namespace("docs", default=True)
        text = " ".join(f"Step {i}: tighten bolt {i} to {10 + i} newton metres." for i in range(12))
        rl.add_text("docs", "torque.md", text)
        # An unknown strategy is a 422 naming the field; nothing starts
        with pytest.raises(errors.InvalidRequest) as refused:
            rl.reindex_namespace("docs", chunking="paragraphs")
        assert "chunking" in str(refused.value.details)
        assert rl.get_namespace("docs").rebuild is None
        # A switch to hierarchical rebuilds; the namespace then says so and serves parents as context
        rl.reindex_namespace("docs", chunking="hierarchical", chunk_tokens=12, parent_chunk_tokens=48)
        view = rl.get_namespace("docs")
        for _ in range(2400):
            if view.rebuild is not None and view.rebuild.state != "building":
                break
            threading.Event().wait(0.05)
            view = rl.get_namespace("docs")
        assert (view.generation, view.chunking, view.chunk_tokens, view.parent_chunk_tokens) == (
            2, "hierarchical", 12, 48,
        )  # fmt: skip
        hits = rl.search("docs", "bolt 7 torque", k=3).hits
        assert hits and all(len(h.text) < len(h.wider_text) and h.text in h.wider_text for h in hits)
