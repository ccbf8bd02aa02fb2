"""Webhook subscriptions and the signature every delivery carries.

A delivery's ``Ragline-Signature`` header is ``t=<unix seconds>,v1=<hex HMAC-SHA256>`` over
``f"{t}.{body}"`` with the subscription's secret (Stripe's scheme, which receivers already know): the
timestamp is signed with the body, so a captured delivery replayed later fails the receiver's
tolerance check, and a changed body or timestamp fails the HMAC. Standard library only.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit

from ragline import errors

SIGNATURE_HEADER = "Ragline-Signature"
EVENT_ID_HEADER = "Ragline-Event-Id"
EVENT_TYPE_HEADER = "Ragline-Event-Type"
DEFAULT_TOLERANCE = 300
"""Seconds a receiver should accept between the signed timestamp and its clock (either way)."""
SECRET_PREFIX = "whsec_"
MAX_URL_LENGTH = 2048
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


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
    if len(stamps) != 1 or not stamps[0].strip().isdigit() or not macs:
        return False
    t = int(stamps[0])
    if abs(now - t) > tolerance:
        return False
    expected = sign(secret, body, t).split("v1=", 1)[1]
    return any(hmac.compare_digest(expected, m) for m in macs)


def check_url(url: str, *, loopback_http: bool = False) -> str:
    """``https://`` to a name or a public address; never a private, loopback or link-local literal
    (the delivery function must not be turned on the VPC or the metadata service). Plain
    ``http://`` to a loopback host only where the operator allows it (tests, ``ragline serve``)."""
    if len(url) > MAX_URL_LENGTH:
        raise errors.InvalidRequest(f"url is longer than {MAX_URL_LENGTH} characters", field="url")
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host or parts.username or parts.password or parts.fragment:
        raise errors.InvalidRequest("url must be an https:// URL with a host, no credentials", field="url")
    if loopback_http and host in LOOPBACK_HOSTS and parts.scheme in ("http", "https"):
        return url
    if parts.scheme != "https":
        raise errors.InvalidRequest("url must be an https:// URL", field="url")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if host == "localhost" or host.endswith(".localhost") or (address is not None and not address.is_global):
        raise errors.InvalidRequest("url may not name a private, loopback or link-local address", field="url")
    return url
