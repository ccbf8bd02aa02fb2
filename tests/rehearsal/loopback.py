"""A loopback HTTP proxy in front of one upstream (moto, the OpenSearch node): the rehearsal's stand-in
for what AWS does at a service's front door. A subclass decides each request in :meth:`answer` —
refuse it, or :meth:`forward` it and pass on (or rewrite) the upstream's answer."""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple
from urllib.parse import urlsplit

_HOP = ("transfer-encoding", "content-length", "connection")


class Request(NamedTuple):
    method: str
    path: str
    headers: dict[str, str]
    """Names in lower case."""
    body: bytes | None


class Answer(NamedTuple):
    status: int
    headers: list[tuple[str, str]]
    body: bytes


class LoopbackProxy:
    upstream: str

    def answer(self, request: Request) -> Answer:
        raise NotImplementedError

    def forward(self, request: Request, *, drop: tuple[str, ...] = ()) -> Answer:
        """The upstream's answer to ``request`` (its ``drop`` headers left out, besides Host)."""
        target = urlsplit(self.upstream)
        conn = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
        skip = ("host", *_HOP, *drop)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in skip}
        try:
            conn.request(request.method, request.path, body=request.body, headers=headers)
            resp = conn.getresponse()
            return Answer(resp.status, resp.getheaders(), resp.read())
        finally:
            conn.close()

    def start(self) -> str:
        """Serve on 127.0.0.1 (a free port, threads that die with the process); the proxy's URL."""
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _body(self) -> bytes | None:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    data = b""
                    while size := int(self.rfile.readline().split(b";")[0], 16):
                        data += self.rfile.read(size)
                        self.rfile.readline()
                    self.rfile.readline()
                    return data
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else None

            def _serve(self) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = Request(self.command, self.path, headers, self._body())
                status, headers, data = proxy.answer(request)
                self.send_response(status)
                for k, v in headers:
                    if k.lower() not in _HOP:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
