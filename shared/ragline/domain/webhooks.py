"""Webhook subscriptions and the signature every delivery carries.

A delivery's ``Ragline-Signature`` header is ``t=<unix seconds>,v1=<hex HMAC-SHA256>`` over
``f"{t}.{body}"`` with the subscription's secret (Stripe's scheme, which receivers already know): the
timestamp is signed with the body, so a captured delivery replayed later fails the receiver's
tolerance check, and a changed body or timestamp fails the HMAC. Standard library only.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime

from ragline import errors
from ragline.domain.urls import check_public_url

SIGNATURE_HEADER = "Ragline-Signature"
EVENT_ID_HEADER = "Ragline-Event-Id"
EVENT_TYPE_HEADER = "Ragline-Event-Type"
DEFAULT_TOLERANCE = 300
"""Seconds a receiver should accept between the signed timestamp and its clock (either way)."""
SECRET_PREFIX = "whsec_"
MAX_URL_LENGTH = 2048


@dataclass(frozen=True)
class Subscription:
    """A tenant's webhook: where to POST, which event types (empty: all), the signing secret."""

    id: str
    tenant_id: str
    url: str
    secret: str
    event_types: tuple[str, ...] = ()
    description: str = ""
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def wants(self, event_type: str) -> bool:
        return not self.event_types or event_type in self.event_types


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def new_subscription_id() -> str:
    return "wh_" + secrets.token_hex(12)


def is_subscription_id(text: str) -> bool:
    """Whether ``text`` could name a subscription (what :func:`new_subscription_id` makes): anything
    else is no webhook, answered without a read (an id past DynamoDB's 1,024-byte key would fail it)."""
    return len(text) == 27 and text.startswith("wh_") and all(c in "0123456789abcdef" for c in text[3:])


def sign(secret: str, body: bytes, timestamp: int) -> str:
    """The signature header's value for ``body`` sent at ``timestamp``."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def verify(secret: str, body: bytes, header: str, *, now: int, tolerance: int = DEFAULT_TOLERANCE) -> bool:
    """Whether ``header`` signs ``body`` with ``secret`` within ``tolerance`` seconds of ``now``
    (the recipe a receiver follows; constant-time comparison, any of several ``v1`` values)."""
    parts = [p.split("=", 1) for p in header.split(",") if "=" in p]
    stamps = [v for k, v in parts if k.strip() == "t"]
    macs = [v.strip() for k, v in parts if k.strip() == "v1"]
    stamp = stamps[0].strip() if len(stamps) == 1 else ""
    if not (stamp.isascii() and stamp.isdigit()) or not macs:  # "²".isdigit(), yet int() refuses it
        return False
    t = int(stamp)
    if abs(now - t) > tolerance:
        return False
    expected = sign(secret, body, t).split("v1=", 1)[1]
    return any(hmac.compare_digest(expected, m) for m in macs)


def check_url(url: str, *, loopback_http: bool = False) -> str:
    """``https://`` to a name or a public address (:func:`~ragline.domain.urls.check_public_url`): the
    delivery function must not be turned on the VPC or the metadata service."""
    if len(url) > MAX_URL_LENGTH:
        raise errors.InvalidRequest(f"url is longer than {MAX_URL_LENGTH} characters", field="url")
    return check_public_url(url, field="url", loopback_http=loopback_http)
