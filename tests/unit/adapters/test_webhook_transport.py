"""A webhook POST is bounded: a receiver that trickles its response, sends a huge one, never answers
or redirects cannot hold the delivery function or lead it elsewhere."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from ragline import errors
from ragline.adapters.webhook_http import HttpWebhookTransport

pytestmark = pytest.mark.unit


def serve(respond: Callable[[socket.socket], None]) -> Iterator[str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def loop() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.recv(65536)
            try:
                respond(conn)
            except OSError:
                pass  # the client hung up: what a bounded client does
            finally:
                conn.close()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    stop.set()
    thread.join()
    listener.close()


def trickle(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
    for _ in range(50):  # 5 s at most, far past the bound
        conn.sendall(b"x")
        time.sleep(0.1)


def huge(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 104857600\r\n\r\n")
    chunk = b"x" * 65536
    for _ in range(1600):
        conn.sendall(chunk)


def silent(conn: socket.socket) -> None:
    time.sleep(3)


def redirect(conn: socket.socket) -> None:
    conn.sendall(
        b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://169.254.169.254/\r\nContent-Length: 0\r\n\r\n"
    )


@pytest.fixture
def transport() -> Iterator[HttpWebhookTransport]:
    t = HttpWebhookTransport(total_seconds=0.5, allow_loopback=True)
    yield t
    t.close()


@pytest.mark.parametrize("respond", [trickle, huge], ids=["trickled", "huge"])
def test_a_long_response_is_cut_and_its_status_kept(
    transport: HttpWebhookTransport, respond: Callable[[socket.socket], None]
) -> None:
    for url in serve(respond):
        assert transport.post(url, b"{}", {}) == 200


def test_a_receiver_that_never_answers_is_unavailable(transport: HttpWebhookTransport) -> None:
    for url in serve(silent):
        with pytest.raises(errors.DependencyUnavailable):
            transport.post(url, b"{}", {})


def test_a_redirect_is_not_followed(transport: HttpWebhookTransport) -> None:
    for url in serve(redirect):
        assert transport.post(url, b"{}", {}) == 307


def test_loopback_is_refused_unless_allowed() -> None:
    for url in serve(redirect):
        with pytest.raises(errors.DependencyFailed):
            HttpWebhookTransport(total_seconds=0.5).post(url, b"{}", {})
