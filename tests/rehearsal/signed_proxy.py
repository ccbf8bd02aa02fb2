"""A loopback proxy in front of the local OpenSearch node that lets only SigV4-signed requests through
(403 otherwise, as an IAM-protected domain does) and records who called what, by the access key id of
the signature (the rehearsal gives each function its own)."""

from __future__ import annotations

import http.client
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

_CREDENTIAL = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^/]+)/\d{8}/[^/]+/es/aws4_request,")


@dataclass
class SignedProxy:
    upstream: str
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    """(access key id, method, path) of every request let through."""
    refused: list[tuple[str, str]] = field(default_factory=list)

    def start(self) -> str:
        target = urlsplit(self.upstream)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _forward(self) -> None:
                match = _CREDENTIAL.match(self.headers.get("Authorization", ""))
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if match is None or not self.headers.get("X-Amz-Date"):
                    proxy.refused.append((self.command, self.path))
                    payload = b'{"message":"request is not signed with SigV4 for es"}'
                    self.send_response(403)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                proxy.calls.append((match.group(1), self.command, self.path))
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "authorization")
                }
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
