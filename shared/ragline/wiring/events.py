"""The container's events: the publisher (EventBridge, or the embedded outbox), the announcer the
services tell what happened, the document registry that announces settled records, the quota watch,
and webhooks (their API and their delivery).

Above :mod:`.storage`: events are announced about stored things and kept in stores; below the
services, which all announce through these parts.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from .storage import StorageParts

if TYPE_CHECKING:
    from ragline.ports import DocumentRegistry, EventPublisher
    from ragline.services.events import Announcer, QuotaWatch
    from ragline.services.webhooks import WebhookDelivery, WebhookService


class EventParts(StorageParts):
    """The event parts of :class:`~ragline.wiring.Container`, each built on first use."""

    @cached_property
    def event_publisher(self) -> EventPublisher | None:
        """aws: the EventBridge bus (``event_bus_name``; none: no events); embedded: the outbox under
        ``home``, relayed to this process's webhook delivery."""
        s = self.settings
        if s.backend == "aws":
            if not s.event_bus_name:
                return None
            from ragline.adapters.aws.events import EventBridgePublisher

            return EventBridgePublisher(s.event_bus_name, region=s.aws_region)
        from ragline.adapters.embedded.events import SqliteEventOutbox
        from ragline.backends import EVENTS_FILE

        return SqliteEventOutbox(s.home / EVENTS_FILE, deliver=self.webhook_delivery.deliver)

    @cached_property
    def announcer(self) -> Announcer:
        from ragline.services.events import Announcer

        return Announcer(self.event_publisher)

    @cached_property
    def documents(self) -> DocumentRegistry:
        """Announcing each settled record when events are on (see :mod:`ragline.services.events`)."""
        from ragline.services.events import AnnouncingDocuments

        inner = self.backend.documents()
        return AnnouncingDocuments(inner, self.announcer) if self.announcer.enabled else inner

    @cached_property
    def quota_watch(self) -> QuotaWatch:
        from ragline.services.events import QuotaWatch

        return QuotaWatch(ledger=self.ledger, marks=self.once_marks, announcer=self.announcer)

    @cached_property
    def webhooks(self) -> WebhookService:
        from ragline.services.webhooks import WebhookService

        return WebhookService(self.webhook_store, loopback_http=self.settings.webhook_loopback_http)

    @cached_property
    def webhook_delivery(self) -> WebhookDelivery:
        from ragline.adapters.webhook_http import HttpWebhookTransport
        from ragline.services.webhooks import WebhookDelivery

        return WebhookDelivery(
            self.webhook_store,
            self.once_marks,
            HttpWebhookTransport(allow_loopback=self.settings.webhook_loopback_http),
            loopback_http=self.settings.webhook_loopback_http,
        )
