"""What happens leaves the process: events published to the bus, "first writer wins" marks, and
webhook subscriptions and their deliveries.

Part of :mod:`ragline.ports` (which re-exports every port); the docstrings are the contracts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: importing the ports must stay cheap (cold starts)
    from ragline.domain.events import Event
    from ragline.domain.webhooks import Subscription


class EventPublisher(Protocol):
    """Where document and usage events go (an EventBridge bus; the embedded outbox).

    ``publish`` returns once every event is accepted (durably: the bus or the outbox holds it), else
    raises a Ragline error (retryable ones as ``DependencyUnavailable``/``Throttled``) — the caller's
    work is then retried, and re-announces the same change with the same event id. Publishing an id
    again is allowed and harmless: consumers dedupe on it."""

    def publish(self, events: Sequence[Event]) -> None: ...


class OnceMarks(Protocol):
    """Conditional "first writer wins" marks: a quota threshold crossed in a period, a webhook
    delivered. ``mark`` writes ``key`` unless it exists and says whether this call wrote it — exactly
    one of any number of concurrent callers gets True. Marks may expire after ``ttl_seconds``."""

    def mark(self, key: str, *, ttl_seconds: int) -> bool: ...

    def has(self, key: str) -> bool: ...

    def forget(self, key: str) -> None:
        """Remove ``key`` (a mark whose follow-up failed, so the next caller tries again)."""
        ...


class WebhookStore(Protocol):
    """A tenant's webhook subscriptions. Every read and delete is scoped by tenant: another tenant's
    subscription id is ``NotFound``."""

    def put(self, subscription: Subscription) -> Subscription:
        """An unconditional write (seeding, tests); a tenant's creations go through :meth:`add`."""
        ...

    def add(self, subscription: Subscription, *, limit: int) -> bool:
        """Saves a new subscription unless its tenant holds ``limit`` already (``False``), atomically:
        of any number of concurrent adds, no more than ``limit`` subscriptions are ever held."""
        ...

    def replace(self, subscription: Subscription) -> Subscription:
        """Writes over the tenant's subscription of that id; ``NotFound`` when it is gone (a
        rotation whose read raced a delete must not bring the webhook back)."""
        ...

    def get(self, tenant_id: str, subscription_id: str) -> Subscription:
        """``NotFound`` when the tenant has no such subscription."""
        ...

    def list(self, tenant_id: str) -> list[Subscription]:
        """Oldest first."""
        ...

    def delete(self, tenant_id: str, subscription_id: str) -> Subscription:
        """The deleted subscription; ``NotFound`` when it does not exist."""
        ...


class WebhookTransport(Protocol):
    """POSTs one signed delivery, bounded in time and in what it reads back."""

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        """The receiver's HTTP status; ``DependencyUnavailable`` when unreachable or too slow."""
        ...
