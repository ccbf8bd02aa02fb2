"""A local stand-in for an OpenSearch Serverless vector-search collection: an HTTP proxy on 127.0.0.1
in front of the local OpenSearch node that refuses what a collection refuses and delays visibility
the way a collection does (docs/decisions.md, "What AOSS vector collections refuse …").

Refused, with OpenSearch's error shape (the reasons are AWS's where AWS published them):

- APIs a collection does not expose (``_refresh``, ``_delete_by_query``, ``_update_by_query``,
  ``_search/scroll``, ``_flush``, ``_forcemerge``, ``_reindex``, cluster and node APIs): 404;
- a client-chosen document id, on ``_doc/<id>``, ``_create/<id>``, ``_update/<id>`` or a ``_bulk``
  ``index``/``create`` action: 400 ``illegal_argument_exception`` "Document ID is not supported in
  create/index operation request" (per bulk item, as the service answers); ``update`` actions too;
- ``version``, ``version_type``, ``if_seq_no``, ``if_primary_term`` (URL or bulk action): 400;
- ``refresh=true``/``wait_for`` on writes: 400 ``status_exception``;
- index settings a collection fixes itself (``number_of_shards``, ``number_of_replicas``,
  ``refresh_interval``) and the Lucene or NMSLIB engine: 400.

Visibility: indexes are created on the node with ``refresh_interval: -1`` and the proxy refreshes
them itself every ``refresh_ms`` (``pause``/``resume``/``refresh_now`` for tests). The node here has no
working Faiss library, so a ``faiss`` field is created as ``lucene`` on the node (same cosine score).
With ``require_sigv4`` it answers 403 to a request not signed for the ``aoss`` service.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support import faiss_stand_in

DOC_ID_REFUSED = "Document ID is not supported in create/index operation request"
UNSUPPORTED = {"_refresh", "_flush", "_forcemerge", "_delete_by_query", "_update_by_query", "_reindex",
               "_cluster", "_nodes", "_tasks", "_stats", "_open", "_close", "_shrink", "_split", "_clone",
               "_termvectors", "_mtermvectors", "_scripts", "_snapshot", "_rollover", "scroll"}  # fmt: skip
VERSION_PARAMS = {"version", "version_type", "if_seq_no", "if_primary_term"}
FIXED_SETTINGS = {"number_of_shards", "number_of_replicas", "refresh_interval"}


def error_body(status: int, kind: str, reason: str) -> dict[str, Any]:
    return {"error": {"root_cause": [{"type": kind, "reason": reason}], "type": kind, "reason": reason},
            "status": status}  # fmt: skip


class Refused(Exception):
    def __init__(self, status: int, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.status, self.kind, self.reason = status, kind, reason


class AossProxy:
    def __init__(self, node_url: str, *, refresh_ms: int = 1000, require_sigv4: bool = False) -> None:
        parts = urlsplit(node_url)
        self.node = (parts.hostname or "127.0.0.1", parts.port or 9200)
        self.refresh_ms = refresh_ms
        self.require_sigv4 = require_sigv4
        self.indexes: set[str] = set()
        self.refused: list[tuple[str, str, str]] = []
        self.refuse_similarity = False
        """Refuse an index's custom ``similarity`` (undocumented for collections: the mode must cope)."""
        self._lock = threading.Lock()
        self._paused = threading.Event()
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> AossProxy:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        threading.Thread(target=self._refresher, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()

    def pause(self) -> None:
        """No scheduled refresh until :meth:`resume` (writes stay invisible)."""
        self._paused.set()

    def resume(self) -> None:
        self._paused.clear()

    def refresh_now(self) -> None:
        with self._lock:
            names = ",".join(sorted(self.indexes))
        if names:
            self._node("POST", f"/{names}/_refresh?ignore_unavailable=true", b"", {})

    def _refresher(self) -> None:
        while not self._stop.wait(self.refresh_ms / 1000):
            if not self._paused.is_set():
                with contextlib.suppress(OSError):
                    self.refresh_now()

    def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        """One request through the proxy, as a client sends it."""
        conn = http.client.HTTPConnection("127.0.0.1", self._server.server_address[1], timeout=60)
        try:
            conn.request(method, path, body=body or None, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    # -- forwarding ---------------------------------------------------------------------------
    def _node(self, method: str, target: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection(*self.node, timeout=60)
        try:
            conn.request(method, target, body=body or None, headers=headers)
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def handle(self, method: str, target: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        parts = urlsplit(target)
        segments = [s for s in parts.path.split("/") if s]
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        if self.require_sigv4 and "/aoss/aws4_request" not in headers.get("Authorization", ""):
            raise Refused(403, "security_exception", "request not signed for the aoss service")
        if (not segments and method == "GET") or UNSUPPORTED & set(segments):
            raise Refused(
                404, "illegal_argument_exception", f"{parts.path} is not supported by OpenSearch Serverless"
            )
        if VERSION_PARAMS & set(params):
            raise Refused(400, "illegal_argument_exception", "versioned operations are not supported")
        if params.get("refresh") in ("", "true", "wait_for"):
            raise Refused(
                400, "status_exception", f"{params['refresh'] or 'true'} refresh policy is not supported"
            )
        if len(segments) == 3 and segments[1] in ("_doc", "_create", "_update") and method in ("PUT", "POST"):
            raise Refused(400, "illegal_argument_exception", DOC_ID_REFUSED)
        if len(segments) == 1 and method == "PUT" and not segments[0].startswith("_"):
            return self._create_index(segments[0], target, body, headers)
        if segments and segments[-1] == "_bulk":
            return self._bulk(target, body, headers)
        return self._node(method, target, body, headers)

    def _create_index(
        self, name: str, target: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        spec = json.loads(body or b"{}")
        settings = spec.setdefault("settings", {})
        flat = {**settings, **settings.get("index", {})}
        for key in FIXED_SETTINGS:
            if key in flat or f"index.{key}" in flat:
                raise Refused(400, "illegal_argument_exception", f"setting [index.{key}] is not supported")
        if self.refuse_similarity and "similarity" in flat:
            raise Refused(400, "illegal_argument_exception", "setting [index.similarity] is not supported")
        for field in spec.get("mappings", {}).get("properties", {}).values():
            method = field.get("method") if field.get("type") == "knn_vector" else None
            if method is not None and method.get("engine", "nmslib") in ("lucene", "nmslib"):
                raise Refused(
                    400, "illegal_argument_exception", f"engine [{method.get('engine')}] is not supported"
                )
        faiss_stand_in.as_lucene(spec)  # the node's stand-in for faiss (see the module docstring)
        settings.setdefault("index", {}).update({"refresh_interval": "-1", "number_of_replicas": 0})
        status, out = self._node(
            "PUT", target, json.dumps(spec).encode(), {"Content-Type": "application/json"}
        )
        if status < 300:
            with self._lock:
                self.indexes.add(name)
        return status, out

    def _bulk(self, target: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        lines = [ln for ln in body.split(b"\n") if ln.strip()]
        forward: list[bytes] = []
        items: list[dict[str, Any] | None] = []
        i = 0
        while i < len(lines):
            action = json.loads(lines[i])
            op, meta = next(iter(action.items()))
            has_source = op in ("index", "create", "update")
            reason = None
            if (op in ("index", "create") and "_id" in meta) or op == "update":
                reason = DOC_ID_REFUSED
            elif VERSION_PARAMS & set(meta):
                reason = "versioned operations are not supported"
            if reason:
                self.refused.append(("POST", "_bulk", reason))
                error = {"type": "illegal_argument_exception", "reason": reason}
                items.append({op: {"_index": meta.get("_index"), "status": 400, "error": error}})
            else:
                forward += lines[i : i + 1 + has_source]
                items.append(None)
            i += 1 + has_source
        answered: list[dict[str, Any]] = []
        if forward:
            status, out = self._node(
                "POST", target, b"\n".join(forward) + b"\n", {"Content-Type": "application/x-ndjson"}
            )
            if status >= 300:
                return status, out
            answered = json.loads(out).get("items", [])
        it = iter(answered)
        merged = [item if item is not None else next(it) for item in items]
        errors = any(next(iter(m.values())).get("status", 200) >= 300 for m in merged)
        return 200, json.dumps({"took": 1, "errors": errors, "items": merged}).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization")
                }
                try:
                    status, out = proxy.handle(self.command, self.path, body, headers)
                except Refused as exc:
                    proxy.refused.append((self.command, self.path, exc.reason))
                    status, out = (
                        exc.status,
                        json.dumps(error_body(exc.status, exc.kind, exc.reason)).encode(),
                    )
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
