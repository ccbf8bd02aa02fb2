"""A webhook receiver on 127.0.0.1 that checks every delivery's signature as a tenant's would.

Each POST is recorded (event id header, body, whether the signature verified against the secret the
test registered for its path) and answered with the next scripted status for its path (default 200):
a test makes a receiver fail N times, or always, and sees the retries arrive.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ragline.domain.webhooks import EVENT_ID_HEADER, SIGNATURE_HEADER, verify


@dataclass(frozen=True)
class Delivery:
    path: str
    event_id: str
    body: dict[str, Any]
    verified: bool
    status: int


class Receiver:
    def __init__(self) -> None:
        self.secrets: dict[str, str] = {}
        self.deliveries: list[Delivery] = []
        self.script: dict[str, deque[int]] = defaultdict(deque)
        self.always: dict[str, int] = {}
        self.delay: dict[str, float] = {}
        """Seconds a path waits before it answers (a slow receiver)."""
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                secret = receiver.secrets.get(self.path, "")
                signed = verify(secret, raw, self.headers.get(SIGNATURE_HEADER, ""), now=int(time.time()))
                with receiver._lock:
                    queue = receiver.script[self.path]
                    status = queue.popleft() if queue else receiver.always.get(self.path, 200)
                    event_id = self.headers.get(EVENT_ID_HEADER, "")
                    receiver.deliveries.append(Delivery(self.path, event_id, json.loads(raw), signed, status))
                time.sleep(receiver.delay.get(self.path, 0.0))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def accepted(self, path: str | None = None) -> list[Delivery]:
        """Deliveries answered 2xx (what the receiver kept), in arrival order."""
        return [d for d in self.deliveries if 200 <= d.status < 300 and path in (None, d.path)]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
