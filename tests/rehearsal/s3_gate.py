"""A loopback proxy in front of moto's S3 that answers a missing key as S3 does for the caller's role.

S3 answers a ``GetObject``/``HeadObject`` of a key that does not exist with 404 ``NoSuchKey`` only to a
caller allowed ``s3:ListBucket`` on the bucket; to anyone else it is 403 ``AccessDenied`` (it will not
reveal whether the key exists). moto answers 404 to everyone, so the functions reach S3 through this
gate (``AWS_ENDPOINT_URL_S3``), which knows each caller by the access key id of its SigV4 signature
(the rehearsal gives each function its own) and asks ``may_list(access key, bucket)`` whether its role
grants the listing. Everything else passes through unchanged.
"""

from __future__ import annotations

import http.client
import re
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

_CREDENTIAL = re.compile(r"Credential=([^/]+)/")
_HOP = ("transfer-encoding", "content-length", "connection")


def access_denied() -> bytes:
    """S3's own error document for a refused request."""
    request_id = uuid.uuid4().hex[:16].upper()
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
        f"<Message>Access Denied</Message><RequestId>{request_id}</RequestId>"
        f"<HostId>{request_id}</HostId></Error>"
    ).encode()


@dataclass
class S3Gate:
    upstream: str
    may_list: Callable[[str, str], bool]
    """(access key id, bucket) → whether that caller's role allows ``s3:ListBucket`` on the bucket."""
    denied: list[tuple[str, str, str]] = field(default_factory=list)
    """(access key id, method, path) of every missing-key answer turned into 403."""

    def start(self) -> str:
        target = urlsplit(self.upstream)
        gate = self

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

            def _forward(self) -> None:
                body = self._body()
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", *_HOP)}
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                status, data, sent = resp.status, resp.read(), resp.getheaders()
                conn.close()
                if self._hides_missing_key(status, data):
                    status, sent = 403, [("Content-Type", "application/xml")]
                    data = access_denied() if self.command != "HEAD" else b""
                self.send_response(status)
                for k, v in sent:
                    if k.lower() not in _HOP:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def _hides_missing_key(self, status: int, data: bytes) -> bool:
                """A 404 for a missing key (HEAD has no body to say so) to a caller who may not list."""
                bucket, _, key = unquote(urlsplit(self.path).path).lstrip("/").partition("/")
                if status != 404 or self.command not in ("GET", "HEAD") or not key:
                    return False
                if self.command == "GET" and b"<Code>NoSuchKey</Code>" not in data:
                    return False
                match = _CREDENTIAL.search(self.headers.get("Authorization", ""))
                caller = match.group(1) if match else ""
                if gate.may_list(caller, bucket):
                    return False
                gate.denied.append((caller, self.command, self.path))
                return True

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
