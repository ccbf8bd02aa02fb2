"""Pictures inside documents: their alt text and captions kept in place, the text OCR reads off a
DOCX's pictures put where each picture stands, and a bad picture costing only itself."""

from __future__ import annotations

import io
from pathlib import Path

import docx
import pytest
from PIL import Image

from ragline.documents import parse_document
from ragline.documents.images import ocr_picture
from ragline.documents.limits import DEFAULT_LIMITS, Deadline, ParseBudget, ParseLimits
from ragline.documents.page_text import TextLine
from ragline.errors import DocumentDeadlineExceeded, Throttled, UnreadableDocument

pytestmark = pytest.mark.unit
SCANS = Path(__file__).parents[2] / "fixtures" / "scans"


class Reads:
    """A stand-in engine: what it read, and how often it was asked."""

    name = "stand-in"
    reads_files = False

    def __init__(self, text: str = "Controller wiring: red to B+", fail: Exception | None = None) -> None:
        self.text, self.fail, self.calls = text, fail, 0

    def recognize(self, image: bytes) -> list[TextLine]:
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        return [TextLine(self.text, 0, 0, 100, 20)]


def png(size: tuple[int, int] = (200, 80)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, "white").save(out, "PNG")
    return out.getvalue()


def document_with(*pictures: bytes, alt: str = "") -> bytes:
    d = docx.Document()
    d.add_heading("Wiring", 1)
    d.add_paragraph("Before the pictures.")
    for picture in pictures:
        d.add_picture(io.BytesIO(picture))
        if alt:
            d.inline_shapes[-1]._inline.docPr.set("descr", alt)
    d.add_paragraph("After the pictures.")
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def test_html_alt_text_and_figure_captions_stay_where_the_image_is() -> None:
    html = (
        b"<h1>Wiring</h1><p>See below.</p><figure><img src='a.png' alt='Wiring diagram of the Volt 2'>"
        b"<figcaption>Figure 2: Controller wiring</figcaption></figure><img src='spacer.gif' alt=''>"
        b"<table><tr><th>Part</th><th>Photo</th></tr>"
        b"<tr><td>Chain</td><td><img alt='a KMC X11 chain'></td></tr></table>"
    )
    prose, table = parse_document("w.html", html).sections
    assert prose.text == "See below.\n[Image: Wiring diagram of the Volt 2]\nFigure 2: Controller wiring"
    assert table.text == "| Chain | [Image: a KMC X11 chain] |"


def test_a_docx_pictures_alt_text_and_ocr_text_stand_where_it_is() -> None:
    engine = Reads()
    parsed = parse_document("w.docx", document_with(png(), alt="The controller"), recognizer=engine)
    text = " ".join(parsed.sections[0].text.split())
    assert text == (
        "Before the pictures. [Image: The controller] [Image text: Controller wiring: red to B+]"
        " After the pictures."
    )
    assert engine.calls == 1


def test_without_an_engine_only_the_alt_text_is_kept_and_no_mark_is_left() -> None:
    parsed = parse_document("w.docx", document_with(png(), png(), alt="A photo"))
    assert " ".join(parsed.sections[0].text.split()) == (
        "Before the pictures. [Image: A photo] [Image: A photo] After the pictures."
    )
    assert "\x00" not in parsed.sections[0].text


def test_tiny_pictures_are_not_read_and_a_bad_one_costs_only_itself() -> None:
    engine = Reads()
    parsed = parse_document("w.docx", document_with(png((16, 16))), recognizer=engine)
    assert engine.calls == 0 and "Image text" not in parsed.sections[0].text
    broken = Reads(fail=UnreadableDocument("no"))
    parsed = parse_document("w.docx", document_with(png()), recognizer=broken)
    assert broken.calls == 1 and " ".join(parsed.sections[0].text.split()) == (
        "Before the pictures. After the pictures."
    )


def test_pictures_count_against_the_ocr_page_limit_and_the_rest_are_not_read() -> None:
    engine = Reads()
    three = document_with(png((200, 80)), png((210, 80)), png((220, 80)))  # three distinct parts
    parsed = parse_document("w.docx", three, recognizer=engine, limits=ParseLimits(max_ocr_pages=2))
    assert engine.calls == 2 and parsed.sections[0].text.count("[Image text:") == 2


def test_a_transient_engine_error_and_the_deadline_still_fail_the_document() -> None:
    with pytest.raises(Throttled):
        parse_document("w.docx", document_with(png()), recognizer=Reads(fail=Throttled("slow down")))
    clock = [0.0]

    class Slow(Reads):
        def recognize(self, image: bytes) -> list[TextLine]:
            clock[0] += 100
            return super().recognize(image)

    with pytest.raises(DocumentDeadlineExceeded):
        parse_document(
            "w.docx",
            document_with(png((200, 80)), png((210, 80))),
            recognizer=Slow(),
            deadline=Deadline(50, clock=lambda: clock[0]),
        )


def test_a_picture_read_past_the_deadline_raises_it_at_once() -> None:
    clock = [100.0]
    budget = ParseBudget("w.docx", DEFAULT_LIMITS, Deadline(50, clock=lambda: clock[0] - 100), Reads())
    assert ocr_picture(budget, png()) != ""  # within the deadline: read
    clock[0] += 100
    with pytest.raises(DocumentDeadlineExceeded):
        ocr_picture(budget, png())


def pdf_with(*pictures: bytes) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "If the display shows the message below, reseat the battery and try again.")
    for picture in pictures:
        pdf.image(io.BytesIO(picture), w=60)
    return bytes(pdf.output())


def test_a_pictures_text_follows_its_pages_text_in_a_text_layer_pdf() -> None:
    # Given a PDF page with a text layer, one picture of text and one icon
    engine = Reads("ERROR 4012: battery not detected")
    parsed = parse_document("manual.pdf", pdf_with(png(), png((16, 16))), recognizer=engine)
    # Then the picture is read (the icon is not even decoded) and its text is on its page, after the text
    assert engine.calls == 1
    assert [(s.page, s.text) for s in parsed.sections] == [
        (1, "If the display shows the message below, reseat the battery and try again."),
        (1, "[Image text: ERROR 4012: battery not detected]"),
    ]
    # and without an engine the page is its text alone
    assert [s.text for s in parse_document("manual.pdf", pdf_with(png())).sections] == [
        parsed.sections[0].text
    ]


def test_a_page_reads_at_most_eight_pictures_and_a_bad_one_costs_only_itself() -> None:
    engine = Reads()
    ten = pdf_with(*(png((200 + i, 80)) for i in range(10)))
    parsed = parse_document("many.pdf", ten, recognizer=engine)
    assert engine.calls == 8 and parsed.sections[1].text.count("[Image text:") == 8
    broken = Reads(fail=UnreadableDocument("no"))
    parsed = parse_document("bad.pdf", pdf_with(png()), recognizer=broken)
    assert broken.calls == 1 and len(parsed.sections) == 1
