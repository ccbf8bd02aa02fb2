"""A local HTTP server speaking Amazon Textract's JSON 1.1 wire protocol as botocore sends it, on
127.0.0.1, so boto3 and Ragline's Textract adapter run end to end (real HTTP, SigV4 headers, botocore's
retries and error parsing), reading real text with the offline OCR engine.

``POST /`` with ``X-Amz-Target: Textract.DetectDocumentText`` and ``{"Document": {"Bytes": <base64>}}``
answers as Textract does: ``DocumentMetadata.Pages`` 1 and ``Blocks``: one ``PAGE``, then a ``LINE``
per line the offline recogniser finds (``Text``, ``Confidence`` 0–100, ``Geometry.BoundingBox`` and
``Polygon`` as fractions of the page), each followed by its ``WORD`` blocks. Checked as Textract
checks: a SigV4 ``Authorization`` header (else 400 ``MissingAuthenticationTokenException``, not
verified beyond its shape), a ``Document`` with ``Bytes`` only (else ``InvalidParameterException``),
at most 10 MiB (``DocumentTooLargeException``), a PNG, JPEG, TIFF or PDF by its magic bytes
(``UnsupportedDocumentException``; a PDF of more than one page too, as the synchronous API refuses
it), an image or page that decodes (``BadDocumentException``). A one-page PDF is rendered at 200 dpi
and read like an image. Any other
target is ``UnknownOperationException``. Errors: status 400 (500 for ``InternalServerError``) with
``{"__type": code, "Message": …}``. :meth:`TextractServer.fail` scripts errors for the next requests.
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pypdfium2
import pytest
from PIL import Image

from ragline.adapters.local_models.ocr import RapidOcrRecognizer

REGION = "us-east-1"
SYNC_BYTES = 10 * 1024 * 1024
_AUTHORIZATION = re.compile(r"^AWS4-HMAC-SHA256 Credential=[^/\s]+/\d{8}/[a-z0-9-]+/textract/aws4_request,")
_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"II*\x00", b"MM\x00*", b"%PDF")


class TextractServer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[tuple[str, int]] = []
        self.requests: list[dict[str, Any]] = []
        self._ocr = RapidOcrRecognizer()
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def fail(self, code: str, *, times: int = 1, status: int | None = None) -> None:
        """Answer the next ``times`` requests with ``code`` (status 400; 500 for InternalServerError)."""
        with self._lock:
            self._faults += [(code, status or (500 if code == "InternalServerError" else 400))] * times

    def reset(self) -> None:
        with self._lock:
            self._faults.clear()
            self.requests.clear()

    def client(self, *, max_attempts: int = 3) -> Any:
        import boto3
        from botocore.config import Config

        return boto3.client(
            "textract",
            endpoint_url=self.url,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            config=Config(retries={"mode": "standard", "max_attempts": max_attempts}, connect_timeout=2),
        )

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def answer(self, target: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append({"target": target, "bytes": len(body)})
            fault = self._faults.pop(0) if self._faults else None
        if not _AUTHORIZATION.match(headers.get("authorization", "")):
            return _error("MissingAuthenticationTokenException", "Missing Authentication Token")
        if fault is not None:
            return _error(fault[0], "scripted failure", fault[1])
        if target != "Textract.DetectDocumentText":
            return _error("UnknownOperationException", f"unknown operation {target}")
        try:
            document = json.loads(body)["Document"]
            assert set(document) == {"Bytes"}
            data = base64.b64decode(document["Bytes"], validate=True)
        except (ValueError, KeyError, TypeError, AssertionError):
            return _error("InvalidParameterException", "Request has invalid parameters")
        if len(data) > SYNC_BYTES:
            return _error("DocumentTooLargeException", "Document is too large")
        if not data.startswith(_MAGIC):
            return _error("UnsupportedDocumentException", "Request has unsupported document format")
        try:
            if data.startswith(b"%PDF"):
                pdf = pypdfium2.PdfDocument(data)
                if len(pdf) != 1:
                    return _error("UnsupportedDocumentException", "Request has unsupported document format")
                out = io.BytesIO()
                pdf[0].render(scale=200 / 72, grayscale=True).to_pil().save(out, "PNG")
                data = out.getvalue()
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
            lines = self._ocr.recognize(data)
        except Exception:
            return _error("BadDocumentException", "Unable to get the document from the bytes")
        return 200, {"DocumentMetadata": {"Pages": 1}, "Blocks": _blocks(lines, width, height),
                     "DetectDocumentTextModelVersion": "1.0"}  # fmt: skip


def _blocks(lines: list[Any], width: int, height: int) -> list[dict[str, Any]]:
    def geometry(left: float, top: float, right: float, bottom: float) -> dict[str, Any]:
        box = {"Width": (right - left) / width, "Height": (bottom - top) / height,
               "Left": left / width, "Top": top / height}  # fmt: skip
        corners = [(left, top), (right, top), (right, bottom), (left, bottom)]
        return {"BoundingBox": box, "Polygon": [{"X": x / width, "Y": y / height} for x, y in corners]}

    page = {"BlockType": "PAGE", "Id": str(uuid.uuid4()), "Geometry": geometry(0, 0, width, height)}
    blocks: list[dict[str, Any]] = [page]
    for line in lines:
        words = []
        for word in line.text.split():  # word boxes share the line's (the adapter reads lines only)
            words.append({"BlockType": "WORD", "Id": str(uuid.uuid4()), "Text": word, "TextType": "PRINTED",
                          "Confidence": 100 * line.confidence,
                          "Geometry": geometry(line.left, line.top, line.right, line.bottom)})  # fmt: skip
        blocks.append({"BlockType": "LINE", "Id": str(uuid.uuid4()), "Text": line.text,
                       "Confidence": 100 * line.confidence,
                       "Geometry": geometry(line.left, line.top, line.right, line.bottom),
                       "Relationships": [{"Type": "CHILD", "Ids": [w["Id"] for w in words]}]})  # fmt: skip
        blocks += words
    page["Relationships"] = [{"Type": "CHILD", "Ids": [b["Id"] for b in blocks if b["BlockType"] == "LINE"]}]
    return blocks


def _error(code: str, message: str, status: int = 400) -> tuple[int, dict[str, Any]]:
    return status, {"__type": code, "Message": message}


class _Handler(BaseHTTPRequestHandler):
    server_state: TextractServer
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, payload = self.server_state.answer(headers.get("x-amz-target", ""), headers, body)
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="session")
def textract_server_session() -> Iterator[TextractServer]:
    server = TextractServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def textract_server(textract_server_session: TextractServer) -> TextractServer:
    """The session's Textract stand-in with no scripted faults and an empty request log."""
    textract_server_session.reset()
    return textract_server_session
