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
from urllib.parse import urlsplit

from ragline import errors
from ragline.domain.urls import is_public

if TYPE_CHECKING:
    import httpcore

MAX_RESPONSE_BYTES = 64 * 1024
"""Default bound on a response body read (a larger body is refused, not truncated)."""


class Response(NamedTuple):
    status: int
    headers: dict[str, str]
    body: bytes


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


def _backend(allow_loopback: bool, deadline: float) -> httpcore.NetworkBackend:
    import httpcore

    class DeadlineStream(httpcore.NetworkStream):
        """A stream whose every read and write ends by ``deadline``: a receiver that drips its
        status line or headers a byte at a time cannot stretch the exchange read by read."""

        def __init__(self, inner: httpcore.NetworkStream) -> None:
            self._inner = inner

        def _left(self, timeout: float | None) -> float:
            left = deadline - time.monotonic()
            if left <= 0:
                raise httpcore.ReadTimeout("the request's deadline passed")
            return left if timeout is None else min(timeout, left)

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return self._inner.read(max_bytes, self._left(timeout))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._inner.write(buffer, self._left(timeout))

        def close(self) -> None:
            self._inner.close()

        def start_tls(
            self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
        ) -> httpcore.NetworkStream:
            return DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, self._left(timeout)))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

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
            return DeadlineStream(super().connect_tcp(address, port, timeout, local_address, socket_options))

    return CheckedBackend()


def _sendable(url: str) -> None:
    """``DependencyFailed`` for a URL no request can be made to (non-ASCII, a port that is no
    port): a URL saved under older rules fails as a delivery does, never as a crash."""
    try:
        port = urlsplit(url).port
    except ValueError:
        port = 0
    if not url.isascii() or port == 0:
        raise errors.DependencyFailed(f"{url!r} is not a URL a request can be made to")


def _read(response: Any, *, max_bytes: int, whole_body: bool, deadline: float) -> bytearray | None:
    """The body read by ``deadline`` and to ``max_bytes`` (``None``: the time ran out first). With
    ``whole_body=False`` what was read when either bound is reached (only the status matters)."""
    import httpcore

    read = bytearray()
    try:
        for piece in response.iter_stream():
            read += piece
            too_large, too_late = len(read) > max_bytes, time.monotonic() > deadline
            if (too_large or too_late) and not whole_body:
                break
            if too_large:
                raise errors.DependencyFailed(f"the response is larger than {max_bytes} bytes")
            if too_late:
                return None
    except httpcore.TimeoutException:
        if whole_body:
            return None
    return read


def request(
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    body: bytes = b"",
    timeout: float = 3.0,
    max_bytes: int = MAX_RESPONSE_BYTES,
    allow_loopback: bool = False,
    whole_body: bool = True,
) -> Response:
    """One request to ``url`` through a checked connection, done within about ``timeout`` seconds in
    all; ``DependencyUnavailable`` when it cannot be made or runs out of time, ``DependencyFailed`` for
    a non-public address or a body over ``max_bytes``. A caller that needs only the status (a webhook
    delivery: ``whole_body=False``) gets it with what was read when the body passes ``max_bytes`` or
    the time runs out: the connection is hung up, not waited on."""
    import httpcore

    _sendable(url)
    deadline = time.monotonic() + timeout
    timeouts = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
    backend = _backend(allow_loopback, deadline)
    with httpcore.ConnectionPool(network_backend=backend, max_connections=1) as pool:
        try:
            with pool.stream(
                method,
                url,
                headers=list((headers or {}).items()),
                content=body,
                extensions={"timeout": timeouts},
            ) as response:
                read = _read(response, max_bytes=max_bytes, whole_body=whole_body, deadline=deadline)
                if read is None:  # a body dripped a byte at a time ends here
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
