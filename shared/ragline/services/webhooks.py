"""A tenant's webhook subscriptions (``/v1/webhooks``), and delivering an event to them.

Subscriptions are tenant-wide settings, so like the identity provider they need an ``admin`` key
without a namespace allow-list (a restricted key would otherwise receive other namespaces' events).

:class:`WebhookDelivery` POSTs one event to each subscription of its tenant that wants its type, to
all of them at once, signed (:func:`~ragline.domain.webhooks.sign`), and records each success with a
conditional write keyed by (subscription, event id): a redelivered event is not POSTed again to a
receiver that already took it. While it POSTs, a worker holds that pair (:data:`SENDING_TTL`, another
conditional write), so a duplicate message handled at the same moment by another worker does not POST
it a second time. Any receiver's failure (no answer, a non-2xx status) raises after the others were
tried, so the event comes back (SQS redelivery or the outbox's retry) for the failed ones alone; the
URL is checked again before each POST (the rules may have tightened since it was saved).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from ragline import errors
from ragline.domain.events import Event
from ragline.domain.webhook_api import MAX_WEBHOOKS, NewWebhook, NewWebhookView, WebhookList, WebhookView
from ragline.domain.webhooks import (
    EVENT_ID_HEADER,
    EVENT_TYPE_HEADER,
    SIGNATURE_HEADER,
    Subscription,
    check_url,
    is_subscription_id,
    new_secret,
    new_subscription_id,
    sign,
)
from ragline.ports import OnceMarks, WebhookStore, WebhookTransport
from ragline.services.authentication import Principal

DELIVERED_TTL = 14 * 86_400
"""How long a delivery is remembered (longer than the delivery queue keeps a message: 4 days)."""
SENDING_TTL = 60
"""How long a worker holds a (subscription, event) while it POSTs (longer than a POST may take, 10 s;
shorter than the delivery queue's retry, 6 minutes): a duplicate of the message handled at the same
time leaves that receiver to the holder, and a holder that died lets the next retry send."""


class WebhookService:
    def __init__(self, store: WebhookStore, *, loopback_http: bool = False) -> None:
        self._store = store
        self._loopback_http = loopback_http

    def _admin(self, principal: Principal, webhook_id: str | None = None) -> None:
        principal.require("admin")
        if not principal.unrestricted:
            raise errors.Forbidden(
                "webhooks are tenant-wide: use an admin key without a namespace allow-list"
            )
        if webhook_id is not None and not is_subscription_id(webhook_id):
            raise errors.NotFound(f"no webhook {webhook_id[:40]!r}", webhook_id=webhook_id[:40])

    def create(self, principal: Principal, body: NewWebhook) -> NewWebhookView:
        self._admin(principal)
        url = check_url(body.url, loopback_http=self._loopback_http)
        subscription = Subscription(
            id=new_subscription_id(),
            tenant_id=principal.tenant_id,
            url=url,
            secret=new_secret(),
            event_types=tuple(dict.fromkeys(body.event_types)),
            description=body.description,
        )
        if not self._store.add(subscription, limit=MAX_WEBHOOKS):  # atomic: concurrent creates too
            raise errors.Conflict(f"a tenant holds at most {MAX_WEBHOOKS} webhooks", limit=MAX_WEBHOOKS)
        return NewWebhookView.with_secret(subscription)

    def list(self, principal: Principal) -> WebhookList:
        self._admin(principal)
        return WebhookList(webhooks=[WebhookView.of(s) for s in self._store.list(principal.tenant_id)])

    def get(self, principal: Principal, webhook_id: str) -> WebhookView:
        self._admin(principal, webhook_id)
        return WebhookView.of(self._store.get(principal.tenant_id, webhook_id))

    def delete(self, principal: Principal, webhook_id: str) -> WebhookView:
        self._admin(principal, webhook_id)
        return WebhookView.of(self._store.delete(principal.tenant_id, webhook_id))

    def rotate(self, principal: Principal, webhook_id: str) -> NewWebhookView:
        """A new secret (returned once); deliveries are signed with it from now on. ``NotFound`` when
        the webhook is deleted meanwhile (the rotation does not bring it back)."""
        self._admin(principal, webhook_id)
        current = self._store.get(principal.tenant_id, webhook_id)
        return NewWebhookView.with_secret(self._store.replace(replace(current, secret=new_secret())))


class WebhookDelivery:
    def __init__(
        self,
        store: WebhookStore,
        marks: OnceMarks,
        transport: WebhookTransport,
        *,
        loopback_http: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._marks = marks
        self._transport = transport
        self._loopback_http = loopback_http
        self._clock = clock

    def deliver(self, event: Event) -> int:
        """POST ``event`` to every subscription that wants it and has not taken it yet, all at once
        (one slow receiver costs the event one POST's bound, not one per subscription after it); the
        number POSTed. ``DependencyUnavailable`` (naming the failed subscriptions) when any failed."""
        body = json.dumps(event.to_dict(), separators=(",", ":")).encode()
        targets = [s for s in self._store.list(event.tenant_id) if s.wants(event.type)]
        if not targets:
            return 0
        with ThreadPoolExecutor(max_workers=len(targets), thread_name_prefix="webhook") as pool:
            outcomes = list(pool.map(lambda s: self._send(s, event, body), targets))
        failed = {s.id: outcome for s, outcome in zip(targets, outcomes, strict=True) if outcome}
        if failed:
            raise errors.DependencyUnavailable(
                f"event {event.id} was not delivered to {len(failed)} webhook(s)", failures=failed
            )
        return sum(1 for outcome in outcomes if outcome == "")

    def _send(self, subscription: Subscription, event: Event, body: bytes) -> str | None:
        """One subscription's POST: ``""`` sent, ``None`` nothing to send (taken already, or being
        sent by another worker), else the failure's code."""
        key = f"delivered#{subscription.id}#{event.id}"
        if self._marks.has(key):
            return None  # a redelivery: this receiver took it already
        sending = f"sending#{subscription.id}#{event.id}"
        if not self._marks.mark(sending, ttl_seconds=SENDING_TTL):
            return None  # a duplicate message, handled at this moment by another worker
        try:
            check_url(subscription.url, loopback_http=self._loopback_http)
            headers = self._headers(subscription, event, body)
            status = self._transport.post(subscription.url, body, headers)
            if not 200 <= status < 300:
                raise errors.DependencyFailed(f"the receiver answered {status}", code=f"http_{status}")
        except errors.RaglineError as exc:
            self._marks.forget(sending)  # the retry sends it again
            return str(exc.details.get("code", exc.code))
        self._marks.mark(key, ttl_seconds=DELIVERED_TTL)
        return ""

    def _headers(self, subscription: Subscription, event: Event, body: bytes) -> dict[str, str]:
        return {
            SIGNATURE_HEADER: sign(subscription.secret, body, int(self._clock())),
            EVENT_ID_HEADER: event.id,
            EVENT_TYPE_HEADER: event.type,
        }
