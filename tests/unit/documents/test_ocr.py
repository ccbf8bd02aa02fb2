"""Images and scanned PDF pages read by the offline OCR (PP-OCRv4 through rapidocr), and bounded.

The scans are rendered from texts written for them (``tests/fixtures/scans/render.py``): the
handbook as two A4 pages scanned at 150 dpi (JPEG, no text layer), the error dialog as a screenshot.
"""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image
from pypdf import PdfReader, PdfWriter
from rapidfuzz.distance import Levenshtein

from ragline.adapters.local_models.ocr import RapidOcrRecognizer
from ragline.documents import parse_document
from ragline.documents.limits import DEFAULT_LIMITS, Deadline, ParseLimits
from ragline.documents.page_text import TextLine
from ragline.errors import (
    DocumentDeadlineExceeded,
    DocumentTooLarge,
    EmptyDocument,
    UnreadableDocument,
    UnsupportedDocument,
)
from tests.support.pdf import pdf_document

pytestmark = pytest.mark.unit
SCANS = Path(__file__).parents[2] / "fixtures" / "scans"


@pytest.fixture(scope="module")
def ocr() -> RapidOcrRecognizer:
    return RapidOcrRecognizer()


def words(text: str) -> str:
    return " ".join(text.split())


def cer(got: str, source: str) -> float:
    """Character error rate: edits (spaces count) over the source's characters, whitespace collapsed."""
    return Levenshtein.distance(words(got), words(source)) / len(words(source))


def test_a_scanned_pdf_at_150_dpi_is_read_page_by_page_within_3_percent_cer(ocr: RapidOcrRecognizer) -> None:
    parsed = parse_document("handbook.pdf", (SCANS / "handbook-150dpi.pdf").read_bytes(), recognizer=ocr)
    assert parsed.pages == 2 and [s.page for s in parsed.sections] == [1, 2]
    got = "\n".join(s.text for s in parsed.sections)
    assert cer(got, (SCANS / "handbook.txt").read_text()) <= 0.03
    assert "27 days of paid holiday" in words(got)


def test_a_screenshot_is_read_line_by_line(ocr: RapidOcrRecognizer) -> None:
    parsed = parse_document("dialog.PNG", (SCANS / "error-dialog.png").read_bytes(), recognizer=ocr)
    text = parsed.sections[0].text
    assert parsed.pages == 1 and parsed.sections[0].page is None
    for source_line in (SCANS / "error-dialog.txt").read_text().splitlines():
        assert cer(next(ln for ln in text.splitlines() if ln[:6] == source_line[:6]), source_line) <= 0.03


@pytest.mark.parametrize("fmt,ext", [("JPEG", ".jpg"), ("WEBP", ".webp"), ("TIFF", ".tiff")])
def test_each_image_format_is_read(ocr: RapidOcrRecognizer, fmt: str, ext: str) -> None:
    out = io.BytesIO()
    Image.open(SCANS / "error-dialog.png").convert("RGB").save(out, fmt, quality=90)
    parsed = parse_document(f"dialog{ext}", out.getvalue(), recognizer=ocr)
    assert "NW-4021" in parsed.sections[0].text


def test_a_tiffs_pages_are_its_frames(ocr: RapidOcrRecognizer) -> None:
    dialog = Image.open(SCANS / "error-dialog.png").convert("L")
    blank = Image.new("L", dialog.size, 255)
    out = io.BytesIO()
    dialog.save(out, "TIFF", save_all=True, append_images=[blank, dialog])
    parsed = parse_document("fax.tif", out.getvalue(), recognizer=ocr)
    assert parsed.pages == 3 and [s.page for s in parsed.sections] == [1, 3]


class Counting:
    def __init__(self, inner: RapidOcrRecognizer) -> None:
        self.inner, self.name, self.reads_files, self.calls = inner, inner.name, inner.reads_files, 0

    def recognize(self, image: bytes) -> list[TextLine]:
        self.calls += 1
        return self.inner.recognize(image)


def test_only_the_pages_without_a_text_layer_are_read_by_ocr(ocr: RapidOcrRecognizer) -> None:
    typed = pdf_document([(b"BT /F1 12 Tf 72 700 Td (Typed page about the spring sale.) Tj ET", b"")])
    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(typed)))
    writer.append(PdfReader(SCANS / "handbook-150dpi.pdf"), pages=[1])
    out = io.BytesIO()
    writer.write(out)
    engine = Counting(ocr)
    parsed = parse_document("mixed.pdf", out.getvalue(), recognizer=engine)
    assert [s.page for s in parsed.sections] == [1, 2] and engine.calls == 1
    assert parsed.sections[0].text == "Typed page about the spring sale."
    assert "Notice periods" in parsed.sections[1].text


class Reads:
    name = "stand-in"
    reads_files = False

    def __init__(self) -> None:
        self.calls = 0

    def recognize(self, image: bytes) -> list[TextLine]:
        self.calls += 1
        return [TextLine("The scanned body of the page.", 10, 10, 400, 30)]


@pytest.mark.parametrize("layer,read", [("(p. 3)", True), ("(Page 3 of 12, draft copy)", False)])
def test_a_text_layer_under_16_visible_characters_is_a_scan(layer: str, read: bool) -> None:
    pdf = pdf_document([(b"BT /F1 12 Tf 72 700 Td " + layer.encode() + b" Tj ET", b"")])
    engine = Reads()
    parsed = parse_document("stamped.pdf", pdf, recognizer=engine)
    assert engine.calls == int(read)
    assert parsed.sections[0].text == ("The scanned body of the page." if read else layer[1:-1])


def test_without_an_ocr_engine_images_are_unsupported_and_scans_empty_saying_why() -> None:
    with pytest.raises(UnsupportedDocument, match="OCR, which this deployment has turned off"):
        parse_document("dialog.png", (SCANS / "error-dialog.png").read_bytes())
    with pytest.raises(EmptyDocument, match="scanned pages need OCR, which this deployment has turned off"):
        parse_document("handbook.pdf", (SCANS / "handbook-150dpi.pdf").read_bytes())


def png_declaring(width: int, height: int) -> bytes:
    """A valid PNG header declaring ``width`` × ``height`` pixels, with a few bytes of data."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0" * 64))
        + chunk(b"IEND", b"")
    )


class Refuses:
    name = "refuses"
    reads_files = False

    def recognize(self, image: bytes) -> list[TextLine]:
        raise AssertionError("an image over the limits must not reach the engine")


@pytest.mark.parametrize("size", [(100_000, 100_000), (20_000, 3_000), (8_000, 6_251)])
def test_an_image_declaring_too_many_pixels_is_refused_before_it_is_decoded(size: tuple[int, int]) -> None:
    assert DEFAULT_LIMITS.max_image_pixels == 50_000_000 and DEFAULT_LIMITS.max_ocr_pages == 500  # README
    with pytest.raises(DocumentTooLarge, match="pixels"):
        parse_document("bomb.png", png_declaring(*size), recognizer=Refuses())


def test_too_many_pages_to_read_by_ocr_are_refused_before_any_is_read() -> None:
    frames = [Image.new("L", (40, 40), 255) for _ in range(4)]
    out = io.BytesIO()
    frames[0].save(out, "TIFF", save_all=True, append_images=frames[1:])
    with pytest.raises(DocumentTooLarge, match="4 pages to read by OCR, over the limit of 3"):
        parse_document("fax.tiff", out.getvalue(), recognizer=Refuses(), limits=ParseLimits(max_ocr_pages=3))
    scanned = (SCANS / "handbook-150dpi.pdf").read_bytes()
    with pytest.raises(DocumentTooLarge, match="2 pages to read by OCR, over the limit of 1"):
        parse_document("h.pdf", scanned, recognizer=Refuses(), limits=ParseLimits(max_ocr_pages=1))


def test_a_corrupt_image_is_unreadable_and_names_why() -> None:
    good = (SCANS / "error-dialog.png").read_bytes()
    with pytest.raises(UnreadableDocument, match="not a PNG, JPEG, TIFF or WebP"):
        parse_document("x.png", b"GIF89a" + good[6:], recognizer=Refuses())
    with pytest.raises(UnreadableDocument, match="image data is corrupt"):
        parse_document("x.png", good[: len(good) // 2], recognizer=Refuses())


class Slow:
    """Each page moves a fake clock past the deadline."""

    name = "slow"
    reads_files = False

    def __init__(self, clock: list[float]) -> None:
        self.clock, self.pages = clock, 0

    def recognize(self, image: bytes) -> list[TextLine]:
        self.pages += 1
        self.clock[0] += 100
        return []


def test_the_deadline_is_checked_between_ocr_pages() -> None:
    clock = [0.0]
    engine = Slow(clock)
    with pytest.raises(DocumentDeadlineExceeded):
        parse_document(
            "handbook.pdf",
            (SCANS / "handbook-150dpi.pdf").read_bytes(),
            recognizer=engine,
            deadline=Deadline(50, clock=lambda: clock[0]),
        )
    assert engine.pages == 1
