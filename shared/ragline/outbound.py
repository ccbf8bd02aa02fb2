"""Outbound HTTP to an address a tenant chose (an identity provider's ``jwksUri``): public only.

A URL's host is checked where the connection is made, not only where the URL was accepted: the name
is resolved, every address it resolves to must be public (:func:`is_public` — not private, loopback,
link-local such as the instance-metadata service, shared, multicast or reserved), and the socket
connects to the address that was checked. A name that resolves to a public address when it is
checked and to ``169.254.169.254`` a moment later (DNS rebinding) never reaches the second; TLS still
verifies the certificate against the name. Redirects are not followed (the response is returned as
it is), and the time and the bytes read are bounded.

Loopback is allowed only where the operator says so (``allow_loopback``: tests and a local server),
and then only to a loopback address.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ragline import errors

if TYPE_CHECKING:
    import httpcore

MAX_RESPONSE_BYTES = 64 * 1024
"""Default bound on a response body read (a larger body is refused, not truncated)."""


class Response(NamedTuple):
    status: int
    headers: dict[str, str]
    body: bytes


def is_public(address: str) -> bool:
    """Whether an IP address (v4 or v6, a v4-mapped v6 judged as its v4) is globally routable."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def resolve_checked(host: str, port: int, *, allow_loopback: bool = False) -> str:
    """The one address to connect to for ``host``: every address it resolves to checked first."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise errors.DependencyUnavailable(f"{host} could not be resolved") from exc
    addresses = [str(info[4][0]) for info in found]
    if not addresses:
        raise errors.DependencyUnavailable(f"{host} could not be resolved")
    for address in addresses:
        loopback = ipaddress.ip_address(address.split("%", 1)[0]).is_loopback
        if not (is_public(address) or (allow_loopback and loopback)):
            raise errors.DependencyFailed(
                f"{host} resolves to a private, loopback or link-local address (only public ones are reached)"
            )
    return addresses[0]


def _backend(allow_loopback: bool) -> httpcore.NetworkBackend:
    import httpcore

    class CheckedBackend(httpcore.SyncBackend):
        def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore.NetworkStream:
            address = resolve_checked(host, port, allow_loopback=allow_loopback)
            return super().connect_tcp(address, port, timeout, local_address, socket_options)

    return CheckedBackend()


def request(
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    body: bytes = b"",
    timeout: float = 3.0,
    max_bytes: int = MAX_RESPONSE_BYTES,
    allow_loopback: bool = False,
) -> Response:
    """One request to ``url`` through a checked connection, done within about ``timeout`` seconds in
    all; ``DependencyUnavailable`` when it cannot be made or runs out of time, ``DependencyFailed`` for
    a non-public address or a body over ``max_bytes``."""
    import httpcore

    deadline = time.monotonic() + timeout

    timeouts = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
    with httpcore.ConnectionPool(network_backend=_backend(allow_loopback), max_connections=1) as pool:
        try:
            with pool.stream(
                method,
                url,
                headers=list((headers or {}).items()),
                content=body,
                extensions={"timeout": timeouts},
            ) as response:
                read = bytearray()
                for piece in response.iter_stream():
                    read += piece
                    if len(read) > max_bytes:
                        raise errors.DependencyFailed(f"the response is larger than {max_bytes} bytes")
                    if time.monotonic() > deadline:  # a body dripped a byte at a time ends here
                        raise errors.DependencyUnavailable(f"{method} {url} took longer than {timeout} s")
                return Response(
                    status=response.status,
                    headers={k.decode("latin-1").lower(): v.decode("latin-1") for k, v in response.headers},
                    body=bytes(read),
                )
        except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as exc:
            raise errors.DependencyUnavailable(f"{method} {url} failed: {type(exc).__name__}") from exc
        except httpcore.UnsupportedProtocol as exc:
            raise errors.DependencyFailed(f"{url} is not an http(s) URL") from exc


def post_for_status(
    url: str,
    *,
    headers: Mapping[str, str],
    body: bytes,
    timeout: float,
    read_bytes: int = MAX_RESPONSE_BYTES,
    allow_loopback: bool = False,
) -> int:
    """POST ``body`` through a checked connection and return the status: a caller that needs only the
    answer's status (a webhook delivery) reads at most ``read_bytes`` of the body and hangs up, all
    within about ``timeout`` seconds; errors as :func:`request`'s."""
    import httpcore

    deadline = time.monotonic() + timeout
    timeouts = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
    with httpcore.ConnectionPool(network_backend=_backend(allow_loopback), max_connections=1) as pool:
        try:
            with pool.stream(
                "POST", url, headers=list(headers.items()), content=body, extensions={"timeout": timeouts}
            ) as response:
                read = 0
                for piece in response.iter_stream():
                    read += len(piece)
                    if read >= read_bytes or time.monotonic() > deadline:
                        break  # only the status matters
                return int(response.status)
        except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError) as exc:
            raise errors.DependencyUnavailable(f"POST {url} failed: {type(exc).__name__}") from exc
        except httpcore.UnsupportedProtocol as exc:
            raise errors.DependencyFailed(f"{url} is not an http(s) URL") from exc
