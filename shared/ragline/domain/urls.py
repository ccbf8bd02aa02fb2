"""URLs a tenant chooses for Ragline to call (an identity provider's ``jwksUri``, a webhook).

One rule where such a URL is saved (:func:`check_public_url`: https, a host, no credentials, never a
private, loopback or link-local literal) and one notion of a public address (:func:`is_public`), which
:mod:`ragline.outbound` applies again to every address a name resolves to as it connects.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from ragline import errors

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
"""Reached over plain http only where the operator allows loopback (tests, a local server)."""


def is_public(address: str) -> bool:
    """Whether an IP address (v4 or v6; the standard library judges a v4-mapped v6 as its v4) is
    globally routable."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    return ip.is_global and not ip.is_multicast


def check_public_url(url: str, *, field: str, loopback_http: bool = False) -> str:
    """``url`` when it is ``https://`` to a name or a public address (``InvalidRequest`` naming
    ``field`` otherwise); a loopback host, over http or https, only with ``loopback_http``."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host or parts.username or parts.password or parts.fragment:
        raise errors.InvalidRequest(
            f"{field} must be an https:// URL with a host, no credentials", field=field
        )
    if loopback_http and host in LOOPBACK_HOSTS and parts.scheme in ("http", "https"):
        return url
    if parts.scheme != "https":
        raise errors.InvalidRequest(f"{field} must be an https:// URL", field=field)
    try:
        literal = not is_public(host)
    except ValueError:  # a name: checked as it resolves, when the call is made
        literal = host == "localhost" or host.endswith(".localhost")
    if literal:
        raise errors.InvalidRequest(
            f"{field} may not name a private, loopback or link-local address", field=field
        )
    return url
