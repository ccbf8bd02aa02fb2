"""Whatever the bytes, ``parse_document`` returns or raises a Ragline error: never a library's.

A fuzz property per supported extension, over random bytes and over small valid files truncated and
mutated, asserts both that nothing escapes and that no parser leans on ``parse_document``'s safety
net (an ``UnreadableDocument`` with ``error_type``): every failure a parser can meet is mapped where
it happens, with a reason. The escapes fuzzing found are pinned as examples below.
"""

from __future__ import annotations

import functools
import io
import struct
import zipfile
import zlib
from collections.abc import Callable

import docx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ragline.documents import SUPPORTED_EXTENSIONS, ParsedDocument, parse_document, parsers
from ragline.documents.limits import ParseBudget
from ragline.documents.page_text import TextLine
from ragline.documents.raw import Parsed
from ragline.errors import (
    DocumentTooLarge,
    RaglineError,
    Throttled,
    UnreadableDocument,
)
from tests.conftest import examples_at_scale
from tests.support.pdf import pdf_document

pytestmark = pytest.mark.unit
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


# -- small valid files ------------------------------------------------------------------------------


def _docx() -> bytes:
    document = docx.Document()
    document.add_heading("Maintenance", level=1)
    document.add_paragraph("Lubricate the chain every 300 km. Wipe off the excess.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "part"
    table.cell(1, 1).text = "chain"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _bare_docx(document_xml: bytes) -> bytes:
    """A zip holding only ``word/document.xml``: the smallest package the parser reads."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("word/document.xml", document_xml)
    return out.getvalue()


def _document_xml(declaration: bytes = b'<?xml version="1.0" encoding="UTF-8"?>') -> bytes:
    body = b"<w:body><w:p><w:r><w:t>Hello there.</w:t></w:r></w:p></w:body>"
    return declaration + b'<w:document xmlns:w="%s">%s</w:document>' % (W.encode(), body)


_HTML = (
    "<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title><script>x()</script></head>"
    "<body><nav>menu</nav><h1>Returns</h1><p>Used bikes &amp; parts: 30 days.</p><pre>code</pre>"
    "<h2>Café</h2><table><tr><td>a</td><td>b</td></tr></table><br>end</body></html>"
)
_MARKDOWN = "# Guide\n\nSoft-wrapped\nprose here.\n\n```\ncode # not a heading\n```\n## Next ##\nMore é."


def _image(fmt: str, **options: object) -> bytes:
    from PIL import Image, ImageDraw

    picture = Image.new("RGB", (48, 24), "white")
    ImageDraw.Draw(picture).text((2, 6), "Hi 7", fill="black")
    out = io.BytesIO()
    picture.save(out, fmt, **options)
    return out.getvalue()


class _Reads:
    """A stand-in OCR engine: the parser's own decoding and bounds run, the model does not (the real
    one is ``tests/unit/documents/test_ocr.py``'s); it checks that what reaches it is a PNG."""

    name = "stand-in"
    reads_files = False

    def recognize(self, image: bytes) -> list[TextLine]:
        assert image.startswith(b"\x89PNG")
        return [TextLine("seen", 0, 0, 10, 10)]


def _docx_with_picture() -> bytes:
    document = docx.Document()
    document.add_paragraph("Before.")
    document.add_picture(io.BytesIO(_image("PNG")))
    document.inline_shapes[0]._inline.docPr.set("descr", "a photo")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def parse(filename: str, data: bytes) -> ParsedDocument:
    return parse_document(filename, data, recognizer=_Reads())


@functools.cache
def seeds() -> dict[str, tuple[bytes, ...]]:
    """Small valid files per supported extension: what the mutations start from."""
    text = ("Lubricate the chain.\nEvery 300 km, café au lait.\n", "Привет, мир.\n")
    html = (_HTML.encode(), _HTML.replace("utf-8", "windows-1252").encode("cp1252"))
    markdown = (_MARKDOWN.encode(), _MARKDOWN.encode("utf-16"))
    return {
        ".txt": (
            text[0].encode(),
            text[0].encode("cp1252"),
            text[1].encode("cp1251"),
            text[1].encode("utf-16-le"),
        ),
        ".md": markdown,
        ".markdown": markdown,
        ".html": html,
        ".htm": html,
        ".pdf": (
            pdf_document([(b"BT /F1 12 Tf 72 720 Td (Hello world) Tj ET", b"")]),
            pdf_document(
                [
                    (zlib.compress(b"BT /F1 12 Tf 72 720 Td (Page one) Tj ET"), b" /Filter /FlateDecode"),
                    (b"BT /F1 12 Tf 72 700 Td [(Page) -250 (two)] TJ ET", b""),
                ]
            ),
        ),
        ".docx": (_docx(), _bare_docx(_document_xml()), _docx_with_picture()),
        ".json": (b'{"bike": {"parts": ["chain", 2.5, null, true]}, "note": "caf\\u00e9"}',),
        ".jsonl": (b'{"q": "a"}\n\n{"r": [1, {"s": 2}]}\n',),
        ".csv": (b'part,interval\nchain,"300 km, dry"\n"say ""hi""",\n,\n',),
        ".png": (_image("PNG"), _image("PNG", optimize=True)),
        ".jpg": (_image("JPEG", quality=80),),
        ".jpeg": (_image("JPEG", progressive=True),),
        ".tif": (_image("TIFF"), _image("TIFF", compression="tiff_lzw")),
        ".tiff": (_image("TIFF", compression="tiff_deflate"),),
        ".webp": (_image("WEBP", lossless=True), _image("WEBP", quality=50)),
    }


# -- mutations ----------------------------------------------------------------------------------------

_TOKENS = (
    b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\xc3", b"<", b">", b"</p>", b"<h1>", b"&#0;", b"{", b"[",
    b'"', b"\\u", b"\n", b"\r", b",", b"# ", b"```", b"obj", b"endobj", b"stream", b"/FlateDecode",
    b"xref", b"%%EOF", b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06", b"<!DOCTYPE x>",
    b'<meta charset="uu">', b'encoding="cp932"', b"\xff" * 4,
)  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, ext: str) -> bytes:
    """One of ``ext``'s seeds with a few bytes flipped, cut, inserted, deleted or copied."""
    data = bytearray(draw(st.sampled_from(seeds()[ext])))
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(("flip", "truncate", "insert", "token", "delete", "copy")))
        at = draw(st.integers(0, len(data)))
        if op == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif op == "truncate":
            del data[at:]
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif op == "token":
            data[at:at] = draw(st.sampled_from(_TOKENS))
        elif op == "delete":
            del data[at : at + draw(st.integers(1, 32))]
        elif op == "copy" and data:
            start = draw(st.integers(0, len(data) - 1))
            data[at:at] = data[start : start + draw(st.integers(1, 64))]
    return bytes(data)


def inputs(ext: str) -> st.SearchStrategy[bytes]:
    return st.one_of(st.binary(max_size=1024), mutated(ext))


def _parses_or_refuses(filename: str, data: bytes) -> None:
    try:
        document = parse(filename, data)
    except RaglineError as exc:
        assert exc.details.get("filename") == filename
        assert "error_type" not in exc.details, f"a parser relied on the safety net: {exc.message}"
        assert len(exc.message) < 2000
    except Exception as exc:  # pragma: no cover - what the property forbids
        pytest.fail(f"{type(exc).__name__} escaped parse_document({filename!r}, {data[:120]!r}): {exc}")
    else:
        assert isinstance(document, ParsedDocument)
        assert all(section.text.strip() for section in document.sections)
        if filename.endswith(".docx"):  # XML holds no NUL: one here would be a picture's mark left behind
            assert not any("\x00" in s.text or "\x00" in s.header for s in document.sections)


# -- the property -------------------------------------------------------------------------------------


def test_every_supported_extension_is_fuzzed() -> None:
    assert set(seeds()) == set(SUPPORTED_EXTENSIONS)
    for ext, files in seeds().items():  # the seeds really are valid
        for data in files:
            assert parse(f"seed{ext}", data).sections, ext


@pytest.mark.parametrize("ext", SUPPORTED_EXTENSIONS)
@settings(
    max_examples=max(50, examples_at_scale() // 4),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_any_bytes_parse_or_raise_a_ragline_error(ext: str, data: st.DataObject) -> None:
    _parses_or_refuses(f"fuzz{ext}", data.draw(inputs(ext), label="bytes"))


# -- escapes fuzzing found, pinned ----------------------------------------------------------------------


def _zip_with_utf8_flag_and_a_name_that_is_not() -> bytes:
    package = bytearray(_bare_docx(_document_xml()))
    package[6:8] = struct.pack("<H", 0x800)  # local header: "the name is UTF-8"
    package[30:35] = b"\xff\xfe\xfd\xfc\xfb"  # …and it is not (the central directory's name is)
    return bytes(package)


def _zip_needing_version(version: int) -> bytes:
    package = bytearray(_bare_docx(_document_xml()))
    central = package.index(b"PK\x01\x02")
    package[central + 6 : central + 8] = struct.pack("<H", version)  # "version needed to extract"
    return bytes(package)


def _zip_with_offsets(header: int | None = None, directory: int | None = None) -> bytes:
    """The bare package with its member's local header offset and/or the end record's offset of the
    central directory replaced (a larger directory offset than the real one makes zipfile shift every
    header offset back: below zero, it seeks before the start)."""
    package = bytearray(_bare_docx(_document_xml()))
    central = package.index(b"PK\x01\x02")
    end = package.rindex(b"PK\x05\x06")
    if header is not None:
        package[central + 42 : central + 46] = struct.pack("<I", header)
    if directory is not None:
        package[end + 16 : end + 20] = struct.pack("<I", directory)
    return bytes(package)


def _declaring(encoding: str) -> bytes:
    return _bare_docx(_document_xml(b'<?xml version="1.0" encoding="%s"?>' % encoding.encode()))


ESCAPES: dict[str, tuple[str, bytes]] = {
    # encoding.py: a <meta charset> naming a codec that is no charset
    "html-charset-bytes-codec": ("a.html", b'<meta charset="uu"><p>hello</p>'),  # LookupError
    "html-charset-hex": ("a.html", b'<meta charset="hex"><p>hello</p>'),
    "html-charset-undefined": ("a.html", b'<meta charset="undefined"><p>hello</p>'),  # UnicodeError
    "html-charset-punycode": ("a.html", b'<meta charset="punycode"><p>hello world</p>'),
    # …or one decoding to lone surrogates, which lxml cannot encode (UnicodeEncodeError)
    "html-charset-unicode-escape": ("a.html", b'<meta charset="unicode_escape"><p>x \\ud800 y</p>'),
    "html-charset-raw-unicode-escape": ("a.html", b'<meta charset="raw_unicode_escape"><p>\\ud800</p>'),
    "html-charset-utf-7": ("a.html", b'<meta charset="utf-7"><p>hello +2AA- world</p>'),
    # docx_text.py: an XML declaration whose encoding expat hands to Python's codecs
    "docx-xml-encoding-bytes-codec": ("a.docx", _declaring("hex")),
    "docx-xml-encoding-multibyte": ("a.docx", _declaring("cp932")),
    "docx-xml-encoding-idna": ("a.docx", _declaring("idna")),
    "docx-xml-encoding-undefined": ("a.docx", _declaring("undefined")),
    # zipped.py: zipfile errors outside the caught set
    "zip-local-name-not-utf8": ("a.docx", _zip_with_utf8_flag_and_a_name_that_is_not()),  # UnicodeDecodeError
    "zip-version-too-new": ("a.docx", _zip_needing_version(84)),  # NotImplementedError
    "zip-negative-seek": ("a.docx", _zip_with_offsets(directory=5000)),  # ValueError
}  # fmt: skip


@pytest.mark.parametrize(("filename", "data"), ESCAPES.values(), ids=ESCAPES.keys())
def test_an_input_that_once_escaped_is_now_mapped_where_it_fails(filename: str, data: bytes) -> None:
    _parses_or_refuses(filename, data)


@given(st.none() | st.integers(0, 2**32 - 1), st.none() | st.integers(0, 2**32 - 1))
@settings(max_examples=50, deadline=None)
@example(header=None, directory=5000)
def test_any_zip_offsets_are_mapped(header: int | None, directory: int | None) -> None:
    _parses_or_refuses("a.docx", _zip_with_offsets(header, directory))


def test_a_bogus_meta_charset_falls_back_to_detection() -> None:
    parsed = parse_document("a.html", b'<meta charset="utf-7"><p>caf\xc3\xa9 +2AA-</p>')
    assert parsed.sections[0].text == "café +2AA-"


# -- the safety net ---------------------------------------------------------------------------------------


def _with_parser(monkeypatch: pytest.MonkeyPatch, ext: str, raise_: Callable[[], BaseException]) -> None:
    def failing(budget: ParseBudget, data: bytes) -> Parsed:
        raise raise_()

    monkeypatch.setitem(parsers._PARSERS, ext, failing)


def test_an_unexpected_parser_exception_is_unreadable_with_its_type_and_a_bounded_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with_parser(monkeypatch, ".txt", lambda: KeyError("x" * 5_000_000))
    with pytest.raises(UnreadableDocument) as caught:
        parse_document("notes.txt", b"hello")
    exc = caught.value
    assert exc.code == "unreadable_document"
    assert exc.details["filename"] == "notes.txt"
    assert exc.details["error_type"] == "KeyError"
    assert "KeyError" in exc.message
    assert len(exc.message) < 400
    assert isinstance(exc.__cause__, KeyError)


def test_a_parser_exception_with_a_broken_str_is_still_unreadable(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    _with_parser(monkeypatch, ".txt", Broken)
    with pytest.raises(UnreadableDocument, match="Broken"):
        parse_document("notes.txt", b"hello")


def test_running_out_of_memory_is_too_large_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_parser(monkeypatch, ".json", MemoryError)
    with pytest.raises(DocumentTooLarge) as caught:
        parse_document("big.json", b"[1]")
    assert caught.value.code == "document_too_large"
    assert caught.value.details["size_bytes"] == 3
    assert caught.value.__context__ is None  # the parser's frames (and what they held) are released


def test_ragline_errors_from_a_parser_pass_through_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    original = Throttled("not a parser's error, but passed through as is")
    _with_parser(monkeypatch, ".csv", lambda: original)
    with pytest.raises(Throttled) as caught:
        parse_document("a.csv", b"a,b")
    assert caught.value is original


def test_base_exceptions_are_not_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_parser(monkeypatch, ".md", KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        parse_document("a.md", b"# hi")
