"""The webhook routes' bodies (``/v1/webhooks``): the secret is in the creation (and rotation)
response only; nothing else ever returns it."""

from __future__ import annotations

from pydantic import Field

from ragline.domain.api import ApiModel, ApiRequest
from ragline.domain.events import EventType
from ragline.domain.webhooks import Subscription

MAX_WEBHOOKS = 20
"""Subscriptions one tenant may hold (each event is POSTed to every matching one)."""


class NewWebhook(ApiRequest):
    url: str = Field(min_length=1, max_length=2048)
    """``https://`` (plain ``http://`` to a loopback host only where the server allows it)."""
    event_types: list[EventType] = Field(default_factory=list, max_length=5)
    """Which events to receive; empty: all of them."""
    description: str = Field(default="", max_length=200)


class WebhookView(ApiModel):
    webhook_id: str
    url: str
    event_types: list[str]
    description: str
    created_at: str

    @classmethod
    def of(cls, s: Subscription) -> WebhookView:
        return cls(
            webhook_id=s.id,
            url=s.url,
            event_types=list(s.event_types),
            description=s.description,
            created_at=s.created_at.isoformat(),
        )


class NewWebhookView(WebhookView):
    """The creation's (or a rotation's) answer: the signing secret, shown this once."""

    secret: str

    @classmethod
    def with_secret(cls, s: Subscription) -> NewWebhookView:
        return cls(**WebhookView.of(s).model_dump(by_alias=False), secret=s.secret)


class WebhookList(ApiModel):
    webhooks: list[WebhookView]
