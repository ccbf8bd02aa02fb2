"""A stand-in for the X-Ray daemon Lambda runs beside every traced function: it keeps the segment
documents the X-Ray SDK sends over UDP (one per datagram: a JSON header ``{"format":"json",
"version":1}``, a newline, the document), so the rehearsal can check that each function's calls
joined the trace of the invocation that made them."""

from __future__ import annotations

import json
import secrets
import socket
import threading
import time
from typing import Any

HEADER = {"format": "json", "version": 1}


def new_trace_header() -> tuple[str, str]:
    """A sampled X-Ray trace header as API Gateway starts one, and its trace id."""
    trace_id = f"1-{int(time.time()):08x}-{secrets.token_hex(12)}"
    return f"Root={trace_id};Parent={secrets.token_hex(8)};Sampled=1", trace_id


class XRayDaemon:
    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.documents: list[dict[str, Any]] = []
        self.malformed: list[bytes] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                data = self.sock.recv(65_536)
            except OSError:  # closed
                return
            header, _, body = data.partition(b"\n")
            with self._lock:
                try:
                    assert json.loads(header) == HEADER
                    self.documents.append(json.loads(body))
                except (AssertionError, ValueError):
                    self.malformed.append(data)

    def of_trace(self, trace_ids: set[str]) -> list[dict[str, Any]]:
        """The documents received for these traces (subsegments, nested ones flattened in)."""
        with self._lock:
            found = [d for d in self.documents if d.get("trace_id") in trace_ids]
        flat: list[dict[str, Any]] = []
        while found:
            doc = found.pop()
            flat.append(doc)
            found.extend(doc.get("subsegments", []))
        return flat

    def raw(self) -> str:
        with self._lock:
            return json.dumps(self.documents)

    def close(self) -> None:
        self.sock.close()
