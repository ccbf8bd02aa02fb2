"""An HTTP proxy on 127.0.0.1 in front of the local OpenSearch node that fails chosen ``_bulk`` items the
way a busy node fails them, so a test sees what the store does with a *per-item* failure — the rest of
the request applied — against the real node (no client mocks).

- ``refuse[_id] = status``: every ``_bulk`` action on that ``_id`` is answered with ``status`` (429:
  ``es_rejected_execution_exception``, as a node whose write queue is full answers) and never reaches
  the node; the request's other actions are applied by the node, in order.
- ``unanswered`` (a set of ``_id``\\ s): a ``_bulk`` holding an action on one of them is applied by the
  node whole, then its connection is closed with no answer (the client cannot know what was applied).
- ``lone`` (a set of ``_id``\\ s): their actions are applied by the node, and answered as applied on one
  copy only (``_shards.successful`` 1), as when a replica fails during the write.

Everything else is forwarded as sent.
"""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_KINDS = {429: "es_rejected_execution_exception", 503: "unavailable_shards_exception"}


class BulkFaults:
    def __init__(self, node_url: str) -> None:
        parts = urlsplit(node_url)
        self.node = (parts.hostname or "127.0.0.1", parts.port or 9200)
        self.refuse: dict[str, int] = {}
        self.unanswered: set[str] = set()
        self.lone: set[str] = set()
        self.refused: list[str] = []
        """The ``_id`` of every action answered with a fault, in order."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> BulkFaults:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def heal(self) -> None:
        self.refuse.clear()
        self.unanswered.clear()
        self.lone.clear()

    def _node(self, method: str, target: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection(*self.node, timeout=60)
        try:
            conn.request(method, target, body=body or None, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def handle(
        self, method: str, target: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes] | None:
        """The answer to send, or None: close the connection without one."""
        if not urlsplit(target).path.endswith("/_bulk"):
            return self._node(method, target, body, headers)
        lines = [ln for ln in body.split(b"\n") if ln.strip()]
        forward: list[bytes] = []
        items: list[dict[str, Any] | None] = []
        ids: list[str] = []
        silent = False
        i = 0
        while i < len(lines):
            op, meta = next(iter(json.loads(lines[i]).items()))
            ids.append(meta.get("_id", ""))
            width = 2 if op in ("index", "create", "update") else 1
            status = self.refuse.get(meta.get("_id", ""))
            silent = silent or meta.get("_id") in self.unanswered
            if status is None:
                forward += lines[i : i + width]
                items.append(None)
            else:
                self.refused.append(meta["_id"])
                error = {"type": _KINDS.get(status, "exception"), "reason": "injected by the test's proxy"}
                items.append(
                    {op: {"_index": meta.get("_index"), "_id": meta["_id"], "status": status, "error": error}}
                )
            i += width
        answered: list[dict[str, Any]] = []
        if forward:
            status, out = self._node(method, target, b"\n".join(forward) + b"\n", headers)
            if status >= 300:
                return status, out
            answered = json.loads(out).get("items", [])
        if silent:
            return None
        it = iter(answered)
        merged = [item if item is not None else next(it) for item in items]
        for action_id, answer in zip(ids, merged, strict=True):
            if action_id in self.lone:  # applied by the node, reported as on one copy
                next(iter(answer.values()))["_shards"] = {"total": 2, "successful": 1, "failed": 1}
        failed = any(next(iter(m.values())).get("status", 200) >= 300 for m in merged)
        return 200, json.dumps({"took": 1, "errors": failed, "items": merged}).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization")
                }
                answer = proxy.handle(self.command, self.path, body, headers)
                if answer is None:
                    self.close_connection = True
                    return
                status, out = answer
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(out)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler
