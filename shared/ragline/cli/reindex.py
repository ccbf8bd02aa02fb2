"""``ragline namespaces reindex``: rebuild a namespace with another embedding model or chunking, in
this process, step by step (the same steps the ingestion queue runs on AWS), then switch and — after
``keep_old_for`` seconds, so searches of other processes bound to it end first — drop the old. The
namespace as it ends (the API's ``NamespaceView``) goes to ``done`` (``--json`` prints it)."""

from __future__ import annotations

import time
from collections.abc import Callable

from ragline.adapters.embedded.step_queue import RETRIED, RETRY_SECONDS, InlineStepQueue
from ragline.config import Settings
from ragline.domain.api import NamespaceView, ReindexRequest
from ragline.domain.generations import ReindexStep
from ragline.services.authentication import Principal
from ragline.wiring import Container


def run_reindex(
    settings: Settings,
    tenant: str,
    namespace: str,
    *,
    model: str | None,
    chunk_tokens: int | None,
    overlap_tokens: int | None,
    keep_old_for: float,
    chunking: str | None = None,
    parent_tokens: int | None = None,
    echo: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
    done: Callable[[NamespaceView], None] | None = None,
) -> int:
    """0 when the new generation serves, 1 when its build failed (the old one still serves)."""
    queue = InlineStepQueue()
    c = Container(settings, step_queue=queue)
    try:
        request = ReindexRequest.model_validate(
            {
                "embeddingModel": model,
                "chunkTokens": chunk_tokens,
                "chunkOverlapTokens": overlap_tokens,
                "chunking": chunking,
                "parentChunkTokens": parent_tokens,
            }
        )
        principal = Principal.operator(tenant)
        view = c.reindex.start(principal, namespace, request)
        assert view.rebuild is not None
        rebuild = view.rebuild
        echo(f"building generation {rebuild.generation} of {namespace} with {rebuild.embedding_model}")
        while (item := queue.take()) is not None:
            step, _ = item
            assert isinstance(step, ReindexStep)  # only the rebuild's steps are queued here
            if step.kind == "retire":
                echo(f"switched; dropping generation {step.generation} in {keep_old_for:g} s")
                sleep(keep_old_for)
            try:
                c.reindex.run(step)
            except RETRIED as exc:  # something it waits on is in flight: the step runs again
                echo(f"waiting: {exc.message}")
                sleep(RETRY_SECONDS)
                queue.submit(step)
                continue
            now = c.namespaces.get(principal, namespace).rebuild
            if now is not None and step.kind == "build":
                echo(f"{now.documents_done}/{now.documents_total} documents ({now.state})")
        final = c.namespaces.get(principal, namespace)
        if done is not None:
            done(final)
        if final.rebuild is not None and final.rebuild.state == "failed":
            echo(f"failed: {final.rebuild.error}; generation {final.generation} still serves")
            return 1
        echo(f"{namespace} serves generation {final.generation} ({final.embedding_model})")
        return 0
    finally:
        c.deliver_pending_events()  # namespace.reindexed, to the tenant's webhooks
        c.close()
