"""The embedded stack with events on, driven step by step: S3-like notifications into the ingest
service, the outbox relayed by hand on a manual clock, webhooks to a :class:`Receiver` on 127.0.0.1.

``publisher.fail_next`` makes the next publishes fail (EventBridge unreachable between "record
written" and "event published"); ``deliver`` runs a notification as the ingestion function's message
would (``ok`` or the error code that fails it, so the test redelivers it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragline import errors
from ragline.adapters.embedded.events import SqliteEventOutbox
from ragline.config import Settings
from ragline.domain.api import NewNamespace, ReindexRequest
from ragline.domain.events import Event
from ragline.domain.generations import ReindexStep
from ragline.domain.webhook_api import NewWebhook
from ragline.services.authentication import Principal
from ragline.wiring import Container
from tests.support.fakes import BowEmbedder
from tests.support.ingest_world import VersionedBucket
from tests.support.webhook_receiver import Receiver


class FlakyPublisher:
    def __init__(self, inner: SqliteEventOutbox) -> None:
        self.inner = inner
        self.fail_next = 0
        self.published: list[Event] = []

    def publish(self, events: Sequence[Event]) -> None:
        if self.fail_next:
            self.fail_next -= 1
            raise errors.DependencyUnavailable("the bus is unreachable (scripted)")
        self.inner.publish(events)
        self.published.extend(events)


class ListQueue:
    def __init__(self) -> None:
        self.steps: list[ReindexStep] = []

    def submit(self, step: ReindexStep, *, delay_seconds: float = 0.0) -> None:
        self.steps.append(step)


class EventWorld:
    def __init__(
        self, home: Path, receiver: Receiver, *, max_runs: int | None = None, **overrides: object
    ) -> None:
        """``overrides``: Container parts in place of the embedded ones (``stores=`` an OpenSearch node)."""
        self.now = 1_000_000.0
        self.receiver = receiver
        self.bucket = VersionedBucket()
        self.queue = ListQueue()
        self.outbox = SqliteEventOutbox(
            home / "events.sqlite",
            deliver=lambda e: self.container.webhook_delivery.deliver(e),  # noqa: PLW0108 (built below)
            background=False,
            clock=lambda: self.now,
            max_attempts=4,
        )
        self.publisher = FlakyPublisher(self.outbox)
        settings = Settings(home=home, webhook_loopback_http=True, chunk_tokens=40, chunk_overlap_tokens=0)
        self.container = Container(
            settings,
            embedder=BowEmbedder(),
            tokenizer=BowEmbedder(),
            objects=self.bucket,
            event_publisher=self.publisher,
            step_queue=self.queue,
            **overrides,
        )
        self.container.tenancy.create_tenant("acme", max_runs_per_period=max_runs)
        self.admin = Principal.operator("acme")
        self.container.namespaces.create(self.admin, NewNamespace.model_validate({"namespaceId": "docs"}))

    def subscribe(self, path: str, event_types: Sequence[str] = ()) -> str:
        body = NewWebhook.model_validate({"url": self.receiver.url(path), "eventTypes": list(event_types)})
        made = self.container.webhooks.create(self.admin, body)
        self.receiver.secrets[path] = made.secret
        return made.webhook_id

    def deliver(self, message: str) -> str:
        """One delivery of an ingestion queue message: ``ok``, or the code of the error failing it."""
        try:
            self.container.ingest.handle_notification(message)
        except errors.RaglineError as exc:
            return exc.code
        return "ok"

    def reindex(self) -> None:
        self.container.reindex.start(self.admin, "docs", ReindexRequest.model_validate({"chunkTokens": 30}))

    def run_steps(self) -> None:
        while [s for s in self.queue.steps if s.kind != "retire"]:
            step = next(s for s in self.queue.steps if s.kind != "retire")
            self.queue.steps.remove(step)
            try:
                self.container.reindex.run(step)
            except errors.EventNotPublished:
                self.queue.steps.append(step)  # the message comes back

    def relay(self, rounds: int = 8) -> None:
        """Relay the outbox until nothing is due, moving the clock past each retry's backoff."""
        for _ in range(rounds):
            self.outbox.relay()
            due = self.outbox.next_due()
            if due is None:
                return
            self.now = max(self.now, due)
