"""Parsing and chunking stay bounded on adversarial input: linear work, capped expansion, a deadline.

Inputs are sized so that the old quadratic code would run for hours; each call runs under a CPU
budget two orders of magnitude above what it needs, so a regression fails fast instead of hanging.
Expansion is asserted on what was read or allocated, the deadline on how much work ran past it.
"""

from __future__ import annotations

import io
import signal
import tracemalloc
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType

import pytest

from ragline.documents import (
    ParsedDocument,
    Section,
    chunk_document,
    chunker,
    parse_document,
    split_sentences,
)
from ragline.documents.docx_body import BodyText
from ragline.documents.limits import DEFAULT_LIMITS, Deadline, ParseBudget, ParseLimits
from ragline.errors import DocumentDeadlineExceeded, DocumentTooLarge, EmptyDocument, UnreadableDocument
from tests.support.pdf import pdf_document, pdf_of_repeated_page, pdf_with_form

pytestmark = pytest.mark.unit
MiB = 1024 * 1024
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


class CpBudgetExceeded(Exception):
    pass


@contextmanager
def cpu_budget(seconds: float) -> Iterator[None]:
    """Fail (not hang) if the block uses more than ``seconds`` of CPU time."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise CpBudgetExceeded(f"over {seconds} s of CPU: not linear")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def docx(
    body: bytes, *, styles: bytes = b"", extra: Sequence[tuple[str, bytes]] = (), document: bytes = b""
) -> bytes:
    """A minimal DOCX: ``body`` inside ``w:body`` (or a whole ``document``); ``styles`` the
    ``w:styles`` children; ``extra`` more members."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(
            "_rels/.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/officeDocument" Target="word/document.xml"/></Relationships>',
        )
        z.writestr(
            "word/_rels/document.xml.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            '<Relationship Id="r1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            'relationships/styles" Target="styles.xml"/></Relationships>',
        )
        z.writestr("word/styles.xml", f'<w:styles xmlns:w="{W}">'.encode() + styles + b"</w:styles>")
        z.writestr(
            "word/document.xml",
            document or f'<w:document xmlns:w="{W}"><w:body>'.encode() + body + b"</w:body></w:document>",
        )
        for name, data in extra:
            z.writestr(name, data)
    return out.getvalue()


HEADING_STYLES = (
    b'<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>'
    b'<w:style w:type="paragraph" w:styleId="H1"><w:name w:val="heading 1"/></w:style>'
)


def para(text: str, style: str = "") -> bytes:
    props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f"<w:p>{props}<w:r><w:t>{text}</w:t></w:r></w:p>".encode()


# ------------------------------------------------------------------------- item 5: linear parsing


@pytest.mark.parametrize("filename", ["bangs.txt", "bangs.md", "bangs.html"])
def test_given_long_runs_of_bangs_when_parsed_and_chunked_then_linear(filename: str) -> None:
    data = (b"!" * 100_000 + b" ") * 10  # the old splitter: 19 s for 10k characters, ~hours here

    with cpu_budget(30):
        doc = parse_document(filename, data)
        chunks = chunk_document(doc, document_id="d", tokenizer=WhitespaceCounter())

    assert sum(c.text.count("!") for c in chunks) >= 1_000_000


def test_given_runs_of_spaces_and_punctuation_when_split_then_sentences_are_unchanged() -> None:
    text = "Stop!" + " " * 200_000 + "Go on." + "?" * 200_000 + " Then " + '!"' * 100_000 + " End."

    with cpu_budget(10):
        sentences = split_sentences(text)

    assert sentences == ["Stop!", "Go on." + "?" * 200_000, "Then " + '!"' * 100_000, "End."]


def test_given_a_markdown_heading_of_160k_spaces_when_parsed_then_linear_and_titled() -> None:
    data = b"# Guide" + b" " * 160_000 + b"Part ##" + b" " * 160_000 + b"\nBody text.\n## C#\nSharp."

    with cpu_budget(10):
        doc = parse_document("spaces.md", data)

    assert [(s.heading_path, s.text) for s in doc.sections] == [
        (("Guide Part",), "Body text."),
        (("Guide Part", "C#"), "Sharp."),
    ]


def test_given_300k_paragraphs_when_a_docx_is_parsed_then_styles_are_looked_up_once_per_style() -> None:
    class CountingStyles(dict[str, str]):
        lookups = 0

        def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
            CountingStyles.lookups += 1
            return super().get(key, default)

    body = BodyText(
        ParseBudget("d.docx", DEFAULT_LIMITS, Deadline(60)), CountingStyles(H1="heading 1"), "Normal"
    )
    for i in range(300_000):
        body.start(f"{W} p", {})
        if i % 1000 == 0:
            body.start(f"{W} pPr", {})
            body.start(f"{W} pStyle", {f"{W} val": "H1"})
            body.end(f"{W} pStyle")
            body.end(f"{W} pPr")
        body.end(f"{W} p")

    assert CountingStyles.lookups == 1  # the old parser scanned every style, per paragraph
    assert body.finish() == []


def test_given_300k_empty_paragraphs_when_a_docx_is_parsed_then_empty_quickly() -> None:
    data = docx(b"<w:p/>" * 300_000, styles=HEADING_STYLES)  # 39 KB zipped; took 6 minutes

    with cpu_budget(30), pytest.raises(EmptyDocument):
        parse_document("blank.docx", data)


def test_given_docx_headings_tables_and_merged_cells_when_parsed_then_structure_is_kept() -> None:
    row = "<w:tr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr>"
    restart = '<w:tcPr><w:vMerge w:val="restart"/></w:tcPr>' + para("Region").decode()
    table = "<w:tbl>{}</w:tbl>".format(
        row.format(restart, para("North").decode())
        + row.format("<w:tcPr><w:vMerge/></w:tcPr><w:p/>", para("South").decode())
    )
    fallback = '<mc:Fallback xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
    body = (
        para("Intro")
        + para("Leave", "H1")
        + b'<w:p><w:r><w:t xml:space="preserve">Take </w:t><w:tab/><w:t>25 days</w:t></w:r>'
        + b"<w:del><w:r><w:delText>30 days</w:delText></w:r></w:del>"
        + f"<w:r>{fallback}<w:t>copy</w:t></mc:Fallback></w:r></w:p>".encode()
        + table.encode()
    )

    doc = parse_document("h.docx", docx(body, styles=HEADING_STYLES))

    assert [(s.heading_path, s.header, s.text) for s in doc.sections] == [
        ((), "", "Intro"),
        (("Leave",), "", "Take \t25 days"),
        (("Leave",), "| Region | North |\n| --- | --- |", "| Region | South |"),  # the merged cell repeated
    ]


# --------------------------------------------------------------------------- item 6: expansion


def test_given_a_member_declared_over_the_cap_when_a_docx_is_parsed_then_refused_before_reading() -> None:
    data = docx(para("Hi."), extra=[("word/media/big.bin", bytes(3 * MiB))])
    tracemalloc.start()
    try:
        with pytest.raises(DocumentTooLarge, match="unpack to") as caught:
            parse_document("big.docx", data, limits=ParseLimits(max_unpacked_bytes=2 * MiB))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert caught.value.details["max_unpacked_bytes"] == 2 * MiB
    assert peak < MiB  # nothing was inflated


def test_given_a_member_over_the_compression_ratio_when_parsed_then_refused_as_a_zip_bomb() -> None:
    data = docx(para("Hi."), extra=[("word/media/zeros.bin", bytes(20 * MiB))])

    with pytest.raises(DocumentTooLarge, match=r"expands \d+:1"):
        parse_document("bomb.docx", data)


def test_given_a_header_understating_a_member_when_parsed_then_memory_stays_bounded() -> None:
    node = b"<w:p><w:r><w:t>" + b"a" * (64 * MiB) + b"</w:t></w:r></w:p>"
    data = bytearray(docx(node))
    declared = (1 * MiB).to_bytes(4, "little")
    for signature, size_at, name_at in ((b"PK\x01\x02", 24, 46), (b"PK\x03\x04", 22, 30)):
        at = data.find(signature)
        while at >= 0:
            if data[at + name_at : at + name_at + 17] == b"word/document.xml":
                data[at + size_at : at + size_at + 4] = declared
            at = data.find(signature, at + 4)
    tracemalloc.start()
    try:
        with pytest.raises(UnreadableDocument, match="corrupt"):
            parse_document("liar.docx", bytes(data))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert peak < 16 * MiB  # python-docx's zip read() inflated all 64 MiB before cutting at 1 MiB


def test_given_a_doctype_with_entities_when_a_docx_is_parsed_then_refused() -> None:
    document = (
        f'<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><w:document xmlns:w="{W}">'
        "<w:body><w:p><w:r><w:t>&b;</w:t></w:r></w:p></w:body></w:document>"
    )

    with pytest.raises(UnreadableDocument, match="DOCTYPE"):
        parse_document("entities.docx", docx(b"", document=document.encode()))


@pytest.mark.parametrize(
    ("filename", "data", "error", "fragment"),
    [
        (
            "paths.json",
            b'{"' + b"k" * 100_000 + b'": [' + b"0," * 2000 + b"0]}",
            DocumentTooLarge,
            "extracted text",
        ),
        ("brackets.json", b"[" + b"[]," * 400 + b"[]]", DocumentTooLarge, "JSON objects and arrays"),
        ("wide.csv", b"h\n" + b"ab," * 400_000, UnreadableDocument, "line 2 is longer"),
        (
            "columns.csv",
            b",".join([b"c" * 1000] * 100) + b"\n" + (b"x," * 99 + b"x\n") * 200,
            DocumentTooLarge,
            "extracted text",
        ),
    ],
)
def test_given_structured_data_that_expands_when_parsed_then_refused_while_reading(
    filename: str, data: bytes, error: type[Exception], fragment: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ragline.documents.formats._MAX_JSON_CONTAINERS", 100)
    limits = ParseLimits(max_text_chars=1_000_000)

    with pytest.raises(error, match=fragment):
        parse_document(filename, data, limits=limits)


# ---------------------------------------------------------------------------------------- deadline


class TickingClock:
    """Each reading advances one second: the deadline counts checks, not time."""

    def __init__(self) -> None:
        self.now = 0.0
        self.readings = 0

    def __call__(self) -> float:
        self.readings += 1
        self.now += 1.0
        return self.now


class WhitespaceCounter:
    def __init__(self) -> None:
        self.batches: list[int] = []
        self.longest = 0

    def count_many(self, texts: Sequence[str]) -> list[int]:
        self.batches.append(len(texts))
        self.longest = max([self.longest, *map(len, texts)])
        return [len(text.split()) for text in texts]


def test_given_a_deadline_when_a_long_pdf_is_parsed_then_it_stops_within_a_page_of_it() -> None:
    from tests.unit.documents.test_parsers import make_pdf

    clock = TickingClock()

    with pytest.raises(DocumentDeadlineExceeded) as caught:
        parse_document(
            "long.pdf", make_pdf([[f"Page {i}."] for i in range(200)]), deadline=Deadline(10, clock=clock)
        )

    assert clock.readings <= 14  # a check per page (and per few thousand operators): 200 pages never ran
    assert caught.value.details == {
        "filename": "long.pdf",
        "reason": caught.value.details["reason"],
        "budget_seconds": 10,
    }
    assert "10 s budget" in caught.value.message


@pytest.mark.parametrize("per_node", [1000, 200_000], ids=["balanced tree", "one node of 200k kids"])
def test_given_a_200k_page_pdf_when_parsed_then_refused_for_its_page_count_naming_the_limit(
    per_node: int,
) -> None:
    data = pdf_of_repeated_page(200_000, per_node=per_node)
    limit = DEFAULT_LIMITS.max_pdf_pages

    with cpu_budget(20), pytest.raises(DocumentTooLarge) as caught:
        parse_document("pages.pdf", data)

    assert f"over the limit of {limit:,} pages" in caught.value.message
    assert "corrupt" not in caught.value.message
    if per_node < 100_000:  # the tree's /Count is read, not its pages
        assert "it has 200,000 pages" in caught.value.message


def test_given_a_pdf_at_the_page_limit_when_parsed_then_every_page_is_read() -> None:
    limits = ParseLimits(max_pdf_pages=50)

    doc = parse_document("fifty.pdf", pdf_of_repeated_page(50, per_node=10), limits=limits)

    assert doc.pages == 50


@pytest.mark.parametrize("where", ["page content", "form XObject"])
def test_given_a_flate_bomb_in_a_pdf_when_parsed_then_refused_naming_the_decompression_limit(
    where: str,
) -> None:
    # Given 100 MiB of spaces deflated (~100 KB): past pypdf's 75 MB output limit
    bomb = _deflated_spaces(100)
    data = pdf_document([bomb]) if where == "page content" else pdf_with_form(*bomb)

    with pytest.raises(DocumentTooLarge) as caught:
        parse_document("bomb.pdf", data)

    assert "expands past the decompression limit of 75,000,000 bytes" in caught.value.message
    assert "OCR" not in caught.value.message


def test_given_a_flate_bomb_on_one_page_of_many_when_parsed_then_the_other_pages_are_indexed() -> None:
    data = pdf_document([(b"BT /F1 12 Tf 72 720 Td (Readable page.) Tj ET", b""), _deflated_spaces(100)])

    doc = parse_document("half.pdf", data)

    assert [section.text for section in doc.sections] == ["Readable page."]
    assert doc.pages == 2


def _deflated_spaces(mib: int) -> tuple[bytes, bytes]:
    deflate = zlib.compressobj(6)
    stream = b"".join(deflate.compress(b" " * MiB) for _ in range(mib)) + deflate.flush()
    return stream, b" /Filter /FlateDecode"


def test_given_one_deadline_for_parse_and_chunk_when_chunking_runs_past_it_then_it_stops() -> None:
    clock = TickingClock()
    deadline = Deadline(3, clock=clock)
    doc = parse_document("many.txt", b"One sentence here. " * 100_000, deadline=deadline)

    with pytest.raises(DocumentDeadlineExceeded):
        chunk_document(doc, document_id="d", tokenizer=WhitespaceCounter(), chunk_tokens=3, deadline=deadline)

    assert clock.readings <= 6  # checked per batch and per chunk: ~30k chunks were never built


def test_given_markdown_json_csv_and_html_when_the_deadline_has_passed_then_each_stops() -> None:
    expired = Deadline(-1)
    for filename, data in [
        ("a.md", b"# A\ntext\n" * 10),
        ("a.json", b"[" + b"1," * 5000 + b"1]"),
        ("a.csv", b"h\n" + b"x\n" * 5000),
        ("a.html", b"<p>x</p>" * 10),
        ("a.docx", docx(para("x"))),
    ]:
        with pytest.raises(DocumentDeadlineExceeded):
            parse_document(filename, data, deadline=expired)


# ------------------------------------------------------------------------------ chunker memory


def test_given_millions_of_tiny_sentences_when_chunked_then_the_tokenizer_sees_bounded_batches() -> None:
    counter = WhitespaceCounter()
    doc = ParsedDocument(sections=[Section(text="Go. " * 100_000)], pages=1, content_hash="0" * 64)

    chunks = chunk_document(doc, document_id="d", tokenizer=counter, chunk_tokens=50, overlap_tokens=0)

    assert max(counter.batches) <= chunker.COUNT_BATCH + 4096  # a batch plus at most one more block
    assert sum(counter.batches) == 100_000
    assert len(chunks) == 2000


def test_given_a_sentence_of_megabytes_when_chunked_then_the_tokenizer_never_sees_it_whole() -> None:
    counter = WhitespaceCounter()
    doc = ParsedDocument(sections=[Section(text="word " * 400_000)], pages=1, content_hash="0" * 64)

    chunks = chunk_document(doc, document_id="d", tokenizer=counter, chunk_tokens=200, overlap_tokens=0)

    assert counter.longest <= chunker.MAX_SENTENCE_CHARS
    assert " ".join(c.text for c in chunks).split() == ["word"] * 400_000
