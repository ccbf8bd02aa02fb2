"""Minimal valid PDFs (correct xref) for parser tests and the hostile-file corpus."""

from __future__ import annotations

import io
from collections.abc import Sequence

_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
_PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >>%s >>"


def pdf_document(pages: Sequence[tuple[bytes, bytes]]) -> bytes:
    """One Helvetica page per ``(content stream, extra dictionary entries)``, e.g. ``b" /Filter …"``."""
    n = len(pages)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids ["
        + b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(n))
        + b"] /Count %d >>" % n,
        _FONT,
    ]
    for i, (stream, extra) in enumerate(pages):
        objects.append(_PAGE % b"" + b" /Contents %d 0 R >>" % (5 + 2 * i))
        objects.append(_stream(stream, extra))
    return _file(objects)


def pdf_with_form(form: bytes, extra: bytes) -> bytes:
    """One page whose content only draws a form XObject (with a font) of stream ``form``."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        _FONT,
        _PAGE % b" /XObject << /X1 6 0 R >>" + b" /Contents 5 0 R >>",
        _stream(b"q /X1 Do Q", b""),
        _stream(form, b" /Type /XObject /Subtype /Form /BBox [0 0 612 792]"
                b" /Resources << /Font << /F1 3 0 R >> >>" + extra),
    ]  # fmt: skip
    return _file(objects)


def pdf_of_repeated_page(pages: int, *, per_node: int = 1000) -> bytes:
    """A page tree of ``pages`` leaves, ``per_node`` to an intermediate node, every leaf the same
    one-line page object: a 200,000-page PDF in about a megabyte."""
    nodes = -(-pages // per_node)
    first_node = 6
    kids = b" ".join(b"%d 0 R" % (first_node + i) for i in range(nodes))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
        _FONT,
        _PAGE % b"" + b" /Contents 5 0 R >>",
        _stream(b"BT /F1 12 Tf 72 720 Td (The same page again.) Tj ET", b""),
    ]
    for i in range(nodes):
        count = min(per_node, pages - i * per_node)
        objects.append(b"<< /Type /Pages /Parent 2 0 R /Kids [%s] /Count %d >>" % (b"4 0 R " * count, count))
    return _file(objects)


def _stream(data: bytes, extra: bytes) -> bytes:
    return b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def _file(objects: Sequence[bytes]) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % offset for offset in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()
