"""Outbound requests to tenant-chosen URLs reach public addresses only, checked as they connect."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from ragline import errors, outbound
from ragline.domain.urls import is_public
from ragline.services.identity_tokens import TokenVerifier, fetch_jwks

BIG = b"x" * (outbound.MAX_RESPONSE_BYTES + 1)


class Handler(BaseHTTPRequestHandler):
    hosts: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Handler.hosts.append(self.headers.get("Host", ""))
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/drip-headers":  # the status line, then a header line every 50 ms
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            for _ in range(20):
                self.wfile.write(b"X-Drip: 1\r\n")
                self.wfile.flush()
                time.sleep(0.05)
            self.wfile.write(b"Content-Length: 0\r\n\r\n")
            return
        if self.path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            for _ in range(100):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.05)
            return
        body = BIG if self.path == "/big" else b'{"keys": [{"kty": "OKP", "kid": "k1"}]}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


@pytest.fixture
def resolves_to(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Make the next lookup of any name answer the given addresses, and every later lookup fail (as
    a rebinding DNS server's second answer would differ): a request succeeds only if it connects to
    the address its check resolved."""

    def answer(*addresses: str) -> None:
        answers = [addresses]

        def getaddrinfo(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
            if host.replace(".", "").isdigit() or ":" in host:  # a literal address: no DNS
                return [
                    (
                        socket.AF_INET6 if ":" in host else socket.AF_INET,
                        socket.SOCK_STREAM,
                        6,
                        "",
                        (host, port),
                    )
                ]
            if not answers:
                raise socket.gaierror(socket.EAI_NONAME, "second lookup")
            return [
                (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
                for a in answers.pop()
            ]

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)

    return answer


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("10.0.0.1", False),
        ("172.16.5.4", False),
        ("192.168.1.1", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("fc00::1", False),
        ("fe80::1%eth0", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:169.254.169.254", False),
        ("::ffff:8.8.8.8", True),
        ("64:ff9b::a9fe:a9fe", False),  # NAT64 of the metadata service
        ("64:ff9b::a00:1", False),  # NAT64 of 10.0.0.1
        ("64:ff9b:1::a00:1", False),
        ("2002:a9fe:a9fe::", False),  # 6to4 of the metadata service
        ("64:ff9b::808:808", True),
        ("2002:808:808::1", True),
    ],
)
def test_only_globally_routable_addresses_are_public(address: str, public: bool) -> None:
    assert is_public(address) is public


def test_a_name_that_resolves_to_loopback_is_refused(port: int) -> None:
    with pytest.raises(errors.DependencyFailed, match="private, loopback or link-local"):
        outbound.request("GET", f"http://localhost:{port}/jwks")


def test_one_private_address_among_public_ones_refuses_the_name(resolves_to: Any) -> None:
    resolves_to("8.8.8.8", "169.254.169.254")
    with pytest.raises(errors.DependencyFailed):
        outbound.request("GET", "https://keys.example.com/jwks")


def test_the_connection_goes_to_the_address_that_was_checked(port: int, resolves_to: Any) -> None:
    """Given a name the system cannot resolve, the request still reaches the address the check
    resolved it to: the socket connects to that address, not to a second lookup's answer."""
    resolves_to("127.0.0.1")
    Handler.hosts.clear()
    response = outbound.request("GET", f"http://rebind.invalid:{port}/jwks", allow_loopback=True)
    assert response.status == 200 and b"k1" in response.body
    assert Handler.hosts == [f"rebind.invalid:{port}"]  # the name still travels in the Host header


def test_loopback_is_reached_only_when_allowed(port: int) -> None:
    assert outbound.request("GET", f"http://127.0.0.1:{port}/jwks", allow_loopback=True).status == 200
    with pytest.raises(errors.DependencyFailed):
        outbound.request("GET", f"http://127.0.0.1:{port}/jwks")


def test_a_redirect_is_returned_not_followed(port: int) -> None:
    response = outbound.request("GET", f"http://127.0.0.1:{port}/redirect", allow_loopback=True)
    assert response.status == 302 and response.headers["location"].startswith("http://169.254")


def test_a_body_over_the_bound_is_refused(port: int) -> None:
    with pytest.raises(errors.DependencyFailed, match="larger than"):
        outbound.request("GET", f"http://127.0.0.1:{port}/big", allow_loopback=True)


def test_a_body_dripped_slowly_ends_at_the_deadline(port: int) -> None:
    with pytest.raises(errors.DependencyUnavailable, match="took longer"):
        outbound.request("GET", f"http://127.0.0.1:{port}/drip", timeout=0.5, allow_loopback=True)


def test_headers_dripped_slowly_end_at_the_deadline(port: int) -> None:
    """Given a server that answers each read within the read timeout but never finishes its headers
    in time, the request ends at its deadline (not one read timeout per header line)."""
    with pytest.raises(errors.DependencyUnavailable):
        outbound.request("GET", f"http://127.0.0.1:{port}/drip-headers", timeout=0.3, allow_loopback=True)


def test_a_body_dripped_slowly_still_gives_the_status_when_only_the_status_matters(port: int) -> None:
    response = outbound.request(
        "GET", f"http://127.0.0.1:{port}/drip", timeout=0.5, allow_loopback=True, whole_body=False
    )
    assert response.status == 200 and len(response.body) < 100


@pytest.mark.parametrize("url", ["https://bücher.example/jwks", "https://keys.example.com:99999/jwks"])
def test_a_url_no_request_can_be_made_to_fails_as_a_dependency(url: str) -> None:
    with pytest.raises(errors.DependencyFailed):
        outbound.request("GET", url)


def test_a_jwks_uri_whose_name_resolves_privately_is_never_fetched(port: int) -> None:
    """Given a provider's jwksUri naming a host (not a literal address) that resolves to loopback,
    the verifier refuses to fetch it unless the operator allows loopback."""
    uri = f"http://localhost:{port}/jwks"
    with pytest.raises(errors.DependencyFailed):
        fetch_jwks(uri)
    assert fetch_jwks(uri, allow_loopback=True) == [{"kty": "OKP", "kid": "k1"}]
    with pytest.raises(errors.DependencyFailed):
        TokenVerifier(loopback_http=False)._fetch(uri)


def test_a_redirecting_jwks_uri_is_not_followed(port: int) -> None:
    with pytest.raises(errors.DependencyUnavailable, match="HTTP 302"):
        fetch_jwks(f"http://127.0.0.1:{port}/redirect", allow_loopback=True)
