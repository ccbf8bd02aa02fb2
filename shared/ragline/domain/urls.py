"""URLs a tenant chooses for Ragline to call (an identity provider's ``jwksUri``, a webhook).

One rule where such a URL is saved (:func:`check_public_url`: https, a host, no credentials, never a
private, loopback or link-local literal) and one notion of a public address (:func:`is_public`), which
:mod:`ragline.outbound` applies again to every address a name resolves to as it connects.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from ragline import errors

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
"""Reached over plain http only where the operator allows loopback (tests, a local server)."""


NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
"""IPv6 prefixes a NAT64 gateway translates to the IPv4 address in their last 32 bits."""


def is_public(address: str) -> bool:
    """Whether an IP address (v4 or v6; the standard library judges a v4-mapped v6 as its v4) is
    globally routable — and, for an IPv6 address that carries an IPv4 one a gateway would reach
    (NAT64, 6to4), whether that IPv4 address is (``64:ff9b::a9fe:a9fe`` is the metadata service)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.sixtofour
        if any(ip in net for net in NAT64):
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None and not is_public(str(embedded)):
            return False
    return ip.is_global and not ip.is_multicast


def literal_address(host: str) -> str | None:
    """The address ``host`` names without a lookup, or ``None`` for a name. Resolvers read the
    legacy IPv4 forms as addresses too (``127.1``, ``2130706433``, ``0x7f000001``, ``0177.0.0.1``,
    one trailing dot), so they are literals here: ``socket.inet_aton`` parses, it never resolves."""
    bare = host[:-1] if host.endswith(".") else host
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        pass
    if bare and all(c in "0123456789abcdefx." for c in bare):
        try:
            return socket.inet_ntoa(socket.inet_aton(bare))
        except OSError:
            return None
    return None


def check_public_url(url: str, *, field: str, loopback_http: bool = False, plain_http: bool = False) -> str:
    """``url`` when it is ``https://`` to a name or a public address (``InvalidRequest`` naming
    ``field`` otherwise); a loopback host, over http or https, only with ``loopback_http``;
    ``plain_http``: ``http://`` too (a public website crawled, where no credential is sent).

    The URL must be plain ASCII with no spaces or control characters (an international name in its
    ``xn--`` form, a path percent-encoded) and its port a number from 1 to 65535: what is saved is what
    a delivery can send to, not a URL that fails on every attempt."""
    if not url.isascii() or any(c.isspace() or not c.isprintable() for c in url):
        raise errors.InvalidRequest(
            f"{field} must be ASCII without spaces: write an international name in its xn-- form"
            " and percent-encode the path",
            field=field,
        )
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if not host or "@" in parts.netloc or parts.fragment:
        raise errors.InvalidRequest(
            f"{field} must be an https:// URL with a host, no credentials", field=field
        )
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        raise errors.InvalidRequest(f"{field} has no valid port (1 to 65535)", field=field)
    if loopback_http and host in LOOPBACK_HOSTS and parts.scheme in ("http", "https"):
        return url
    if parts.scheme != "https" and not (plain_http and parts.scheme == "http"):
        raise errors.InvalidRequest(f"{field} must be an https:// URL", field=field)
    address = literal_address(host)
    if address is not None:
        literal = not is_public(address)
    else:  # a name: checked as it resolves, when the call is made
        bare = host.rstrip(".")
        literal = bare == "localhost" or bare.endswith(".localhost")
    if literal:
        raise errors.InvalidRequest(
            f"{field} may not name a private, loopback or link-local address", field=field
        )
    return url
