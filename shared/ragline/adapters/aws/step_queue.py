""":class:`~ragline.ports.StepQueue` on SQS: a reindex's steps are messages of the ingestion queue,
so each runs in one ingestion invocation, within Lambda's limits (never one long request)."""

from __future__ import annotations

from typing import Any

from ragline import errors
from ragline.adapters.boto import LazyClient
from ragline.domain.generations import ReindexStep
from ragline.domain.sources import SyncStep

MAX_DELAY_SECONDS = 900
"""SQS's longest message delay: a longer wait is capped (a retire step runs no earlier than this)."""


def send_request(queue_url: str, step: ReindexStep | SyncStep, delay_seconds: float) -> dict[str, Any]:
    """``SendMessage`` of one step (pure)."""
    delay = max(0, min(MAX_DELAY_SECONDS, round(delay_seconds)))
    return {"QueueUrl": queue_url, "MessageBody": step.body(), "DelaySeconds": delay}


class SqsStepQueue:
    def __init__(self, queue_url: str, *, client: Any = None) -> None:
        self.queue_url = queue_url
        self._client = LazyClient("sqs", client=client)

    def submit(self, step: ReindexStep | SyncStep, *, delay_seconds: float = 0.0) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self._client().send_message(**send_request(self.queue_url, step, delay_seconds))
        except (ClientError, BotoCoreError) as exc:
            raise errors.DependencyUnavailable(
                "SQS refused the step", queue=self.queue_url, step=step.body()[:200]
            ) from exc
